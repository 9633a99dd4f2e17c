"""Errors raised while reading or writing messages."""


class ProtocolError(ValueError):
    """Bytes that are not a well-formed HTTP/1.1 message."""


class IncompleteMessage(ProtocolError):
    """The data ends before the message does."""
