"""Human-readable documentation of a schema's environment variables."""

from svcconf.fields import ChoiceField
from svcconf.schema import Schema


def describe(schema: Schema, prefix: str = "APP_") -> str:
    """One line per variable: name, kind, default (or ``required``) and help text."""
    lines = []
    for field in schema:
        kind = field.kind
        if isinstance(field, ChoiceField):
            kind = f"one of {'|'.join(field.choices)}"
        default = "required" if field.required else f"default {field.show(field.default)}"
        line = f"{field.env_name(prefix)} ({kind}, {default})"
        if field.help:
            line += f": {field.help}"
        lines.append(line)
    return "\n".join(lines)
