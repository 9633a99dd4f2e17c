"""Reading a schema's settings out of an environment mapping."""

import os

from svcconf.errors import ConfigError
from svcconf.fields import Field
from svcconf.schema import Schema, Settings


def _resolve(field: Field, environ: dict, prefix: str) -> tuple[object, str]:
    """The value of one field and where it came from (``"env"`` or ``"default"``)."""
    variable = field.env_name(prefix)
    try:
        return field.parse(environ[variable]), "env"
    except (KeyError, ValueError):
        if field.required:
            raise ConfigError(f"{variable} is required but not set", variable=variable) from None
        return field.default, "default"


def load(schema: Schema, environ: dict | None = None, prefix: str = "APP_") -> Settings:
    """Load every field of ``schema`` from ``environ`` (``os.environ`` if omitted).

    Unset variables fall back to the field's default. Raises :class:`ConfigError`
    naming the variable when a required setting is missing or a value is invalid.
    """
    if environ is None:
        environ = dict(os.environ)
    values, sources = {}, {}
    for field in schema:
        values[field.name], sources[field.name] = _resolve(field, environ, prefix)
    return Settings(values, sources)


def unknown_variables(schema: Schema, environ: dict, prefix: str = "APP_") -> list[str]:
    """Variables with the prefix that no field of the schema reads (likely typos)."""
    known = {field.env_name(prefix) for field in schema}
    return sorted(name for name in environ if name.startswith(prefix) and name not in known)
