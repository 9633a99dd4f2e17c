"""Turning messages into bytes for the wire."""

from __future__ import annotations

from wirefmt.chunked import encode_chunked
from wirefmt.headers import Headers
from wirefmt.message import Message, Request, Response

HEADER_ENCODING = "iso-8859-1"


def _head(start_line: str, headers: Headers) -> bytes:
    lines = [start_line] + [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode(HEADER_ENCODING)


def _framed(message: Message, chunk_size: int | None) -> tuple[Headers, bytes]:
    headers = message.headers.copy()
    headers.remove("Content-Length")
    headers.remove("Transfer-Encoding")
    if chunk_size is None:
        body = message.body
        headers.set("Content-Length", str(len(body)))
        return headers, body
    headers.set("Transfer-Encoding", "chunked")
    return headers, encode_chunked(message.iter_body(chunk_size), message.charset)


def serialize_response(response: Response, chunk_size: int | None = None) -> bytes:
    """Bytes of ``response``; with ``chunk_size`` the body is sent chunked."""
    headers, body = _framed(response, chunk_size)
    return _head(f"HTTP/1.1 {response.status} {response.reason}".rstrip(), headers) + body


def serialize_request(request: Request, chunk_size: int | None = None) -> bytes:
    headers, body = _framed(request, chunk_size)
    if request.method in {"GET", "HEAD"} and not request.body and chunk_size is None:
        headers.remove("Content-Length")
    return _head(f"{request.method} {request.target} HTTP/1.1", headers) + body
