"""Migrations and the operations they are made of."""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("create_table", "drop_table", "add_column", "drop_column", "rename_column")


@dataclass(frozen=True)
class Operation:
    """One schema change.

    ``columns`` holds ``(name, type)`` pairs for ``create_table`` and
    ``add_column``; ``rename_column`` uses ``column`` and ``new_name``.
    """

    kind: str
    table: str
    columns: tuple[tuple[str, str], ...] = ()
    column: str = ""
    new_name: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown operation {self.kind!r}")

    def describe(self) -> str:
        cols = " ".join(f"{name}:{kind}" for name, kind in self.columns)
        if self.kind == "rename_column":
            return f"rename_column {self.table} {self.column} {self.new_name}"
        if self.kind == "drop_column":
            return f"drop_column {self.table} {self.column}"
        return f"{self.kind} {self.table} {cols}".rstrip()


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    operations: tuple[Operation, ...] = ()
    depends_on: tuple[int, ...] = field(default=())

    @property
    def label(self) -> str:
        return f"{self.version}_{self.name}"
