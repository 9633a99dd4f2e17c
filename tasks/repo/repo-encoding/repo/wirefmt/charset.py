"""Choosing and applying the character set of a body."""

from __future__ import annotations

import codecs

from wirefmt.headers import split_header_value

DEFAULT_CHARSET = "utf-8"


def normalize_charset(name: str | None, default: str = DEFAULT_CHARSET) -> str:
    """The codec's canonical name; unknown or missing names give ``default``."""
    if not name:
        return default
    try:
        return codecs.lookup(name.strip()).name
    except LookupError:
        return default


def charset_of(content_type: str | None, default: str = DEFAULT_CHARSET) -> str:
    """The charset named by a Content-Type value, or ``default``."""
    if not content_type:
        return default
    _, params = split_header_value(content_type)
    return normalize_charset(params.get("charset"), default)


def with_charset(mime: str, charset: str) -> str:
    """A Content-Type value for ``mime`` carrying ``charset``."""
    return f"{mime}; charset={normalize_charset(charset)}"


def decode_text(body: bytes, charset: str) -> str:
    """Decode a body, dropping a UTF-8 byte order mark if present."""
    if normalize_charset(charset) == "utf-8" and body.startswith(codecs.BOM_UTF8):
        body = body[len(codecs.BOM_UTF8):]
    return body.decode(charset)
