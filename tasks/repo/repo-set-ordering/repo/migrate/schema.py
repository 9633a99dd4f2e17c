"""An in-memory model of a database schema."""

from __future__ import annotations

from migrate.errors import SchemaError
from migrate.model import Operation


class Schema:
    """Tables and their columns, both kept in creation order."""

    def __init__(self) -> None:
        self._tables: dict[str, list[tuple[str, str]]] = {}

    def tables(self) -> list[str]:
        return list(self._tables)

    def columns(self, table: str) -> list[tuple[str, str]]:
        if table not in self._tables:
            raise SchemaError(f"table {table!r} does not exist")
        return list(self._tables[table])

    def _column_names(self, table: str) -> list[str]:
        return [name for name, _ in self.columns(table)]

    def apply(self, op: Operation) -> None:
        if op.kind == "create_table":
            if op.table in self._tables:
                raise SchemaError(f"table {op.table!r} already exists")
            self._tables[op.table] = list(op.columns)
        elif op.kind == "drop_table":
            self.columns(op.table)
            del self._tables[op.table]
        elif op.kind == "add_column":
            names = self._column_names(op.table)
            for name, kind in op.columns:
                if name in names:
                    raise SchemaError(f"column {op.table}.{name} already exists")
                self._tables[op.table].append((name, kind))
                names.append(name)
        elif op.kind == "drop_column":
            if op.column not in self._column_names(op.table):
                raise SchemaError(f"column {op.table}.{op.column} does not exist")
            self._tables[op.table] = [col for col in self._tables[op.table] if col[0] != op.column]
        elif op.kind == "rename_column":
            names = self._column_names(op.table)
            if op.column not in names:
                raise SchemaError(f"column {op.table}.{op.column} does not exist")
            if op.new_name in names:
                raise SchemaError(f"column {op.table}.{op.new_name} already exists")
            self._tables[op.table] = [
                (op.new_name if name == op.column else name, kind) for name, kind in self._tables[op.table]
            ]

    def describe(self) -> str:
        """One line per table: ``users(id int, name text)``; tables sorted by name."""
        lines = []
        for table in sorted(self._tables):
            cols = ", ".join(f"{name} {kind}" for name, kind in self._tables[table])
            lines.append(f"{table}({cols})")
        return "\n".join(lines)
