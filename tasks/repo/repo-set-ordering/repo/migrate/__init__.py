"""Plan and apply schema migrations."""

from migrate.errors import CycleError, ManifestError, MigrationError, SchemaError, UnknownMigration
from migrate.graph import MigrationGraph
from migrate.manifest import parse_manifest
from migrate.model import Migration, Operation
from migrate.runner import Runner
from migrate.schema import Schema

__all__ = [
    "CycleError",
    "ManifestError",
    "Migration",
    "MigrationError",
    "MigrationGraph",
    "Operation",
    "Runner",
    "Schema",
    "SchemaError",
    "UnknownMigration",
    "parse_manifest",
]
