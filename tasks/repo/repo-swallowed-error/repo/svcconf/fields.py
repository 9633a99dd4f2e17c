"""Setting declarations. Each field turns the raw environment string into a value.

``parse`` raises ``ValueError`` with a human-readable reason when the raw
text is not acceptable.
"""

from datetime import timedelta

from svcconf.durations import format_duration, parse_duration

_MISSING = object()


class Field:
    kind = "string"

    def __init__(self, name: str, default=_MISSING, help: str = "") -> None:
        self.name = name
        self.help = help
        self._default = default

    @property
    def required(self) -> bool:
        return self._default is _MISSING

    @property
    def default(self):
        if self.required:
            raise LookupError(f"{self.name} has no default")
        if isinstance(self._default, str):
            return self.parse(self._default)
        return self._default

    def env_name(self, prefix: str) -> str:
        return f"{prefix}{self.name.upper()}"

    def parse(self, raw: str):
        return raw

    def show(self, value) -> str:
        return str(value)


class StrField(Field):
    def parse(self, raw: str) -> str:
        value = raw.strip()
        if not value:
            raise ValueError("must not be empty")
        return value


class IntField(Field):
    kind = "integer"

    def __init__(self, name: str, default=_MISSING, help: str = "", minimum: int | None = None, maximum: int | None = None):
        super().__init__(name, default, help)
        self.minimum = minimum
        self.maximum = maximum

    def parse(self, raw: str) -> int:
        try:
            value = int(raw.strip().replace("_", ""))
        except ValueError:
            raise ValueError(f"{raw!r} is not a whole number") from None
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"must be at least {self.minimum}, got {value}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"must be at most {self.maximum}, got {value}")
        return value


class BoolField(Field):
    kind = "boolean"
    TRUE = frozenset({"1", "true", "yes", "on"})
    FALSE = frozenset({"0", "false", "no", "off"})

    def parse(self, raw: str) -> bool:
        word = raw.strip().lower()
        if word in self.TRUE:
            return True
        if word in self.FALSE:
            return False
        raise ValueError(f"{raw!r} is not a boolean (use true/false, yes/no, on/off, 1/0)")

    def show(self, value) -> str:
        return "true" if value else "false"


class ChoiceField(Field):
    kind = "choice"

    def __init__(self, name: str, choices: list[str], default=_MISSING, help: str = ""):
        super().__init__(name, default, help)
        self.choices = list(choices)

    def parse(self, raw: str) -> str:
        value = raw.strip().lower()
        if value not in self.choices:
            raise ValueError(f"{raw!r} is not one of {', '.join(self.choices)}")
        return value


class DurationField(Field):
    kind = "duration"

    def parse(self, raw: str) -> timedelta:
        return parse_duration(raw)

    def show(self, value) -> str:
        return format_duration(value)


class ListField(Field):
    """A separator-delimited list; every item is parsed by ``item`` (strings by default)."""

    kind = "list"

    def __init__(self, name: str, item: Field | None = None, default=_MISSING, help: str = "", separator: str = ","):
        super().__init__(name, default, help)
        self.item = item or StrField(name)
        self.separator = separator

    def parse(self, raw: str) -> list:
        parts = [p for p in (s.strip() for s in raw.split(self.separator)) if p]
        values = []
        for index, part in enumerate(parts):
            try:
                values.append(self.item.parse(part))
            except ValueError as exc:
                raise ValueError(f"item {index + 1}: {exc}") from None
        return values

    def show(self, value) -> str:
        return self.separator.join(self.item.show(v) for v in value)
