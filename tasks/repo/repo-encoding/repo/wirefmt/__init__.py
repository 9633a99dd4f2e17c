"""HTTP/1.1 messages: build, serialize and parse."""

from wirefmt.errors import IncompleteMessage, ProtocolError
from wirefmt.headers import Headers
from wirefmt.message import Request, Response
from wirefmt.parser import parse_request, parse_response
from wirefmt.serialize import serialize_request, serialize_response

__all__ = [
    "Headers",
    "IncompleteMessage",
    "ProtocolError",
    "Request",
    "Response",
    "parse_request",
    "parse_response",
    "serialize_request",
    "serialize_response",
]
