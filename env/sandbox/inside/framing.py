"""Framing of the child's two pipes: each frame a 4-byte big-endian length and a payload. Requests are ``marshal``
data the trusted parent wrote; replies are JSON text (the parent parses them with size caps, so nothing the
submission controls is ever unmarshalled there)."""

import marshal
import mmap
import os

REQ_FD, RESP_FD = -1, -1  # set by the entry (child.py) or the zygote's pooled child before a run


_INBOX = bytearray()  # read ahead from REQ_FD: a request's length and body come with one read, not two

# Memory held back for the harness: a submission that fills the run's address space (a storm of threads, each with its
# stack) must not leave the harness unable to read its next request or write its reply. Given back at the first
# MemoryError the framing meets, for the rest of the run. (Without it, whether the harness could go on depended on
# the heap the interpreter happened to have free.) An anonymous mapping: address space (what RLIMIT_AS counts) held,
# no page touched, so a run pays neither the time nor the memory of filling it.
_RESERVE = [mmap.mmap(-1, 4 * 1024 * 1024)]


def _roomy(make, *args):
    """``make(*args)``, once more after giving the reserve back if it ran out of memory; only for calls that change
    nothing when they fail that way."""
    try:
        return make(*args)
    except MemoryError:
        if not _RESERVE:
            raise
        _RESERVE.pop().close()
        return make(*args)


def _read_exact(n):
    while len(_INBOX) < n:
        chunk = _roomy(os.read, REQ_FD, max(65536, n - len(_INBOX)))
        if not chunk:
            raise EOFError
        _roomy(_INBOX.extend, chunk)
    data = _roomy(lambda: bytes(_INBOX[:n]))
    del _INBOX[:n]
    return data


def recv():
    size = int.from_bytes(_read_exact(4), "big")
    return _roomy(marshal.loads, _read_exact(size))


def send(text):
    data = _roomy(text.encode, "utf-8", "surrogatepass")
    data = _roomy(lambda: len(data).to_bytes(4, "big") + data)
    while data:
        data = data[os.write(RESP_FD, data) :]
