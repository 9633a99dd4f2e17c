from datetime import timedelta

import pytest

from svcconf.errors import ConfigError
from svcconf.loader import load, unknown_variables

BASE = {"APP_DATABASE_URL": "postgres://db/app"}


def test_values_from_environment(schema):
    env = dict(
        BASE,
        APP_WORKERS="16",
        APP_DEBUG="yes",
        APP_LOG_LEVEL="Warning",
        APP_REQUEST_TIMEOUT="1m30s",
        APP_ALLOWED_HOSTS="shop.example.com, api.example.com",
    )
    settings = load(schema, env)
    assert settings.as_dict() == {
        "database_url": "postgres://db/app",
        "workers": 16,
        "debug": True,
        "log_level": "warning",
        "request_timeout": timedelta(seconds=90),
        "allowed_hosts": ["shop.example.com", "api.example.com"],
    }
    assert settings.source("workers") == "env"


def test_defaults_for_unset_variables(schema):
    settings = load(schema, BASE)
    assert settings.workers == 4
    assert settings.debug is False
    assert settings.request_timeout == timedelta(seconds=30)
    assert settings.allowed_hosts == ["localhost"]
    assert settings.source("workers") == "default"


def test_missing_required_variable(schema):
    with pytest.raises(ConfigError) as excinfo:
        load(schema, {"APP_WORKERS": "2"})
    assert excinfo.value.variable == "APP_DATABASE_URL"
    assert "required" in str(excinfo.value)


def test_custom_prefix(schema):
    settings = load(schema, {"SHOP_DATABASE_URL": "sqlite://", "SHOP_WORKERS": "3", "APP_WORKERS": "9"}, prefix="SHOP_")
    assert (settings.database_url, settings.workers) == ("sqlite://", 3)


def test_unknown_variables(schema):
    env = dict(BASE, APP_WORKER="8", APP_DEBUG="1", HOME="/root")
    assert unknown_variables(schema, env) == ["APP_WORKER"]


@pytest.mark.parametrize(
    "variable, raw",
    [
        ("APP_WORKERS", "four"),
        ("APP_WORKERS", "0"),
        ("APP_DEBUG", "maybe"),
        ("APP_REQUEST_TIMEOUT", "30sec"),
        ("APP_LOG_LEVEL", "verbose"),
    ],
)
def test_invalid_value_is_an_error(schema, variable, raw):
    with pytest.raises(ConfigError) as excinfo:
        load(schema, dict(BASE, **{variable: raw}))
    assert excinfo.value.variable == variable


def test_error_message_explains_the_problem(schema):
    with pytest.raises(ConfigError) as excinfo:
        load(schema, dict(BASE, APP_WORKERS="100"))
    assert str(excinfo.value) == "APP_WORKERS: must be at most 64, got 100"


def test_invalid_required_value_is_not_reported_as_missing(schema):
    with pytest.raises(ConfigError) as excinfo:
        load(schema, {"APP_DATABASE_URL": "   "})
    assert excinfo.value.variable == "APP_DATABASE_URL"
    assert str(excinfo.value) == "APP_DATABASE_URL: must not be empty"
