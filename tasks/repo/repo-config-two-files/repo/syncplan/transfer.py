"""Can a transfer of a given size finish within a mirror's timeout budget?

Transfers move in fixed-size chunks. An attempt that hits the timeout is
aborted; the chunks completed so far are kept and the next attempt resumes
from there. A run may use ``1 + retries`` attempts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from syncplan.mirror import Mirror
from syncplan.units import parse_size

DEFAULT_CHUNK = parse_size("8MiB")


@dataclass(frozen=True)
class TransferPlan:
    mirror: str
    size: int
    seconds: float
    chunks: int
    chunks_per_attempt: int
    attempts: int | None
    fits: bool

    def summary(self) -> str:
        if self.attempts is None:
            return f"{self.mirror}: a single chunk cannot finish before the timeout"
        verdict = "fits" if self.fits else "does not fit"
        return f"{self.mirror}: {self.chunks} chunks in {self.attempts} attempt(s), {verdict}"


def plan_transfer(mirror: Mirror, size: int, chunk_size: int = DEFAULT_CHUNK) -> TransferPlan:
    """Plan moving ``size`` bytes from ``mirror``."""
    if size < 0:
        raise ValueError("size cannot be negative")
    if chunk_size <= 0:
        raise ValueError("chunk size must be positive")
    chunks = math.ceil(size / chunk_size)
    chunk_ms = chunk_size * 1000 / mirror.bandwidth
    per_attempt = int(mirror.timeout // chunk_ms)
    if chunks == 0:
        attempts: int | None = 0
    elif per_attempt == 0:
        attempts = None
    else:
        attempts = math.ceil(chunks / per_attempt)
    return TransferPlan(
        mirror=mirror.name,
        size=size,
        seconds=round(size / mirror.bandwidth, 3),
        chunks=chunks,
        chunks_per_attempt=per_attempt,
        attempts=attempts,
        fits=attempts is not None and attempts <= 1 + mirror.retries,
    )
