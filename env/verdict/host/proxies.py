"""The proxies of project objects in the trusted test process: objects, classes, containers, time zones and modules, each
operation on them one request to the sandbox (``conversation.Remote``).
"""

from __future__ import annotations

import copy
import datetime as dt
import operator
import os
import sys
import types
from collections.abc import Callable
from typing import Any

from .remote_run import RemoteRun
from .sites import compare_site, feeds_consumer, method_call
from .stand_ins import OBJECT_DUNDERS, CannotPass, Ref, StandIn, local_only


class MethodCall:
    """``target.name`` that the caller's very next step calls (``method_call``): the attribute read and the call made
    in one request ("callattr"), in the same order and thread as two would make them; it is never seen otherwise."""

    __slots__ = ("remote", "target", "name")

    def __init__(self, remote: RemoteRun, target: Any, name: str):
        self.remote, self.target, self.name = remote, target, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        caller = sys._getframe(1)
        feeding = feeds_consumer(caller)
        if feeding is not None:  # ``list(obj.method(x))``: the call and the consumer's first pull in one request
            return self.remote.call_feeding(feeding, caller, self.target, self.name, args, kwargs)
        return self.remote.op("callattr", self.target, self.name, *args, **kwargs)


def handle_of(value: Any) -> tuple[RemoteRun, int] | None:
    kind = type(value)  # the real type: a Mock(spec=proxy) claims the proxy's __class__ and is no proxy
    if issubclass(kind, (RemoteObject, Ref, RemoteModule, RemoteList, RemoteDict, RemoteSet)):
        return value._adbg_remote, value._adbg_handle
    if issubclass(kind, ClassProxy):  # a project class: the local class standing for it holds its handle
        return type.__getattribute__(value, "_adbg_proxy")
    if issubclass(kind, StandIn) and value.__dict__.get("_adbg_remote") is not None:
        return value._adbg_remote, value._adbg_handle
    return None


def _binary(name: str):
    def forward(self: RemoteObject, other: Any) -> Any:
        __tracebackhide__ = True
        try:
            return self._adbg_remote.op(name, self, other)
        except CannotPass:
            return NotImplemented

    return forward


def _reflected(name: str):
    def forward(self: RemoteObject, other: Any) -> Any:
        __tracebackhide__ = True
        try:
            return self._adbg_remote.op("rop", name, self, other)
        except CannotPass:
            return NotImplemented

    return forward


def _unary(name: str):
    def forward(self: RemoteObject) -> Any:
        __tracebackhide__ = True
        return self._adbg_remote.op(name, self)

    return forward


