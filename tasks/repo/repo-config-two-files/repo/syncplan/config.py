"""Loading the INI configuration.

Layout::

    [defaults]          ; optional, values inherited by every mirror
    timeout = 60s

    [mirror NAME]       ; one section per upstream
    url = rsync://...
    interval = 15m

Keys: ``url`` (required), ``interval``, ``timeout``, ``offset`` (durations),
``bandwidth`` (a rate such as ``10MB/s``) and ``retries`` (an integer).
"""

from __future__ import annotations

import configparser
from dataclasses import dataclass, field

from syncplan.errors import ConfigError, SyncPlanError
from syncplan.mirror import Mirror
from syncplan.units import parse_duration, parse_rate

BUILTIN_DEFAULTS = {
    "interval": "1h",
    "timeout": "60s",
    "offset": "0s",
    "bandwidth": "10MB/s",
    "retries": "2",
}
KNOWN_KEYS = frozenset(BUILTIN_DEFAULTS) | {"url"}
MIRROR_PREFIX = "mirror "


@dataclass(frozen=True)
class SyncConfig:
    mirrors: dict[str, Mirror] = field(default_factory=dict)

    def names(self) -> list[str]:
        return sorted(self.mirrors)


def _build_mirror(name: str, values: dict[str, str], section: str) -> Mirror:
    unknown = set(values) - KNOWN_KEYS
    if unknown:
        raise ConfigError(f"unknown key {sorted(unknown)[0]!r}", section)
    if not values.get("url"):
        raise ConfigError("missing 'url'", section)
    try:
        return Mirror(
            name=name,
            url=values["url"],
            interval=parse_duration(values["interval"]),
            timeout=parse_duration(values["timeout"]),
            offset=parse_duration(values["offset"]),
            bandwidth=parse_rate(values["bandwidth"]),
            retries=int(values["retries"]),
        )
    except (SyncPlanError, ValueError) as exc:
        raise ConfigError(str(exc), section) from None


def load_config(text: str) -> SyncConfig:
    """Parse configuration text into a SyncConfig."""
    parser = configparser.ConfigParser(interpolation=None, default_section="__none__")
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ConfigError(f"cannot parse configuration: {exc}") from None
    defaults = dict(BUILTIN_DEFAULTS)
    if parser.has_section("defaults"):
        overrides = dict(parser.items("defaults"))
        unknown = set(overrides) - set(BUILTIN_DEFAULTS)
        if unknown:
            raise ConfigError(f"unknown key {sorted(unknown)[0]!r}", "defaults")
        defaults.update(overrides)
    mirrors: dict[str, Mirror] = {}
    for section in parser.sections():
        if section == "defaults":
            continue
        if not section.startswith(MIRROR_PREFIX):
            raise ConfigError("unknown section", section)
        name = section[len(MIRROR_PREFIX):].strip().lower()
        if not name:
            raise ConfigError("mirror section without a name", section)
        if name in mirrors:
            raise ConfigError(f"duplicate mirror {name!r}", section)
        mirrors[name] = _build_mirror(name, {**defaults, **dict(parser.items(section))}, section)
    if not mirrors:
        raise ConfigError("no [mirror ...] sections")
    return SyncConfig(mirrors)
