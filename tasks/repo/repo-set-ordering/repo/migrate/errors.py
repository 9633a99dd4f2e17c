"""Errors of the migrate package."""


class MigrationError(Exception):
    """Base class for every migrate error."""


class ManifestError(MigrationError):
    """A manifest that cannot be parsed; ``lineno`` is 1-based."""

    def __init__(self, message: str, lineno: int = 0):
        super().__init__(f"line {lineno}: {message}" if lineno else message)
        self.lineno = lineno


class UnknownMigration(MigrationError, KeyError):
    """A version that no migration has."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown migration"


class CycleError(MigrationError):
    """Dependencies that loop back on themselves."""


class SchemaError(MigrationError):
    """An operation that does not fit the current schema."""
