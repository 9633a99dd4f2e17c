"""An ordered, case-insensitive multi-map of header fields."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from wirefmt.errors import ProtocolError

_FORBIDDEN = set("\r\n\0")


def _check(name: str, value: str) -> None:
    if not name or any(ch in _FORBIDDEN or ch.isspace() or ch == ":" for ch in name):
        raise ProtocolError(f"invalid header name {name!r}")
    if any(ch in _FORBIDDEN for ch in value):
        raise ProtocolError(f"invalid value for header {name!r}")


class Headers:
    """Header fields in their original order; names compare case-insensitively."""

    def __init__(self, fields: Iterable[tuple[str, str]] | dict[str, str] | None = None):
        self._fields: list[tuple[str, str]] = []
        if isinstance(fields, dict):
            fields = fields.items()
        for name, value in fields or ():
            self.add(name, value)

    def add(self, name: str, value: str) -> None:
        value = str(value).strip()
        _check(name, value)
        self._fields.append((name, value))

    def set(self, name: str, value: str) -> None:
        """Replace every field called ``name`` with a single one."""
        self.remove(name)
        self.add(name, value)

    def remove(self, name: str) -> None:
        lowered = name.lower()
        self._fields = [(key, value) for key, value in self._fields if key.lower() != lowered]

    def get(self, name: str, default: str | None = None) -> str | None:
        values = self.get_all(name)
        return ", ".join(values) if values else default

    def get_all(self, name: str) -> list[str]:
        lowered = name.lower()
        return [value for key, value in self._fields if key.lower() == lowered]

    def items(self) -> list[tuple[str, str]]:
        return list(self._fields)

    def copy(self) -> Headers:
        return Headers(self._fields)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.get_all(name))

    def __iter__(self) -> Iterator[str]:
        return iter([key for key, _ in self._fields])

    def __len__(self) -> int:
        return len(self._fields)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Headers):
            return NotImplemented
        return [(k.lower(), v) for k, v in self._fields] == [(k.lower(), v) for k, v in other._fields]

    def __repr__(self) -> str:
        return f"Headers({self._fields!r})"


def split_header_value(value: str) -> tuple[str, dict[str, str]]:
    """``'text/html; charset="utf-8"'`` -> ``('text/html', {'charset': 'utf-8'})``."""
    main, *params = value.split(";")
    parsed: dict[str, str] = {}
    for param in params:
        key, sep, raw = param.partition("=")
        if not sep:
            continue
        raw = raw.strip()
        if len(raw) >= 2 and raw[0] == raw[-1] == '"':
            raw = raw[1:-1]
        parsed[key.strip().lower()] = raw
    return main.strip().lower(), parsed
