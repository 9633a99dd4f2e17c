"""A plain-text overview of a configuration, as printed by the ``syncplan`` CLI."""

from __future__ import annotations

from syncplan.config import SyncConfig
from syncplan.schedule import build_schedule, max_concurrency, runs_per_day
from syncplan.transfer import plan_transfer


def overview(config: SyncConfig, sizes: dict[str, int] | None = None, horizon: float = 86400) -> str:
    """One line per mirror, optional transfer verdicts for ``sizes``, then totals."""
    sizes = sizes or {}
    lines = []
    for name in config.names():
        mirror = config.mirrors[name]
        line = f"{mirror.describe()}; {runs_per_day(mirror)} runs/day"
        if name in sizes:
            line += f"; {plan_transfer(mirror, sizes[name]).summary()}"
        lines.append(line)
    runs = build_schedule(config.mirrors.values(), horizon)
    lines.append(f"{len(runs)} runs in horizon, at most {max_concurrency(runs)} at once")
    return "\n".join(lines)
