"""``Transfer-Encoding: chunked`` framing (RFC 9112, section 7.1)."""

from __future__ import annotations

from collections.abc import Iterable

from wirefmt.errors import IncompleteMessage, ProtocolError

CRLF = b"\r\n"
LAST_CHUNK = b"0\r\n\r\n"


def frame_chunk(data: str | bytes, charset: str = "utf-8") -> bytes:
    """One chunk: its size in hex, CRLF, the data, CRLF.

    Text is encoded with ``charset``; bytes are sent as they are.
    """
    payload = data.encode(charset) if isinstance(data, str) else data
    return f"{len(data):x}".encode("ascii") + CRLF + payload + CRLF


def encode_chunked(pieces: Iterable[str | bytes], charset: str = "utf-8") -> bytes:
    """Frame every non-empty piece, then the terminating zero-size chunk."""
    out = bytearray()
    for piece in pieces:
        if piece:
            out += frame_chunk(piece, charset)
    out += LAST_CHUNK
    return bytes(out)


def _read_line(data: bytes, pos: int) -> tuple[bytes, int]:
    end = data.find(CRLF, pos)
    if end < 0:
        raise IncompleteMessage("chunked body ends inside a size line")
    return data[pos:end], end + 2


def decode_chunked(data: bytes, pos: int = 0) -> tuple[bytes, int]:
    """Read a chunked body starting at ``pos``; return the body and the end offset."""
    body = bytearray()
    while True:
        line, pos = _read_line(data, pos)
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise ProtocolError(f"bad chunk size {size_text!r}") from None
        if size == 0:
            break
        if pos + size + 2 > len(data):
            raise IncompleteMessage("chunked body ends inside a chunk")
        body += data[pos:pos + size]
        pos += size
        if data[pos:pos + 2] != CRLF:
            raise ProtocolError("chunk data is not followed by CRLF")
        pos += 2
    # Trailer fields are allowed but ignored; skip to the empty line.
    while True:
        line, pos = _read_line(data, pos)
        if not line:
            return bytes(body), pos
