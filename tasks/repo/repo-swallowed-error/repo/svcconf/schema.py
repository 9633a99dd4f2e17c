"""A schema groups fields; settings are the loaded values."""

from svcconf.fields import Field


class Schema:
    def __init__(self, *fields: Field) -> None:
        names = [f.name for f in fields]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate setting(s): {', '.join(duplicates)}")
        self.fields: dict[str, Field] = {f.name: f for f in fields}

    def __iter__(self):
        return iter(self.fields.values())

    def __len__(self) -> int:
        return len(self.fields)


class Settings:
    """Loaded settings; read them as attributes or with ``as_dict()``."""

    def __init__(self, values: dict, sources: dict[str, str]) -> None:
        self._values = dict(values)
        self._sources = dict(sources)

    def __getattr__(self, name: str):
        values = self.__dict__.get("_values", {})
        if name not in values:
            raise AttributeError(f"no setting named {name!r}")
        return values[name]

    def source(self, name: str) -> str:
        """``"env"`` if the value came from the environment, ``"default"`` otherwise."""
        return self._sources[name]

    def as_dict(self) -> dict:
        return dict(self._values)
