import pytest

from svcconf.fields import IntField
from svcconf.loader import load
from svcconf.schema import Schema


def test_duplicate_fields_are_rejected():
    with pytest.raises(ValueError):
        Schema(IntField("workers"), IntField("workers"))


def test_settings_attributes(schema):
    settings = load(schema, {"APP_DATABASE_URL": "postgres://db/app"})
    assert settings.database_url == "postgres://db/app"
    with pytest.raises(AttributeError):
        settings.colour


def test_schema_length_and_order(schema):
    assert len(schema) == 6
    assert [f.name for f in schema][:3] == ["database_url", "workers", "debug"]
