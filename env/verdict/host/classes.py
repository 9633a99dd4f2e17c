"""Project classes as real classes in the trusted test process: the local class standing for each project class (the
type() of its objects' proxies, ``class_proxy``), and what a test's class statement makes of project classes among
its bases (``RemoteClass.__new__``): a subclass made in the sandbox, or, beside a library's class such as
``unittest.TestCase``, a local class whose inherited project methods run in the sandbox (``ShimMeta``).
"""

from __future__ import annotations

import itertools
import sys
import types
from typing import Any

from .proxies import DOC, Bound, ClassProxy, MethodCall, ProjectModuleName, RemoteObject, RemoteTzinfo
from .remote_run import RemoteRun
from .sites import method_call
from .stand_ins import CannotPass, local_only

MAX_NAMES = 4096  # names of a class the local class mirrors (a hostile dir() costs this process nothing more)


class RemoteClass(ClassProxy):
    """The metaclass of every project class's local class; a test's class statement naming one among its bases comes
    here (``class Sub(Base): ...``)."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return _class_statement(name, bases, namespace, kwargs)

    def __init__(cls, *args: Any, **kwargs: Any) -> None:  # made in the sandbox (or a shim's class): nothing to do
        pass


def _text(value: Any, fallback: str) -> str:
    text = value if isinstance(value, str) and "\0" not in value else fallback
    return text[:200] or fallback


def class_proxy(remote: RemoteRun, number: int, info: dict) -> RemoteClass:
    """The local class for the project class of handle ``number``: named as the project class (module, qualified
    name), a subclass of RemoteObject (of RemoteTzinfo for a tzinfo class: its instances are real tzinfos here)."""
    named = info.get("n")
    module, qualname = (named[0], named[1]) if isinstance(named, list) and len(named) == 2 else ("?", info.get("q"))
    qualname = _text(qualname, "ProjectClass")
    namespace = {
        "__slots__": (), "__module__": ProjectModuleName(_text(module, "?")), "__qualname__": qualname, "__doc__": DOC,
        "_adbg_proxy": (remote, number),
    }  # fmt: skip
    base = RemoteTzinfo if info.get("z") == 1 else RemoteObject
    made = type.__new__(RemoteClass, qualname.rpartition(".")[2] or "ProjectClass", (base,), namespace)
    return made


def _class_statement(name: str, bases: tuple[type, ...], namespace: dict[str, Any], kwargs: dict[str, Any]) -> Any:
    """``class Name(bases): ...`` with a project class among ``bases``. With project classes, the tests' own classes
    and ``object`` only: a real subclass made in the sandbox (the tests' classes as their twins there), whose methods
    the test defined are callbacks, so the project's code calls the test's overrides; the test gets its local class
    (``type(Sub(1)) is Sub``, ``isinstance(Sub(1).clone(), Sub)``). Beside any other local class (``TestCase``): a
    local class, the project classes standing as shims whose methods run in the sandbox on the local object."""
    __tracebackhide__ = True
    remote = next((b._adbg_remote for b in bases if isinstance(b, ClassProxy)), None)
    if remote is None:
        raise TypeError(f"{name}: a class of this metaclass stands for a project class; it derives from one")
    tests = tuple(b for b in bases if not isinstance(b, ClassProxy) and b is not object)
    if all(_twinnable(remote, b) for b in tests):
        known = len(remote.proxies)
        made = subclass(name, bases, namespace, keep_names=True, remote=remote)
        if not made_now(remote, known, made):
            raise TypeError(f"the project's code did not make a new class for {name}")
        parents = tuple(b for b in bases if isinstance(b, RemoteClass) and "_adbg_fitted" in type.__getattribute__(b, "__dict__"))
        fit(made, remote, tests, parents, above=True)
        cell = namespace.get("__classcell__")
        if isinstance(cell, types.CellType):  # a method of the test's calls super() (or names __class__)
            cell.cell_contents = made
        return made
    shims = tuple(_shim(b) if isinstance(b, ClassProxy) else b for b in bases)
    return ShimMeta(name, shims, namespace, **kwargs)


def made_now(remote: RemoteRun, known: int, made: Any) -> bool:
    """Whether ``made`` is the local class of a class the sandbox made since the run held ``known`` proxies: a class
    of the tests' is fitted (``fit``) only if it is new, never one the tests already hold (a project class the
    sandbox named instead would otherwise take the tests' classes among its bases)."""
    fresh = itertools.islice(reversed(remote.proxies.values()), len(remote.proxies) - known)
    return isinstance(made, RemoteClass) and any(p is made for p in fresh)


def _twinnable(remote: RemoteRun, cls: type) -> bool:
    """A class of the tests' the sandbox can have a twin of (its bases builtins, project classes or the tests' own)."""
    if not (isinstance(cls, type) and remote.test_defined(cls)):
        return False
    try:
        remote.sandbox_class(cls)
    except CannotPass:
        return False
    return True


# Names a local class keeps as they are: its own (set when it was made), and those ``type`` itself keeps for every class
# (setting them would rename the class, change its bases or its metaclass); and what super() never forwards
_OWN = frozenset(
    {"__class__", "__slots__", "__weakref__", "__dict__"}
    | {n for n, v in vars(type).items() if isinstance(v, (types.GetSetDescriptorType, types.MemberDescriptorType))}
)
_NOT_FORWARDED = frozenset({"__class__", "__dict__", "__doc__", "__module__", "__weakref__", "__new__", "__init_subclass__",
                            "__subclasshook__", "__getattribute__", "__qualname__", "__slots__"})  # fmt: skip


def fit(made: RemoteClass, remote: RemoteRun, tests: tuple[type, ...], parents: tuple[type, ...], above: bool) -> None:
    """Make the local class of a class the tests defined in the sandbox (a subclass of project classes, or the twin
    of a class of theirs) stand for it as the test's own class does in process:

    - its local bases: the tests' own classes it derives from, after RemoteObject (``isinstance(obj, Mixin)``,
      ``issubclass(Sub, Mixin)`` answered here; ``super()`` in a mixin's method goes on to the next of the tests'
      classes, then object); for a class statement, first a class answering ``super()`` (``_SuperAttribute``: the
      sandbox's own super() of the made class) and the classes the tests made that it derives from;
    - every name of the made class (and of those local bases) set on the local class itself: RemoteObject's own
      machinery, or a ``_ProxyAttribute`` asking the sandbox, so nothing of the bases above runs on a proxy by
      accident (the sandbox's method resolution decides, as it would for any project object).
    """
    base = RemoteTzinfo if issubclass(made, RemoteTzinfo) else RemoteObject
    names = {n for n in remote.op("dir", made) if isinstance(n, str)}
    names |= {n for test in tests for klass in test.__mro__ if klass is not object for n in vars(klass) if isinstance(n, str)}
    kept = sorted(n for n in names if not n.startswith("_adbg") and n not in _OWN)[:MAX_NAMES]
    first = (_above(remote, made, kept),) if above else ()
    for candidate in ((*first, *parents, base, *tests), (*first, *parents, base), (*first, base)):
        try:  # a layout or method order the tests' classes cannot share with a proxy: fewer local bases
            type.__setattr__(made, "__bases__", candidate)
            break
        except TypeError:
            continue
    for name in kept:
        type.__setattr__(made, name, _shadow(base, name))
    type.__setattr__(made, "_adbg_fitted", True)


def _shadow(base: type, name: str) -> Any:
    for klass in base.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _ProxyAttribute(name)


def _above(remote: RemoteRun, made: Any, names: list[str]) -> type:
    """The class after a made class in its local MRO: what ``super()`` in the test's methods finds, every name of the
    made class as the sandbox's ``super(made, obj)`` has it."""
    forwarded = {n: _SuperAttribute(remote, made, n) for n in names if n not in _NOT_FORWARDED}
    return type(f"super({type.__getattribute__(made, '__name__')})", (), {**forwarded, "__slots__": ()})


class _ProxyAttribute:
    """A name of a made class, as its local class holds it: on a proxy, the project object's attribute (asked of the
    sandbox, as ``RemoteObject.__getattr__`` would); on the class, the project class's."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        __tracebackhide__ = True
        if instance is None:
            return owner._adbg_remote.op("getattr", owner, self.name)
        if method_call(sys._getframe(1), self.name):
            return MethodCall(instance._adbg_remote, instance, self.name)
        return instance._adbg_remote.op("getattr", instance, self.name)


class _SuperAttribute:
    """One name as super() of a test's subclass finds it: the sandbox's ``super(the subclass, instance).name``."""

    def __init__(self, remote: RemoteRun, made: Any, name: str):
        self.remote, self.made, self.name = remote, made, name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        __tracebackhide__ = True
        target = owner if obj is None else obj  # super() in a classmethod: of the class it was called on
        if target is None:
            raise AttributeError(self.name)
        parent = self.remote.op("call", super, self.made, target)  # the project's MRO, in the sandbox
        return self.remote.op("getattr", parent, self.name)


def subclass(name: str, bases: tuple[Any, ...], namespace: dict[str, Any], keep_names: bool = False, remote: RemoteRun | None = None) -> Any:
    __tracebackhide__ = True
    remote = remote or next(b._adbg_remote for b in bases if isinstance(b, ClassProxy))
    attrs: dict[str, tuple[str, Any]] = {}
    for key, value in namespace.items():
        if key in ("__classcell__", "__orig_bases__") or key.startswith("_adbg_"):
            continue
        if key in ("__module__", "__qualname__", "__doc__") and not keep_names:
            continue
        if isinstance(value, staticmethod):
            attrs[key] = ("static", value.__func__)
        elif isinstance(value, classmethod):
            attrs[key] = ("class", value.__func__)
        elif isinstance(value, property) and value.fget is not None:
            attrs[key] = ("property", value.fget)
        elif isinstance(value, types.FunctionType):
            attrs[key] = ("method", value)
        else:
            attrs[key] = ("value", value)
    return remote.op("subclass", name, bases, attrs)


class ShimMeta(type):
    """The metaclass of a local class with project classes among its bases beside a library's class
    (``class T(ProjectMixin, unittest.TestCase)``): each project class stands as its shim, whose methods run in the
    sandbox on the local object (``Bound``)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if "_adbg_class" in cls.__dict__:  # the shim itself is never instantiated: the project class is
            return cls._adbg_class(*args, **kwargs)
        return super().__call__(*args, **kwargs)


def _shim(project: ClassProxy) -> type:
    """The local class standing for ``project`` among a local class's bases (one per project class)."""
    remote = project._adbg_remote
    number = project._adbg_handle
    if number not in remote.shims:
        remote.shims[number] = ShimMeta(
            type.__getattribute__(project, "__name__"),
            (),
            {"_adbg_class": project, "__getattr__": _shim_getattr, "__module__": "adbg_host.classes"},
        )
    return remote.shims[number]


def _shim_getattr(self: Any, name: str) -> Any:
    __tracebackhide__ = True
    if local_only(name):
        raise AttributeError(name)
    for klass in type(self).__mro__:
        project = klass.__dict__.get("_adbg_class")
        if project is None:
            continue
        try:
            value = getattr(project, name)
        except AttributeError:
            continue
        plain_function = isinstance(value, RemoteObject) and value._adbg_type == "function"  # not a classmethod's bound one
        return Bound(value, self) if plain_function else value
    raise AttributeError(name)