class RemoteObject:
    """Any project object: every operation on it runs in the sandbox. Its type() is the local class standing for its
    project class (``ClassProxy``), a subclass of this one: ``type(obj) is Point`` as in process."""

    # weakly referable, as most objects are
    __slots__ = ("_adbg_remote", "_adbg_handle", "_adbg_type", "_adbg_generator", "__weakref__")

    def __init__(self, remote: RemoteRun, number: int, type_name: str, generator: bool = False):
        object.__setattr__(self, "_adbg_remote", remote)
        object.__setattr__(self, "_adbg_handle", number)
        object.__setattr__(self, "_adbg_type", type_name)
        # a generator there (the handle's "g": 1, see child.py's _serve_repo for the wire): iter() is itself, len() fails
        object.__setattr__(self, "_adbg_generator", generator)

    def __getattr__(self, name: str) -> Any:
        __tracebackhide__ = True
        if local_only(name):
            raise AttributeError(name)
        if method_call(sys._getframe(1), name):
            return MethodCall(self._adbg_remote, self, name)
        return self._adbg_remote.op("getattr", self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        __tracebackhide__ = True
        remote = self._adbg_remote
        remote.op("setattr", self, name, value)
        if name == "__class__":  # the test changed the project object's class: its proxy's type() follows
            remote.retype(self, remote.op("call", type, self))

    def __delattr__(self, name: str) -> None:
        __tracebackhide__ = True
        self._adbg_remote.op("delattr", self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        caller = sys._getframe(1)
        feeding = feeds_consumer(caller)
        if feeding is not None:  # ``set(function(x))``: the call and the consumer's first pull in one request
            return self._adbg_remote.call_feeding(feeding, caller, self, None, args, kwargs)
        return self._adbg_remote.op("call", self, *args, **kwargs)

    def __dir__(self) -> Any:  # the project object's attributes (pyparsing's ParseResults names its results)
        __tracebackhide__ = True
        return [str(n) for n in self._adbg_remote.op("dir", self)]

    @property
    def __dict__(self) -> Any:  # type: ignore[override]  # vars(obj): the project object's namespace, in the sandbox
        __tracebackhide__ = True
        return self._adbg_remote.op("getattr", self, "__dict__")

    def __reduce_ex__(self, protocol: Any) -> Any:
        # pickle.dumps of a project object: the project pickles it and a load makes a new one there; the
        # trusted side only ever holds the project's bytes, which it never unpickles itself.
        __tracebackhide__ = True
        data = self._adbg_remote.op("pickle", self, protocol if isinstance(protocol, int) else 4)
        return (_from_sandbox_pickle, (data,))

    def __copy__(self) -> Any:  # copy.copy / deepcopy: made in the sandbox, as the project's class makes it there
        __tracebackhide__ = True
        return self._adbg_remote.op("copy", self)

    def __deepcopy__(self, memo: Any) -> Any:
        __tracebackhide__ = True
        return self._adbg_remote.op("deepcopy", self)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        # A project function held by a test's class (``@cachedmethod(...)`` on its method) binds like a function.
        if instance is None or self._adbg_type != "function":
            return self
        return Bound(self, instance)

    def __enter__(self) -> Any:
        __tracebackhide__ = True
        return self._adbg_remote.op("enter", self)

    def __exit__(self, kind: Any, value: Any, tb: Any) -> Any:
        __tracebackhide__ = True
        if kind is None:
            return self._adbg_remote.op("exit", self, None, None, None)
        # The project's __exit__ sees the exception: its own object, or a builtin of the test's type.
        own = value if handle_of(value) is not None else None
        suppress = self._adbg_remote.op("exit_with", self, own, kind.__name__, str(value))
        # A failed assertion or pytest's own outcome is never the project's to swallow.
        return bool(suppress) and isinstance(value, Exception) and not isinstance(value, AssertionError)

    def __format__(self, spec: str) -> str:
        __tracebackhide__ = True
        return self._adbg_remote.op("format", self, spec)

    def __round__(self, ndigits: int | None = None) -> Any:
        __tracebackhide__ = True
        return self._adbg_remote.op("round", self, ndigits)

    def __setitem__(self, key: Any, value: Any) -> None:
        __tracebackhide__ = True
        self._adbg_remote.op("setitem", self, key, value)

    def __delitem__(self, key: Any) -> None:
        __tracebackhide__ = True
        self._adbg_remote.op("delitem", self, key)

    def __contains__(self, item: Any) -> bool:
        __tracebackhide__ = True
        return bool(self._adbg_remote.op("contains", self, item))

    def __iter__(self) -> Any:
        __tracebackhide__ = True
        remote = self._adbg_remote
        caller = sys._getframe(1)
        # A generator's __iter__ returns it and runs none of the project's code: answered here. Another object's, for
        # a consumer that takes every item, comes with its first pull (``Remote.iter_feeding``).
        made = self if object.__getattribute__(self, "_adbg_generator") else remote.iter_feeding(self, caller)
        return remote.iterated(made, caller)

    def __next__(self) -> Any:
        __tracebackhide__ = True
        return self._adbg_remote.next(self, sys._getframe(1))

    def __len__(self) -> int:
        __tracebackhide__ = True
        if object.__getattribute__(self, "_adbg_generator"):  # what len() of a generator or a map says, without asking
            raise TypeError(f"object of type '{object.__getattribute__(self, '_adbg_type')}' has no len()")
        return self._adbg_remote.size(self, sys._getframe(1))


DOC = property(lambda self: self._adbg_remote.op("getattr", self, "__doc__"))  # the project's docstring, not ours


for _name in ("repr", "str", "bool", "hash", "abs", "int", "float", "index", "neg", "pos", "invert", "reversed"):
    setattr(RemoteObject, f"__{_name}__", _unary(_name))


def _compare(name: str):
    """Against the test's own data, compare data with data here: the project's __eq__ never decides
    whether its result equals an expected value (an always-equal object is not 1.75)."""
    local = getattr(operator, name)

    def forward(self: RemoteObject, other: Any) -> Any:
        __tracebackhide__ = True
        if handle_of(other) is not None:  # two project objects: the project's own comparison
            if compare_site(sys._getframe(1)):  # ``a == b``: the whole operator there (reflection, subclasses first)
                return self._adbg_remote.op(name, self, other)
            # ``a.__eq__(b)`` called (or a C function comparing): that method alone, NotImplemented as it returns it
            return self._adbg_remote.op("dunder", f"__{name}__", self, other)
        try:
            data = self._adbg_remote.op("data", self)
        except TypeError:
            if name == "ne":  # what the project says (saying "different" gains a forger nothing)
                return self._adbg_remote.op(name, self, other)
            return NotImplemented  # not a data type: never equal to the test's data
        return local(data, other)

    return forward


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(RemoteObject, f"__{_name}__", _compare(_name))


_ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift")


_BITWISE = ("and", "or", "xor")


for _name in ("getitem", *_ARITHMETIC):
    setattr(RemoteObject, f"__{_name}__", _binary(_name))


for _name in _BITWISE:
    setattr(RemoteObject, f"__{_name}__", _binary(_name + "_"))


for _name in _ARITHMETIC:
    setattr(RemoteObject, f"__r{_name}__", _reflected(_name))


for _name, _function in (("and", "and_"), ("or", "or_"), ("xor", "xor")):
    setattr(RemoteObject, f"__r{_name}__", _reflected(_function))  # "a" | grammar: the project's __ror__


class RemoteTzinfo(RemoteObject, dt.tzinfo):
    """A project's tzinfo (dateutil's tz.gettz(), a custom zone): a real tzinfo here, so the test's own datetimes
    accept it; datetime asks it for offsets, names and conversions, and the project's code answers."""

    __slots__ = ()


def _zone_method(name: str):
    def forward(self: RemoteTzinfo, when: Any) -> Any:
        __tracebackhide__ = True
        return self._adbg_remote.op("method", self, name, when)

    return forward


for _name in ("utcoffset", "dst", "tzname", "fromutc"):
    setattr(RemoteTzinfo, _name, _zone_method(_name))


def _write_through(base: type, name: str):
    """Apply a mutating method to the project's container, then refresh this copy from it."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        result = self._adbg_remote.op("method", self, name, *args, **kwargs)
        self._adbg_refresh()
        return self if name.startswith("__i") else result

    return method


def _fresh(base: type, name: str):
    """Read the project's container as it is now, then answer from the copy."""
    local = getattr(base, name)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        if not self._adbg_remote.fresh(self._adbg_epoch):
            self._adbg_refresh()
        return local(self, *args, **kwargs)

    return method


class _Container:
    """A project's list, dict or set: a local copy refreshed from the project before every read, and
    every change made in the project first. The same project object is always the same local object."""

    _adbg_remote: RemoteRun
    _adbg_handle: int
    _adbg_epoch: int  # the copy is the project's container as it is while Remote.fresh says so

    def _adbg_refresh(self) -> None:
        data, stamp = self._adbg_remote.request("items", (self,), {})
        self._adbg_fill(data)
        self._adbg_epoch = stamp

    def __copy__(self) -> Any:
        # copy.copy / deepcopy of the project's container is a plain one, as in process: never a second local object
        # tied to the project's (nor a pickle of this run's channel, which deepcopy would try)
        if not self._adbg_remote.fresh(self._adbg_epoch):
            self._adbg_refresh()
        return _PLAIN[type(self)](self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return copy.deepcopy(self.__copy__(), memo)  # items that are project objects are copied there


class RemoteList(_Container, list):
    def _adbg_fill(self, data: Any) -> None:
        list.__setitem__(self, slice(None), list(data))


class RemoteDict(_Container, dict):
    def _adbg_fill(self, data: Any) -> None:
        dict.clear(self)
        dict.update(self, data.items() if isinstance(data, dict) else data)


class RemoteSet(_Container, set):
    def _adbg_fill(self, data: Any) -> None:
        set.clear(self)
        set.update(self, data)


_PLAIN: dict[type, type] = {RemoteList: list, RemoteDict: dict, RemoteSet: set}


_READS = ("__eq__", "__ne__", "__len__", "__iter__", "__contains__", "__repr__", "copy")


for _name in _READS + ("__getitem__", "__lt__", "__le__", "__gt__", "__ge__", "__reversed__", "__add__", "__mul__", "index", "count"):
    setattr(RemoteList, _name, _fresh(list, _name))


for _name in ("append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse", "__setitem__", "__delitem__", "__iadd__", "__imul__"):
    setattr(RemoteList, _name, _write_through(list, _name))


for _name in _READS + ("__getitem__", "get", "keys", "values", "items", "__or__"):
    setattr(RemoteDict, _name, _fresh(dict, _name))


for _name in ("__setitem__", "__delitem__", "pop", "popitem", "setdefault", "update", "clear", "__ior__"):
    setattr(RemoteDict, _name, _write_through(dict, _name))


for _name in _READS + ("__le__", "__lt__", "__ge__", "__gt__", "__or__", "__and__", "__sub__", "__xor__", "issubset", "issuperset", "isdisjoint", "union", "intersection", "difference", "symmetric_difference"):
    setattr(RemoteSet, _name, _fresh(set, _name))


for _name in ("add", "discard", "remove", "pop", "clear", "update", "difference_update", "intersection_update", "symmetric_difference_update", "__ior__", "__iand__", "__isub__", "__ixor__"):
    setattr(RemoteSet, _name, _write_through(set, _name))


RemoteSet.__repr__ = lambda self: (self._adbg_remote.fresh(self._adbg_epoch) or self._adbg_refresh(), repr(set(self)) if self else "set()")[1]  # type: ignore[method-assign]


for _cls in (RemoteList, RemoteDict, RemoteSet):
    _cls.__hash__ = None  # type: ignore[assignment]


READABLE_DUNDERS = frozenset({"__name__", "__qualname__", "__doc__"})


OBJECT_OPS: dict[str, Callable[..., Any]] = {
    "call": lambda obj, *a, **k: obj(*a, **k), "repr": repr, "str": str, "len": len, "iter": iter, "next": next,
    "getitem": operator.getitem, "setitem": operator.setitem, "delitem": operator.delitem, "contains": lambda o, x: x in o,
    "bool": bool, "hash": hash, "enter": lambda obj: type(obj).__enter__(obj), "copy": copy.copy, "deepcopy": copy.deepcopy,
    # The object's own method, not the operator: the operator would reflect to the project's object, which asks the
    # sandbox, which reflects back here... NotImplemented crosses, and the sandbox's operator finishes the job.
    **{op: (lambda name: lambda obj, other: getattr(type(obj), name)(obj, other))(f"__{op}__")
       for op in ("eq", "ne", "lt", "le", "gt", "ge")},
    # Arithmetic likewise (dateutil's NotAValue answers ``relativedelta + it``); one the class lacks: NotImplemented.
    **{op: (lambda name: lambda obj, other: getattr(type(obj), name, lambda *_: NotImplemented)(obj, other))(f"__{op}__")
       for base in (*_ARITHMETIC, *_BITWISE) for op in (base, "r" + base)},
    **{op: getattr(operator, op) for op in ("neg", "pos", "abs", "invert")},
    "fspath": os.fspath,  # a path-like object of the test's, which the project opens or splits (natsort's path_splitter)
}  # fmt: skip


RUNS: list[RemoteRun] = []  # this test process's one run (the host serves one request): where project pickles load


def _from_sandbox_pickle(data: bytes) -> Any:
    __tracebackhide__ = True
    if not RUNS:
        raise RuntimeError("a project object's pickle can be loaded only while its run is alive")
    return RUNS[-1].op("unpickle", data)


class Bound:
    """A project class's method reached through a test object that inherits it (``class T(ProjectMixin, TestCase)``):
    it runs in the sandbox, given the test's object by reference as ``self``."""

    def __init__(self, function: Any, owner: Any):
        self.function, self.owner = function, owner

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return self.function._adbg_remote.op("call", self.function, self.owner, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:  # the wrapper's own attributes (cachetools' ``method.cache``)
        __tracebackhide__ = True
        if name.startswith("_adbg") or name in ("function", "owner"):
            raise AttributeError(name)
        return getattr(self.function, name)


# What a test reads of a project class that is the project's: its methods named explicitly (``Base.__init__(self, ...)``
# in a test's subclass), its data dunders (``C.__slots__``, ``C.__annotations__``), ``vars(C)``, ``C.__mro__``. Every
# other name the local class has is its own (RemoteObject's machinery, which special-method lookups, copy and pickle
# use through type(obj)), and a name it lacks is the project class's (``ClassProxy.__getattr__``).
_CLASS_FROM_PROJECT = frozenset({
    "__init__", "__repr__", "__str__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
    "__getitem__", "__setitem__", "__delitem__", "__len__", "__iter__", "__contains__", "__setattr__", "__delattr__",
    "__enter__", "__exit__", "__call__", "__doc__", "__dict__", "__mro__", "__bases__", "__base__",
} | (OBJECT_DUNDERS - {"__name__", "__qualname__"}))  # fmt: skip


class ClassProxy(type):
    """The metaclass of the local classes standing for project classes (``classes.RemoteClass``, which adds what a
    test's class statement makes of them): each project class is one real class here, the type() of its objects'
    proxies, so ``type(obj) is Point``, ``type(obj) == Point`` and ``type(a) is type(b)`` hold as in process.

    As a value it is a project object like any other: calling it constructs in the sandbox, ``isinstance`` and
    ``issubclass`` against it are answered there, its attributes, repr, iteration (an Enum's members) are the
    project's. It hashes and compares by identity, as a class does, here: one local class per project class, so the
    project's metaclass never decides that two classes are equal.
    """

    @property
    def _adbg_remote(cls) -> Any:  # the class's own (its instances have theirs in their slots)
        return type.__getattribute__(cls, "_adbg_proxy")[0]

    @property
    def _adbg_handle(cls) -> int:
        return type.__getattribute__(cls, "_adbg_proxy")[1]

    def __getattribute__(cls, name: str) -> Any:
        if name in _CLASS_FROM_PROJECT:
            __tracebackhide__ = True
            remote = type.__getattribute__(cls, "_adbg_proxy")[0]
            if name == "__dict__":  # vars(C) (monkeypatch, mock.patch read it): a read-only copy of the project's
                return types.MappingProxyType(remote.op("call", dict, remote.op("getattr", cls, name)))
            return remote.op("getattr", cls, name)
        return type.__getattribute__(cls, name)

    def __getattr__(cls, name: str) -> Any:  # a name the local class lacks: the project class's attribute
        __tracebackhide__ = True
        if local_only(name):
            raise AttributeError(name)
        remote = cls._adbg_remote
        if method_call(sys._getframe(1), name):
            return MethodCall(remote, cls, name)
        return remote.op("getattr", cls, name)

    def __setattr__(cls, name: str, value: Any) -> None:  # the project class's (monkeypatch.setattr(Point, ...))
        __tracebackhide__ = True
        cls._adbg_remote.op("setattr", cls, name, value)

    def __delattr__(cls, name: str) -> None:
        __tracebackhide__ = True
        cls._adbg_remote.op("delattr", cls, name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:  # constructed in the sandbox
        __tracebackhide__ = True
        caller = sys._getframe(1)
        feeding = feeds_consumer(caller)
        if feeding is not None:
            return cls._adbg_remote.call_feeding(feeding, caller, cls, None, args, kwargs)
        return cls._adbg_remote.op("call", cls, *args, **kwargs)

    def __repr__(cls) -> str:
        __tracebackhide__ = True
        return cls._adbg_remote.op("repr", cls)

    def __str__(cls) -> str:
        __tracebackhide__ = True
        return cls._adbg_remote.op("str", cls)

    def __bool__(cls) -> bool:  # a class is true (its __len__, an Enum's member count, is not asked)
        return True

    def __iter__(cls) -> Any:  # an Enum's members
        __tracebackhide__ = True
        remote, caller = cls._adbg_remote, sys._getframe(1)
        return remote.iterated(remote.iter_feeding(cls, caller), caller)

    def __len__(cls) -> int:
        __tracebackhide__ = True
        return cls._adbg_remote.size(cls, sys._getframe(1))

    def __contains__(cls, item: Any) -> bool:
        __tracebackhide__ = True
        return bool(cls._adbg_remote.op("contains", cls, item))

    def __getitem__(cls, key: Any) -> Any:  # Color["RED"], Base[int]
        __tracebackhide__ = True
        return cls._adbg_remote.op("getitem", cls, key)

    def __reversed__(cls) -> Any:
        __tracebackhide__ = True
        return cls._adbg_remote.op("reversed", cls)

    def __dir__(cls) -> list[str]:
        __tracebackhide__ = True
        return [str(n) for n in cls._adbg_remote.op("dir", cls)]

    def __instancecheck__(cls, obj: Any) -> bool:  # a proxy whose type() is this class never comes here
        __tracebackhide__ = True
        try:
            return bool(cls._adbg_remote.op("isinstance", obj, cls))
        except CannotPass:
            return False

    def __subclasscheck__(cls, sub: Any) -> bool:
        __tracebackhide__ = True
        try:
            return bool(cls._adbg_remote.op("issubclass", sub, cls))
        except CannotPass:
            return False


def new_proxy(kind: type, remote: RemoteRun, number: int, type_name: str, generator: bool = False) -> Any:
    """A proxy of the project object ``number`` whose type() is ``kind`` (a ClassProxy class, or RemoteObject /
    RemoteTzinfo themselves); made without calling the class, which would construct a project object."""
    made = object.__new__(kind)  # RemoteTzinfo's layout is RemoteObject's: a tzinfo adds nothing to it
    RemoteObject.__init__(made, remote, number, type_name, generator)
    return made


# A project module's metadata that tests read (``pkg.__version__``, ``mod.__all__``, ``mod.__file__``), from the
# sandbox's module; other dunders are the import machinery's, kept here. ``__file__`` names a file in the sandbox,
# which this process never opens (``guard``'s audit hook refuses it).
MODULE_METADATA = frozenset({
    "__file__", "__version__", "__version_info__", "__all__", "__doc__", "__author__", "__license__", "__copyright__",
    "__email__", "__title__", "__url__", "__description__",
})  # fmt: skip


# A module's dunders that belong to the import system of the process holding it: never the sandbox's.
_IMPORT_MACHINERY = frozenset({
    "__builtins__", "__loader__", "__spec__", "__path__", "__cached__", "__package__", "__name__", "__dict__",
    "__class__", "__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__dir__", "__init__", "__new__",
})  # fmt: skip


class RemoteModule(types.ModuleType):
    """A project module: attributes are read from (and written to) the sandbox's module."""

    def __init__(self, name: str, remote: RemoteRun, number: int):
        super().__init__(name)
        types.ModuleType.__setattr__(self, "_adbg_remote", remote)
        types.ModuleType.__setattr__(self, "_adbg_handle", number)

    def __getattr__(self, name: str) -> Any:
        __tracebackhide__ = True
        if local_only(name) and name not in MODULE_METADATA and not self._adbg_own_dunder(name):
            raise AttributeError(name)
        if method_call(sys._getframe(1), name):
            return MethodCall(self._adbg_remote, self, name)
        return self._adbg_remote.op("getattr", self, name)

    def __dir__(self) -> list[str]:  # the sandbox's module's names (six.moves' lazy attributes), and ours
        __tracebackhide__ = True
        local = types.ModuleType.__getattribute__(self, "__dict__")
        names = self._adbg_remote.op("dir", self)
        return sorted({str(n) for n in names} | {n for n in local if not n.startswith("_adbg")})

    def _adbg_own_dunder(self, name: str) -> bool:
        """A dunder the project's module itself defines (pyparsing's ``__diag__``), not the import machinery's: asked
        of the sandbox once per module; protocol probes (``__wrapped__``, ``__test__``) stay answered here."""
        if not (name.startswith("__") and name.endswith("__")) or name in _IMPORT_MACHINERY:
            return False
        known = types.ModuleType.__getattribute__(self, "__dict__").get("_adbg_dunders")
        if known is None:
            names = self._adbg_remote.op("dir", self)
            known = frozenset(n for n in names if isinstance(n, str) and n.startswith("__") and n.endswith("__"))
            types.ModuleType.__setattr__(self, "_adbg_dunders", known)
        return name in known

    def __getattribute__(self, name: str) -> Any:
        if name == "__dict__":  # what monkeypatch reads to restore an attribute: the sandbox's module
            return _ModuleDict(types.ModuleType.__getattribute__(self, "__dict__"), self)
        if name == "__doc__":  # ModuleType has its own (None): the project's is the one tests read
            return types.ModuleType.__getattribute__(self, "__getattr__")(name)
        return types.ModuleType.__getattribute__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        __tracebackhide__ = True
        if local_only(name) or isinstance(value, RemoteModule) or _test_package_of(self, name, value):  # import machinery bookkeeping
            types.ModuleType.__setattr__(self, name, value)
        else:
            self._adbg_remote.op("setattr", self, name, value)

    def __delattr__(self, name: str) -> None:
        __tracebackhide__ = True
        if local_only(name):
            types.ModuleType.__delattr__(self, name)
        else:
            self._adbg_remote.op("delattr", self, name)


def _test_package_of(module: RemoteModule, name: str, value: Any) -> bool:
    """Whether ``value`` is the tests' own package inside the project's (``isodate.tests``, imported here from the
    tests' tree), which the import machinery binds on its parent: kept on this side, the tests' code."""
    own = types.ModuleType.__getattribute__(module, "__name__")
    return type(value) is types.ModuleType and getattr(value, "__name__", None) == f"{own}.{name}" and getattr(value, "__file__", None) is not None


class _ModuleDict(dict):
    """A read-only view of a project module's namespace: local bookkeeping, then the sandbox's names."""

    def __init__(self, local: dict, module: RemoteModule):
        super().__init__(local)
        self._module = module

    def __missing__(self, key: str) -> Any:
        if not isinstance(key, str) or local_only(key):
            raise KeyError(key)
        try:
            return getattr(self._module, key)
        except AttributeError:
            raise KeyError(key) from None

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return self.get(key, _ABSENT) is not _ABSENT


_ABSENT = object()


class ProjectModuleName:
    """``proxy.__module__``: the project object's (``C.__init__.__module__`` is the module that made the class); on the
    class itself, ``module`` (a project class's local class: the project class's module)."""

    __slots__ = ("module",)

    def __init__(self, module: str = __name__):
        self.module = module

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        __tracebackhide__ = True
        if instance is None:
            return self.module
        return instance._adbg_remote.op("getattr", instance, "__module__")


for _kind in (RemoteObject, RemoteTzinfo):  # their docstrings document this module; tests read the project's
    _kind.__doc__ = DOC  # type: ignore[assignment]
    _kind.__module__ = ProjectModuleName()  # type: ignore[assignment]
