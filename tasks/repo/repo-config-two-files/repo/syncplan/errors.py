"""Exceptions raised by syncplan."""


class SyncPlanError(Exception):
    """Base class for syncplan errors."""


class UnitError(SyncPlanError, ValueError):
    """A duration, size or rate string could not be parsed."""


class ConfigError(SyncPlanError):
    """The configuration file is invalid."""

    def __init__(self, message: str, section: str | None = None):
        super().__init__(f"[{section}] {message}" if section else message)
        self.section = section
