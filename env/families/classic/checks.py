"""Helpers the trusted task tests use (they run in the server, never in the sandbox)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from env.sandbox.runner import RemoteError


@contextmanager
def raises(exc_type: str) -> Iterator[None]:
    """Passes only if the code under test raised an exception of this type name."""
    try:
        yield
    except RemoteError as exc:
        if exc.exc_type != exc_type:
            raise AssertionError(f"expected {exc_type}, but the code raised {exc.exc_type}: {exc.message}") from None
        return
    raise AssertionError(f"expected {exc_type} to be raised, but nothing was raised")
