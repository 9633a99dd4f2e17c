"""svcconf: typed service settings from environment variables."""

from svcconf.describe import describe
from svcconf.errors import ConfigError
from svcconf.fields import BoolField, ChoiceField, DurationField, Field, IntField, ListField, StrField
from svcconf.loader import load
from svcconf.schema import Schema, Settings

__all__ = [
    "BoolField",
    "ChoiceField",
    "ConfigError",
    "DurationField",
    "Field",
    "IntField",
    "ListField",
    "Schema",
    "Settings",
    "StrField",
    "describe",
    "load",
]
