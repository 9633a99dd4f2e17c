"""Reading migration manifests.

A manifest is a list of sections; each starts with ``[VERSION name]`` and
holds an optional ``depends: V1, V2`` line followed by one operation a line::

    create_table TABLE col:type ...
    add_column TABLE col:type ...
    drop_column TABLE col
    rename_column TABLE old new
    drop_table TABLE
"""

from __future__ import annotations

import re

from migrate.errors import ManifestError
from migrate.model import Migration, Operation

_HEADER_RE = re.compile(r"^\[(\d+)\s+([A-Za-z_][A-Za-z0-9_]*)\]$")
_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _columns(tokens: list[str], lineno: int) -> tuple[tuple[str, str], ...]:
    columns = []
    for token in tokens:
        name, sep, kind = token.partition(":")
        if not sep or not _IDENT_RE.match(name) or not kind:
            raise ManifestError(f"bad column spec {token!r}", lineno)
        columns.append((name, kind))
    if not columns:
        raise ManifestError("expected at least one column", lineno)
    return tuple(columns)


def parse_operation(line: str, lineno: int = 0) -> Operation:
    kind, *args = line.split()
    if not args or not _IDENT_RE.match(args[0]):
        raise ManifestError(f"{kind} needs a table name", lineno)
    table, rest = args[0], args[1:]
    if kind in ("create_table", "add_column"):
        return Operation(kind, table, columns=_columns(rest, lineno))
    if kind == "drop_table" and not rest:
        return Operation(kind, table)
    if kind == "drop_column" and len(rest) == 1:
        return Operation(kind, table, column=rest[0])
    if kind == "rename_column" and len(rest) == 2:
        return Operation(kind, table, column=rest[0], new_name=rest[1])
    raise ManifestError(f"cannot read operation {line!r}", lineno)


def parse_manifest(text: str) -> list[Migration]:
    """The migrations of a manifest, in the order they are written."""
    migrations: list[Migration] = []
    current: dict | None = None

    def close() -> None:
        if current is not None:
            migrations.append(Migration(current["version"], current["name"], tuple(current["ops"]), current["deps"]))

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        header = _HEADER_RE.match(line)
        if header:
            close()
            current = {"version": int(header.group(1)), "name": header.group(2), "ops": [], "deps": ()}
            continue
        if current is None:
            raise ManifestError("operation outside of a migration section", lineno)
        if line.startswith("depends:"):
            if current["ops"] or current["deps"]:
                raise ManifestError("depends must come first and only once", lineno)
            try:
                current["deps"] = tuple(int(part) for part in line[len("depends:"):].split(",") if part.strip())
            except ValueError:
                raise ManifestError(f"bad depends line {line!r}", lineno) from None
            continue
        try:
            current["ops"].append(parse_operation(line, lineno))
        except ValueError as exc:
            raise ManifestError(str(exc), lineno) from None
    close()
    return migrations
