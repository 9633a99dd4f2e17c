"""The error raised for unusable configuration."""


class ConfigError(Exception):
    """The configuration cannot be used; ``variable`` names the culprit."""

    def __init__(self, message: str, variable: str | None = None) -> None:
        super().__init__(message)
        self.variable = variable
