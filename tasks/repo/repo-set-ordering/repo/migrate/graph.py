"""The dependency graph of migrations and the upgrade planner."""

from __future__ import annotations

from collections.abc import Iterable

from migrate.errors import CycleError, MigrationError, UnknownMigration
from migrate.model import Migration


class MigrationGraph:
    """All known migrations keyed by version."""

    def __init__(self, migrations: Iterable[Migration] = ()):
        self._migrations: dict[int, Migration] = {}
        for migration in migrations:
            self.add(migration)

    def add(self, migration: Migration) -> None:
        if migration.version in self._migrations:
            raise MigrationError(f"duplicate migration version {migration.version}")
        self._migrations[migration.version] = migration

    def get(self, version: int) -> Migration:
        try:
            return self._migrations[version]
        except KeyError:
            raise UnknownMigration(f"no migration with version {version}") from None

    def __contains__(self, version: object) -> bool:
        return version in self._migrations

    def __len__(self) -> int:
        return len(self._migrations)

    def versions(self) -> list[int]:
        return sorted(self._migrations)

    def check(self) -> None:
        """Every dependency must exist."""
        for migration in self._migrations.values():
            for dependency in migration.depends_on:
                if dependency not in self._migrations:
                    raise UnknownMigration(f"{migration.label} depends on unknown version {dependency}")

    def ancestors(self, version: int) -> set[int]:
        """``version`` and everything it needs, directly or not."""
        seen: set[int] = set()
        stack = [version]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            stack.extend(self.get(current).depends_on)
        return seen

    def plan(self, applied: Iterable[int] = (), target: int | None = None) -> list[int]:
        """Versions to apply, in order, to reach ``target`` (default: everything).

        Each migration comes after its dependencies; apart from that,
        migrations are applied in ascending version order.
        """
        self.check()
        done = set(applied)
        unknown = done - set(self._migrations)
        if unknown:
            raise UnknownMigration(f"applied versions not in the graph: {sorted(unknown)}")
        wanted = set(self._migrations) if target is None else self.ancestors(target)
        pending = wanted - done

        order: list[int] = []
        finished: set[int] = set()
        active: list[int] = []

        def visit(version: int) -> None:
            if version in finished or version in done:
                return
            if version in active:
                loop = active[active.index(version):] + [version]
                raise CycleError("dependency cycle: " + " -> ".join(map(str, loop)))
            active.append(version)
            for dependency in sorted(self.get(version).depends_on):
                visit(dependency)
            active.pop()
            finished.add(version)
            order.append(version)

        for version in pending:
            visit(version)
        return order
