"""The Mirror record shared by the scheduler, the transfer planner and reports."""

from __future__ import annotations

from dataclasses import dataclass

from syncplan.units import format_duration


@dataclass(frozen=True)
class Mirror:
    """One upstream to synchronise.

    ``interval``, ``timeout`` and ``offset`` are in seconds; ``bandwidth`` is
    in bytes per second; ``retries`` is how many extra attempts a run may make
    after the first one times out.
    """

    name: str
    url: str
    interval: float
    timeout: float
    bandwidth: float
    retries: int = 2
    offset: float = 0.0

    def __post_init__(self) -> None:
        if self.interval <= 0:
            raise ValueError(f"{self.name}: interval must be positive")
        if self.timeout <= 0:
            raise ValueError(f"{self.name}: timeout must be positive")
        if self.bandwidth <= 0:
            raise ValueError(f"{self.name}: bandwidth must be positive")
        if self.retries < 0:
            raise ValueError(f"{self.name}: retries cannot be negative")
        if self.offset < 0:
            raise ValueError(f"{self.name}: offset cannot be negative")

    def describe(self) -> str:
        return (
            f"{self.name}: every {format_duration(self.interval)}, "
            f"timeout {format_duration(self.timeout)}, "
            f"{self.bandwidth / 1e6:g} MB/s, {self.retries} retries"
        )
