"""The split verdict's local stand-ins for the project's exception classes, and the errors of a run.
"""

from __future__ import annotations

from typing import Any

from .remote_run import RemoteRun

_LOCAL_ONLY = ("_adbg_", "_pytest", "_fixture")


MAX_STAND_INS = 512  # exception classes rebuilt per run: a hostile chain costs the test process nothing more


class ProjectExit(Exception):
    """The project's code raised SystemExit, KeyboardInterrupt or GeneratorExit."""


class CannotPass(TypeError):
    pass


class ProjectStopped(Exception):
    """The project's process ended (time, CPU or memory limit, or it exited); no call can be answered."""


# Dunders that name the project object's own data (a function's name, attrs' and dataclasses' fields), asked of the
# sandbox; every other dunder is a protocol probe of this process's machinery (pickle, copy, inspect, pytest), answered here.
OBJECT_DUNDERS = frozenset({
    "__name__", "__qualname__", "__wrapped__", "__dataclass_fields__", "__match_args__", "__slots__", "__annotations__",
    "__defaults__", "__kwdefaults__", "__version__", "__all__", "__subclasses__", "__func__",
})  # fmt: skip


def local_only(name: str) -> bool:
    if name in OBJECT_DUNDERS or name.startswith("__attrs_"):
        return False
    return (name.startswith("__") and name.endswith("__")) or name.startswith(_LOCAL_ONLY)


class StandInMeta(type):
    """The class of a project exception's stand-in: what the local class lacks (``ParseException.explain_exception``,
    a class attribute) is the project class's, read in the sandbox."""

    def __getattr__(cls, name: str) -> Any:
        __tracebackhide__ = True
        if not local_only(name):
            for klass in cls.__mro__:
                own = klass.__dict__.get("_adbg_class")
                if own is not None:
                    return own[0].op("getattr", Ref(own[0], own[1]), name)
        raise AttributeError(name)


class StandIn:
    """Mixin of the local stand-ins for the project's exception classes. Constructing one the sandbox named (``raise
    pp.ParseException(s, loc, msg)`` in a test's parse action) constructs the project's exception there: the test holds
    a stand-in of that very object, which the project gets back when the test raises it at it."""

    _adbg_message = ""
    _adbg_remote: RemoteRun | None = None
    _adbg_handle = 0
    _adbg_class: tuple[RemoteRun, int] | None = None  # set on a class the sandbox named: its handle there

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        own = cls.__dict__.get("_adbg_class")
        if own is not None:
            made = own[0].op("call", Ref(own[0], own[1]), *args, **kwargs)
            if isinstance(made, cls):
                return made
        return super().__new__(cls, *args)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.__dict__.get("_adbg_remote") is None:  # made here: as the builtin base would make it
            super().__init__(*args)

    @classmethod
    def _adbg_blank(cls) -> Any:
        """An instance not constructed by anyone (its fields are filled in from the sandbox's object)."""
        return super().__new__(cls)

    def __str__(self) -> str:
        if "_adbg_message" not in self.__dict__:  # one the test made here of a class the sandbox never named
            return super().__str__()
        return self._adbg_message

    def __getattr__(self, name: str) -> Any:
        __tracebackhide__ = True
        remote = self.__dict__.get("_adbg_remote")
        if remote is None or local_only(name):
            raise AttributeError(name)
        return remote.op("getattr", Ref(remote, self._adbg_handle), name)


class Ref:
    """A bare handle, for requests about an exception object."""

    def __init__(self, remote: RemoteRun, number: int):
        self._adbg_remote, self._adbg_handle = remote, number
