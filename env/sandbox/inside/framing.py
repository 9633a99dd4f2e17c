"""Framing of the child's two pipes: each frame a 4-byte big-endian length and a payload. Requests are ``marshal``
data the trusted parent wrote; replies are JSON text (the parent parses them with size caps, so nothing the
submission controls is ever unmarshalled there)."""

import marshal
import os

REQ_FD, RESP_FD = -1, -1  # set by the entry (child.py) or the zygote's pooled child before a run


_INBOX = bytearray()  # read ahead from REQ_FD: a request's length and body come with one read, not two


def _read_exact(n):
    while len(_INBOX) < n:
        chunk = os.read(REQ_FD, max(65536, n - len(_INBOX)))
        if not chunk:
            raise EOFError
        _INBOX.extend(chunk)
    data = bytes(_INBOX[:n])
    del _INBOX[:n]
    return data


def recv():
    size = int.from_bytes(_read_exact(4), "big")
    return marshal.loads(_read_exact(size))


def send(text):
    data = text.encode("utf-8", "surrogatepass")
    data = len(data).to_bytes(4, "big") + data
    while data:
        data = data[os.write(RESP_FD, data) :]
