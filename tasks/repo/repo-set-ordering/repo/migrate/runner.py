"""Applying planned migrations to a schema."""

from __future__ import annotations

from collections.abc import Iterable

from migrate.errors import SchemaError
from migrate.graph import MigrationGraph
from migrate.schema import Schema


class Runner:
    """Applies migrations of ``graph`` to ``schema`` and remembers what ran."""

    def __init__(self, graph: MigrationGraph, schema: Schema | None = None, applied: Iterable[int] = ()):
        self.graph = graph
        self.schema = schema if schema is not None else Schema()
        self.history: list[int] = list(applied)

    @property
    def applied(self) -> set[int]:
        return set(self.history)

    def pending(self) -> list[int]:
        """Versions not applied yet, in version order."""
        return [version for version in self.graph.versions() if version not in self.applied]

    def upgrade(self, target: int | None = None) -> list[int]:
        """Apply everything needed for ``target`` (default: all); returns the versions applied."""
        ran = []
        for version in self.graph.plan(self.applied, target):
            migration = self.graph.get(version)
            for op in migration.operations:
                try:
                    self.schema.apply(op)
                except SchemaError as exc:
                    raise SchemaError(f"{migration.label}: {exc}") from None
            self.history.append(version)
            ran.append(version)
        return ran

    def status(self) -> list[str]:
        """``[x] label`` for applied and ``[ ] label`` for pending migrations."""
        return [
            f"[{'x' if version in self.applied else ' '}] {self.graph.get(version).label}"
            for version in self.graph.versions()
        ]
