"""What a trusted test sees of the submitted module: proxies that turn calls into sandbox requests.

    def test_finds_last_element(sol):                  # `sol` is a Solution
        assert sol.binary_search([1, 3, 5, 7, 9], 9) == 4

Each call crosses to the sandbox child and comes back as plain data, a :class:`RemoteObject`
(compares by identity) or a raised :class:`~env.sandbox.runner.RemoteError`. The proxy
remembers the last call so a failing assertion can say what the code returned.
"""

from __future__ import annotations

from typing import Any

from env.sandbox.runner import RemoteHandle, SandboxRun

_MAX_SHOWN = 120


def short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


class CallLog:
    """The most recent remote call and its outcome, for failure messages."""

    def __init__(self) -> None:
        self.last = ""
        self.calls = 0  # how many calls reached the submitted code (a test with none proves nothing)

    def record(self, text: str) -> None:
        self.last = text


class RemoteObject:
    """A value that lives in the sandbox; attribute access yields callable methods."""

    def __init__(self, run: SandboxRun, handle: RemoteHandle, log: CallLog, label: str):
        self._run, self._handle, self._log, self._label = run, handle, log, label

    def __getattr__(self, name: str) -> RemoteCallable:
        if name.startswith("_"):
            raise AttributeError(name)
        return RemoteCallable(self._run, self._log, name, f"{self._label}.{name}", self._handle)

    def __repr__(self) -> str:
        return f"<{self._handle.type_name} object>"


def _wrap(run: SandboxRun, value: Any, log: CallLog, label: str) -> Any:
    if isinstance(value, RemoteHandle):
        return RemoteObject(run, value, log, label)
    if isinstance(value, list):
        return [_wrap(run, v, log, label) for v in value]
    if isinstance(value, dict):
        return {k: _wrap(run, v, log, label) for k, v in value.items()}
    return value


_PLAIN = frozenset({int, float, str, bool, type(None)})  # values that go to the child as they are


def _unwrap(value: Any) -> Any:
    if isinstance(value, RemoteObject):
        return value._handle
    if isinstance(value, (list, tuple)):
        if all(type(v) in _PLAIN for v in value):  # the common argument, a list of numbers or words: one pass, no calls
            return list(value)
        return [_unwrap(v) for v in value]
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


class RemoteCallable:
    def __init__(self, run: SandboxRun, log: CallLog, name: str, label: str, handle: RemoteHandle | None = None):
        self._run, self._log, self._name, self._label, self._handle = run, log, name, label, handle

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        shown = ", ".join([short_repr(a) for a in args] + [f"{k}={short_repr(v)}" for k, v in kwargs.items()])
        call = f"{self._label}({shown})"
        self._log.record(f"{call} was called")
        self._log.calls += 1
        value = self._run.call(self._name, *_unwrap(list(args)), handle=self._handle, **_unwrap(kwargs))
        wrapped = _wrap(self._run, value, self._log, "obj")
        self._log.record(f"{call} returned {short_repr(wrapped)}")
        return wrapped


class Solution:
    """The submitted module as the tests see it."""

    def __init__(self, run: SandboxRun, module: str):
        self._run, self._module, self._log = run, module, CallLog()

    def __getattr__(self, name: str) -> RemoteCallable:
        if name.startswith("_"):
            raise AttributeError(name)
        return RemoteCallable(self._run, self._log, name, name)

    @property
    def last_call(self) -> str:
        return self._log.last

    @property
    def calls(self) -> int:
        return self._log.calls
