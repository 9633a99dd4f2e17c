"""Parsing bytes into messages."""

from __future__ import annotations

from wirefmt.chunked import decode_chunked
from wirefmt.errors import IncompleteMessage, ProtocolError
from wirefmt.headers import Headers
from wirefmt.message import Request, Response

HEADER_ENCODING = "iso-8859-1"


def _split_head(data: bytes) -> tuple[str, Headers, int]:
    end = data.find(b"\r\n\r\n")
    if end < 0:
        raise IncompleteMessage("header section is not terminated")
    lines = data[:end].decode(HEADER_ENCODING).split("\r\n")
    headers = Headers()
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise ProtocolError(f"malformed header line {line!r}")
        headers.add(name, value)
    return lines[0], headers, end + 4


def _read_body(data: bytes, headers: Headers, pos: int) -> bytes:
    encoding = (headers.get("Transfer-Encoding") or "").lower()
    if encoding:
        if encoding != "chunked":
            raise ProtocolError(f"unsupported transfer encoding {encoding!r}")
        body, end = decode_chunked(data, pos)
    else:
        length_text = headers.get("Content-Length", "0")
        if not length_text.isdigit():
            raise ProtocolError(f"bad Content-Length {length_text!r}")
        end = pos + int(length_text)
        if end > len(data):
            raise IncompleteMessage("body is shorter than Content-Length")
        body = data[pos:end]
    if end != len(data):
        raise ProtocolError(f"{len(data) - end} unexpected bytes after the message")
    return body


def parse_response(data: bytes) -> Response:
    start, headers, pos = _split_head(data)
    version, _, rest = start.partition(" ")
    if version != "HTTP/1.1":
        raise ProtocolError(f"unsupported version in {start!r}")
    code, _, reason = rest.partition(" ")
    if not (len(code) == 3 and code.isdigit()):
        raise ProtocolError(f"bad status line {start!r}")
    body = _read_body(data, headers, pos)
    headers.remove("Transfer-Encoding")
    return Response(int(code), headers, body, reason=reason)


def parse_request(data: bytes) -> Request:
    start, headers, pos = _split_head(data)
    parts = start.split(" ")
    if len(parts) != 3 or parts[2] != "HTTP/1.1":
        raise ProtocolError(f"bad request line {start!r}")
    body = _read_body(data, headers, pos)
    headers.remove("Transfer-Encoding")
    return Request(parts[0], parts[1], headers, body)
