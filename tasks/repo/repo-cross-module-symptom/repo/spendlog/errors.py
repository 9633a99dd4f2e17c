"""Exceptions raised by spendlog."""


class SpendlogError(Exception):
    """Base class for every error spendlog raises on purpose."""


class StatementError(SpendlogError, ValueError):
    """A bank statement could not be read.

    ``line`` is the 1-based line number of the offending row in the CSV text,
    or ``None`` when the problem is not tied to a single row.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        if line is not None:
            message = f"line {line}: {message}"
        super().__init__(message)
