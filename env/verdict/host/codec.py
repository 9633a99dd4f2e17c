"""Values across the split, both ways: the test's values encoded for the sandbox (plain data, handles, the test's
functions, classes and objects by reference), and the sandbox's replies decoded into data, proxies and stand-ins.
The wire tags are ``protocol.py``'s (``env/sandbox/inside/protocol.py``, loaded by path).
"""

from __future__ import annotations

import builtins
import contextlib
import datetime as dt
import decimal
import fractions
import inspect
import io
import itertools
import keyword
import os
import pickle
import re
import sys
import types
import uuid
import zoneinfo
from collections.abc import Callable, Mapping
from typing import Any

from .channel import RemoteError
from .classes import ShimMeta, class_proxy, fit, made_now, subclass
from .protocol import agree
from .proxies import (
    Bound,
    ClassProxy,
    RemoteDict,
    RemoteList,
    RemoteModule,
    RemoteObject,
    RemoteSet,
    RemoteTzinfo,
    handle_of,
    new_proxy,
)
from .sites import portable_lambda
from .stand_ins import MAX_STAND_INS, CannotPass, ProjectExit, Ref, StandIn, StandInMeta

SCALARS = (type(None), bool, int, float, str, bytes, complex)
_JSON_PLAIN = frozenset({type(None), bool, int, float, str})  # what the JSON of a reply decodes to as itself


def _function_attribute(name: Any) -> bool:
    """An attribute a project may set on a test's function (``pattern``, ``regex_group_count``): a public name that
    is not pytest's (marks, fixtures)."""
    return isinstance(name, str) and name.isidentifier() and not name.startswith(("_", "pytest"))


def _importable_function(value: Any) -> bool:
    """A function of the standard library's, which the sandbox can import for itself (a pickle names it)."""
    if isinstance(value, types.BuiltinFunctionType):
        owner = getattr(value, "__self__", None)
        module = owner.__name__ if isinstance(owner, types.ModuleType) else None
    elif isinstance(value, types.FunctionType):
        module = value.__module__ if "<" not in value.__qualname__ else None
    elif isinstance(value, (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType)):
        module = getattr(value.__objclass__, "__module__", None)  # str.upper, dict.get
    else:
        return False
    return isinstance(module, str) and module.split(".")[0] in sys.stdlib_module_names


def _about(function: Any) -> list[str | None]:
    """What a stand-in shows of the test's function: its qualified name, docstring and module (functools.wraps,
    toolz.memoize copy them)."""
    def text(name: str, limit: int) -> str | None:
        value = getattr(function, name, None)
        return value[:limit] if isinstance(value, str) else None

    return [text("__qualname__", 300), text("__doc__", 20_000), text("__module__", 300)]


# Builtins the project may hand the test as the test's own: types and pure functions, never eval, exec, open ...
SHARED_BUILTINS = frozenset((
    "object type int float complex bool str bytes bytearray list tuple dict set frozenset range slice memoryview "
    "property staticmethod classmethod super enumerate zip map filter reversed abs all any ascii bin callable chr "
    "divmod format hash hex id isinstance issubclass iter len max min next oct ord pow repr round sorted sum "
    "Ellipsis NotImplemented"
).split())


COPYABLE_ITERATORS = frozenset(
    {type(iter(x)) for x in ([], (), range(1), range(2**64), "a", "\xe9", b"", bytearray(), set(), {}, {}.values(), {}.items())}
    | {type(reversed([])), type(reversed(range(1))), enumerate, zip, map, filter, reversed}
    | {getattr(itertools, n) for n in ("accumulate", "chain", "combinations", "combinations_with_replacement", "compress",
                                       "count", "cycle", "dropwhile", "filterfalse", "islice", "pairwise", "permutations",
                                       "product", "repeat", "starmap", "takewhile", "zip_longest") if hasattr(itertools, n)}
)


_PLAIN_DATA = frozenset({type(None), bool, int, float, complex, str, bytes, bytearray, tuple, list, set, frozenset, dict})


MAX_ITERATOR_COPY = 256 * 1024  # bytes of pickle: a bigger iterator is pulled item by item


def _iterator_copy(iterator: Any) -> bytes | None:
    """A pickle of a standard iterator whose state is plain data and whose functions are builtins (``iter(list)``,
    ``itertools.permutations(range(180), 4)``, ``map(str, ...)``); None for anything else: a generator, an iterator
    holding the test's objects or functions, one too big. The sandbox iterates its copy at its own speed, and the test's
    iterator is advanced by as many items as the project read (``Remote.advance``), so both stay where they would be."""
    allowed = _PLAIN_DATA | COPYABLE_ITERATORS

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj: Any) -> Any:
            kind = type(obj)
            if kind in allowed or (kind is type and (obj in allowed or getattr(builtins, obj.__name__, None) is obj)):
                return None
            if kind is types.BuiltinFunctionType and getattr(builtins, obj.__name__, None) is obj:
                return None  # iter, len, str.upper's kin: the reducers' own and map's functions
            raise pickle.PicklingError("not plain data")

    buffer = io.BytesIO()
    try:
        Pickler(buffer, protocol=4).dump(iterator)
    except Exception:  # noqa: BLE001  (anything unpicklable or not plain: pulled item by item instead)
        return None
    data = buffer.getvalue()
    return data if len(data) <= MAX_ITERATOR_COPY else None


_DICT_VIEWS = {type({}.keys()): "keys", type({}.values()): "values", type({}.items()): "items"}


_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "po", inspect.Parameter.POSITIONAL_OR_KEYWORD: "pk",
    inspect.Parameter.VAR_POSITIONAL: "va", inspect.Parameter.KEYWORD_ONLY: "ko", inspect.Parameter.VAR_KEYWORD: "vk",
}  # fmt: skip


def _parameters(function: Any) -> list[list[Any]] | None:
    """A test function's signature for its stand-in in the sandbox, which takes exactly those parameters: a caller
    probing it (pyparsing's _trim_arity, toolz's is_valid_args, inspect.signature) sees what it would in process, and
    a wrong call fails at the call. Each parameter is [name, kind] or [name, kind, default]: a scalar default as
    itself, any other as None plus a flag (the stand-in then leaves it to the function). None: no signature."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    if len(parameters) > 64:
        return None
    spec: list[list[Any]] = []
    for p in parameters:
        if not p.name.isidentifier() or keyword.iskeyword(p.name) or p.name.startswith("_adbg"):
            return None
        entry: list[Any] = [p.name, _KINDS[p.kind]]
        if p.default is not p.empty:
            entry += [p.default, False] if type(p.default) in SCALARS else [None, True]
        spec.append(entry)
    return spec


class Codec:
    """The encoding and decoding half of ``conversation.Remote`` (a mixin: ``self`` is the run's Remote)."""

    proxies: dict[int, Any]
    _kinds: dict[int, Any]  # a project object's handle -> its class's, as last sent (the proxy's type() follows it)
    _exceptions: dict[str, type[BaseException]]
    _callbacks: dict[int, Callable[..., Any]]
    _callback_numbers: dict[int, int]
    _shapes: dict[int, tuple[str, list[list[Any]] | None, list[str | None]]]
    _classes: dict[int, tuple[int, type]]
    shims: dict[int, type]

    # -- test side -> sandbox ---------------------------------------------------------------

    def encode(self, value: Any, depth: int = 0) -> Any:
        if depth > 64:
            raise CannotPass("value nested too deeply to pass to the project's code")
        kind = type(value)
        if kind in SCALARS:
            return value
        handle = handle_of(value)
        if handle is not None:
            if handle[0] is not self:
                raise CannotPass("an object from another run")
            return {None: ("h", handle[1])}
        if kind in (list, tuple):
            return kind(self.encode(v, depth + 1) for v in value)
        if kind in (set, frozenset):
            items = tuple(self.encode(v, depth + 1) for v in value)
            if all(type(i) in SCALARS or type(i) is tuple and all(type(j) in SCALARS for j in i) for i in items):
                return kind(items)
            return {None: ("st" if kind is set else "fs", items)}  # members that cross as handles or tagged values
        if kind is dict:
            return {None: ("d", [(self.encode(k, depth + 1), self.encode(v, depth + 1)) for k, v in value.items()])}
        if kind is dt.datetime or kind is dt.time:  # the wall clock as text, its tzinfo as a value of its own
            zone = None if value.tzinfo is None else self.encode(value.tzinfo, depth + 1)
            naive = value.replace(tzinfo=None, fold=0).isoformat()
            return {None: ("dt" if kind is dt.datetime else "ti", (naive, zone, value.fold))}
        if kind is zoneinfo.ZoneInfo and isinstance(getattr(value, "key", None), str):
            return {None: ("zi", value.key)}
        if kind is dt.date:
            return {None: ("da", value.isoformat())}
        if kind is dt.timedelta:
            return {None: ("td", value.days, value.seconds, value.microseconds)}
        if kind is dt.timezone:
            offset = value.utcoffset(None)
            return {None: ("tz", offset.days, offset.seconds, value.tzname(None))}
        if kind is decimal.Decimal:
            return {None: ("D", str(value))}
        if kind is uuid.UUID:
            return {None: ("U", value.hex)}
        if kind is fractions.Fraction:
            return {None: ("Q", str(value.numerator), str(value.denominator))}
        if kind is re.Pattern:
            text = value.pattern
            return {None: ("R", text if isinstance(text, str) else text.decode("latin-1"), value.flags, isinstance(text, bytes))}
        if kind is range:
            return {None: ("rg", value.start, value.stop, value.step)}
        if kind is memoryview:  # bytes-like: a read-only view of a copy there
            return {None: ("mv", value.tobytes())}
        if kind in _DICT_VIEWS:  # a view of the test's dict: the same kind of view, of a copy made now
            return {None: ("dv", _DICT_VIEWS[kind], [self.encode(v, depth + 1) for v in value])}
        if isinstance(value, type):
            if isinstance(value, ShimMeta) and len(value.__bases__) == 1 and hasattr(value, "_adbg_class"):
                return self.encode(value._adbg_class, depth)
            if self.test_defined(value):  # a class of the test's: a twin in the sandbox (attrs' decorators, registries)
                return {None: ("h", self.sandbox_class(value))}
            if getattr(builtins, value.__name__, None) is not value:
                try:  # a class the sandbox can import (the standard library's, the requirements')
                    return {None: ("pk", self._pickle(value))}
                except Exception:  # one it cannot: being defined (a requirement decorating it with the project's)
                    return {None: ("h", self.sandbox_class(value))}
        elif self.by_reference(value):
            flags = "tzinfo" if isinstance(value, dt.tzinfo) else "mapping" if isinstance(value, Mapping) else "pathlike" if isinstance(value, os.PathLike) else ""
            return {None: ("lo", self._register(value), kind.__name__[:100], flags)}
        if kind is Bound:  # a project method reached through a test object: bound to it again in the sandbox
            return {None: ("bm", self.encode(value.function, depth + 1), self.encode(value.owner, depth + 1))}
        if hasattr(kind, "__next__"):  # an iterator of the test's
            number = self._register(value)
            copy = _iterator_copy(value) if kind in COPYABLE_ITERATORS else None
            if copy is not None:  # of plain data: a copy there, this one advanced as far as the project reads it
                return {None: ("ic", number, copy)}
            generator = "gen" if kind is types.GeneratorType else ""  # a generator there too (isinstance checks)
            return {None: ("it", self._register(value.__next__), "__next__", generator)}  # pulled item by item
        if value is NotImplemented or value is Ellipsis:
            return {None: ("bi", repr(value))}
        if getattr(builtins, getattr(value, "__name__", ""), None) is value:
            return {None: ("bi", value.__name__)}  # len, int, ValueError ...: the sandbox's own builtin
        if callable(value) and not isinstance(value, type):
            if _importable_function(value):  # operator.mul, functools.partial's target...: the sandbox's own
                try:
                    return {None: ("pk", self._pickle(value))}
                except Exception:
                    pass
            number = self._register(value)
            shape = self._shapes.get(number)
            if shape is None:  # what the stand-in takes and shows, worked out once per function
                shape = self._shapes[number] = (str(getattr(value, "__name__", "function"))[:100], _parameters(value), _about(value))
            portable = portable_lambda(value)  # a lambda the sandbox may run itself: its code too
            if portable is not None:
                return {None: ("cb", number, *shape, self._attributes(value, depth), portable)}
            return {None: ("cb", number, *shape, self._attributes(value, depth))}
        if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] in sys.stdlib_module_names:
            return {None: ("mo", value.__name__)}  # the standard library's module: the sandbox imports its own
        if not isinstance(value, types.ModuleType):
            try:  # the standard library's and the requirements' values (defaultdict, OrderedDict, paths): a copy
                return {None: ("pk", self._pickle(value))}
            except Exception as exc:
                reason = f" ({type(exc).__name__}: {str(exc)[:200]})"
        else:
            reason = " (a module)"
        raise CannotPass(
            f"cannot pass a {kind.__name__} to the project's code{reason}: tests may pass plain data, values of the standard "
            "library's types, functions, classes and objects of their own (called back here) and objects the project "
            "returned (the code runs in a separate sandbox process)"
        )

    def _attributes(self, function: Any, depth: int) -> list[list[Any]]:
        """A test function's own attributes (``parse_unit.regex_group_count = 2``, set by the test or by a project
        decorator), for its stand-in; the ones that cannot cross stay here."""
        own = getattr(function, "__dict__", None) if isinstance(function, types.FunctionType) else None
        pairs = []
        for key, item in list(own.items())[:64] if isinstance(own, dict) else ():
            if _function_attribute(key):
                try:
                    pairs.append([key, self.encode(item, depth + 1)])
                except CannotPass:
                    pass
        return pairs

    def _pickle(self, value: Any) -> bytes:
        """A pickle the sandbox loads (with its own copies of the standard library's and requirements' classes);
        project objects, the test's functions and objects inside it go as references."""
        remote = self
        buffer = io.BytesIO()

        class Pickler(pickle.Pickler):
            def persistent_id(self, obj: Any) -> Any:
                if obj is value:
                    return None
                if handle_of(obj) is not None or (not isinstance(obj, type) and remote.by_reference(obj)):
                    return remote.encode(obj)
                if isinstance(obj, (types.FunctionType, types.MethodType)) and remote.in_tests_tree(obj.__code__.co_filename):
                    return remote.encode(obj)
                if isinstance(obj, type) and remote.test_defined(obj):
                    return remote.encode(obj)
                return None

        Pickler(buffer, protocol=4).dump(value)
        return buffer.getvalue()

    def sandbox_class(self, cls: type) -> int:
        """The handle of ``cls``'s twin in the sandbox: the same name, bases (builtins as the sandbox's, project
        classes, other test classes' twins) and attributes, whose methods run here as callbacks."""
        known = self._classes.get(id(cls))
        if known is not None and known[1] is cls:  # the entry keeps its class alive: its id is its own
            return known[0]
        bases = tuple(object if b is object else b for b in cls.__bases__)
        for base in bases:
            if not (base is object or isinstance(base, ClassProxy) or self.test_defined(base)
                    or getattr(builtins, base.__name__, None) is base):
                raise CannotPass(f"cannot pass the class {cls.__qualname__} to the project's code: its base {base.__qualname__} "
                                 "is neither a builtin, a project class nor one the tests define")
        namespace = {k: v for k, v in vars(cls).items()
                     if k not in ("__dict__", "__weakref__") and not isinstance(v, (types.GetSetDescriptorType, types.MemberDescriptorType))}
        namespace["__qualname__"], namespace["__module__"] = cls.__qualname__, cls.__module__
        known = len(self.proxies)
        twin = subclass(cls.__name__, bases, namespace, keep_names=True, remote=self)
        number = handle_of(twin)
        if number is None and isinstance(twin, type) and isinstance(twin.__dict__.get("_adbg_class"), tuple):
            number = twin.__dict__["_adbg_class"]  # an exception class's twin: its stand-in here names it
        assert number is not None
        self._classes[id(cls)] = (number[1], cls)  # the class kept alive with it, so its id stays its own
        if made_now(self, known, twin):  # what the project makes of it is an instance of it here too
            fit(twin, self, (cls,), (), above=False)
        return number[1]

    def _register(self, function: Callable[..., Any]) -> int:
        number = self._callback_numbers.get(id(function))
        if number is None or self._callbacks.get(number) is not function:  # kept alive in _callbacks
            number = self._callback_numbers[id(function)] = len(self._callbacks) + 1
            self._callbacks[number] = function
        return number

    # -- sandbox -> test side ---------------------------------------------------------------

    def decode(self, value: Any, stamp: int = -1) -> Any:
        """A value from the sandbox; the project's lists, dicts and sets in it are copies current at epoch ``stamp``
        (-1: a copy made while the project's code still runs, as a callback's arguments or a pull's items are)."""
        if isinstance(value, list):  # a pull's items mostly: plain JSON values are themselves
            return [v if type(v) in _JSON_PLAIN else self.decode(v, stamp) for v in value]
        if not isinstance(value, dict):
            return value
        if "h" in value and "L" not in value and "d" not in value and "S" not in value:  # a handle: the commonest reply
            return self.proxy(value)
        if "bi" in value:  # a builtin the sandbox named: ours, if it is one both sides share
            name = str(value["bi"])
            if name not in SHARED_BUILTINS:
                raise ValueError("the sandbox named a builtin it may not hand the test")
            return getattr(builtins, name)
        if "bd" in value:  # a builtin type's own method (object.__lt__, dict.get): ours
            owner, attribute = (str(v) for v in value["bd"])
            kind = getattr(builtins, owner) if owner in SHARED_BUILTINS else None
            found = vars(kind).get(attribute) if isinstance(kind, type) else None
            if found is None:
                raise ValueError("the sandbox named a builtin it may not hand the test")
            return found
        if "lo" in value:  # an object of the test's, back from the project: the object itself (only one it was given)
            known = self._callbacks.get(value["lo"]) if isinstance(value["lo"], int) else None
            if known is None:
                raise ValueError("the sandbox named a test object it was never given")
            if isinstance(known, types.FunctionType) and isinstance(value.get("fd"), list):  # what the project set on it
                for entry in value["fd"][:64]:
                    if isinstance(entry, list) and len(entry) == 2 and _function_attribute(entry[0]):
                        setattr(known, entry[0], self.decode(entry[1]))
            return known
        if "L" in value:
            return self._container(RemoteList, [self.decode(v, stamp) for v in value["L"]], value, stamp)
        if "d" in value:
            return self._container(RemoteDict, {self.decode(k, stamp): self.decode(v, stamp) for k, v in value["d"]}, value, stamp)
        if "S" in value and "h" in value:
            return self._container(RemoteSet, {self.decode(v, stamp) for v in value["S"]}, value, stamp)
        for tag, kind in (("T", tuple), ("S", set), ("F", frozenset)):
            if tag in value:
                return kind(self.decode(v, stamp) for v in value[tag])
        if "B" in value:
            return str(value["B"]).encode("latin-1")
        if "D" in value:
            return decimal.Decimal(value["D"])
        if "U" in value:
            return uuid.UUID(hex=value["U"])
        if "Q" in value:
            return fractions.Fraction(int(value["Q"][0]), int(value["Q"][1]))
        if "R" in value:
            text, flags, binary = value["R"]
            return re.compile(text.encode("latin-1") if binary else text, flags)
        if "da" in value:
            return dt.date.fromisoformat(value["da"])
        if "td" in value:
            days, seconds, micro = value["td"]
            return dt.timedelta(days=days, seconds=seconds, microseconds=micro)
        if "tz" in value:
            days, seconds, name = value["tz"]
            return dt.timezone(dt.timedelta(days=days, seconds=seconds), name)
        for tag, kind in (("dt", dt.datetime), ("ti", dt.time)):
            if tag in value:
                naive, zone, fold = value[tag]
                return kind.fromisoformat(naive).replace(tzinfo=self.decode(zone, stamp), fold=int(fold))
        if "zi" in value:
            return zoneinfo.ZoneInfo(str(value["zi"]))
        raise ValueError("the sandbox sent a value of unknown shape")

    def _container(self, kind: type, data: Any, info: dict, stamp: int) -> Any:
        if "h" not in info:
            return {RemoteList: list, RemoteDict: dict, RemoteSet: set}[kind](data)
        number = int(info["h"])
        known = self.proxies.get(number)
        if type(known) is kind:  # the same project object: the same local object, refreshed
            known._adbg_fill(data)
            known._adbg_epoch = stamp
            return known
        made = kind(data)
        made._adbg_remote, made._adbg_handle, made._adbg_epoch = self, number, stamp
        self.proxies[number] = made
        return made

    def proxy(self, info: dict) -> Any:
        number = int(info["h"])
        known = self.proxies.get(number)
        if known is not None:
            named = info.get("c")
            if isinstance(named, dict) and self._kinds.get(number) != named.get("h"):  # its class changed since
                self._kinds[number] = named.get("h")
                self.retype(known, self.proxy(named) if named.get("k") == "class" else None)
            return known
        made = _HANDLE_MAKERS.get(str(info.get("k")), Codec._remote_object)(self, info, number)
        self.proxies[number] = made
        return made

    @staticmethod
    def retype(known: Any, kind: Any) -> None:
        """The proxy ``known`` becomes an instance of ``kind``, its object's class now (``self.__class__ = Closed`` in
        the project's code, seen when the object is sent again); a tzinfo stays a tzinfo and anything but a project
        class's local class is not taken."""
        if isinstance(kind, ClassProxy) and issubclass(kind, RemoteTzinfo) == isinstance(known, RemoteTzinfo):
            with contextlib.suppress(TypeError):  # every such class has RemoteObject's layout: never expected
                object.__setattr__(known, "__class__", kind)

    def _exception_class_handle(self, info: dict, number: int) -> Any:
        made = self.exception_class(list(info.get("m", [])))
        if issubclass(made, StandIn) and "_adbg_class" not in made.__dict__:
            made._adbg_class = (self, number)
        return made

    def _exception_handle(self, info: dict, number: int) -> Any:
        """An exception object (one the test constructed, one a function returned)."""
        return self._exception_object(list(info.get("m", [])), number)

    def _remote_object(self, info: dict, number: int) -> Any:
        """A project object (a tzinfo too): an instance of its class's local class, so its type() is the class the
        test imported. A class the sandbox names that is no class handle (or no tzinfo's for a tzinfo) is not taken:
        the object is then a plain proxy."""
        named = info.get("c")
        kind = None
        if isinstance(named, dict) and named.get("k") == "class":
            kind = self.proxy(named)
            self._kinds[number] = named.get("h")
        base = RemoteTzinfo if info.get("k") == "tzinfo" else RemoteObject
        if not (isinstance(kind, ClassProxy) and issubclass(kind, base)):
            kind = base
        return new_proxy(kind, self, number, str(info.get("t", "object")), info.get("g") == 1)

    def _exception_object(self, chain: list, number: int) -> BaseException:
        cls, ref = self.exception_class(chain), Ref(self, number)
        args = tuple(self.op("getattr", ref, "args"))
        if not issubclass(cls, StandIn):
            try:
                return cls(*args)
            except Exception:
                return cls(str(self.op("str", ref)))
        exc = cls._adbg_blank()
        exc.args = args
        exc._adbg_message = str(self.op("str", ref))
        exc._adbg_remote, exc._adbg_handle = self, number
        return exc

    def exception_class(self, chain: list) -> type[BaseException]:
        """A local class standing for the project's exception class ``chain[0]``: the same name and the
        same base classes (rebuilt from each class's direct bases), builtins as themselves."""
        entries = [(str(c[0]), [str(b) for b in c[1]]) if isinstance(c, list) and len(c) == 2 else (str(c), []) for c in chain[:64]]
        bases_of = dict(entries)

        def build(qualname: str, depth: int = 0) -> type[BaseException]:
            module, _, name = qualname.rpartition(".")
            if module == "builtins":
                found = getattr(builtins, name, None)
                if isinstance(found, type) and issubclass(found, BaseException):
                    return found if issubclass(found, Exception) else ProjectExit  # SystemExit & co never stop the session
                return Exception
            cached = self._exceptions.get(qualname)
            if cached is not None:
                return cached
            if depth > 64 or len(self._exceptions) >= MAX_STAND_INS:
                return ProjectExit
            parents = [build(b, depth + 1) for b in bases_of.get(qualname, []) if b != "builtins.object"] or [Exception]
            parents = list(dict.fromkeys(parents))
            if not any(issubclass(p, StandIn) for p in parents):
                parents.insert(0, StandIn)  # StandIn's __str__ first
            try:
                made = StandInMeta(name.rpartition(".")[2] or "ProjectError", tuple(parents), {"__module__": module, "__qualname__": name})
            except TypeError:  # bases a local class cannot combine (builtin layouts): keep the first line
                made = StandInMeta(name.rpartition(".")[2] or "ProjectError", (StandIn, parents[-1]), {"__module__": module, "__qualname__": name})
            self._exceptions[qualname] = made
            return made

        return build(entries[0][0]) if entries else Exception

    def local_exception(self, kind: Any, value: Any) -> Any:
        """A project exception object (a handle) as an instance of its stand-in class ``kind``."""
        if not (isinstance(kind, type) and issubclass(kind, StandIn) and isinstance(value, RemoteObject)):
            return value
        exc = kind._adbg_blank()
        exc.args = tuple(self.op("getattr", value, "args"))
        exc._adbg_message = str(self.op("str", value))
        exc._adbg_remote, exc._adbg_handle = self, value._adbg_handle
        return exc

    def exception(self, error: RemoteError) -> BaseException:
        reply = error.reply
        if not reply.get("m"):  # classic mode or a load failure: no class chain
            return ProjectExit(f"{error.exc_type}: {error.message}")
        cls = self.exception_class(list(reply["m"]))
        try:
            args = tuple(self.decode(reply.get("a", [])))
        except (ValueError, TypeError):
            args = (error.message,)
        if issubclass(cls, StandIn):
            exc: BaseException = cls._adbg_blank()
            exc.args = args
            exc._adbg_message = error.message
            if isinstance(reply.get("h"), dict):
                exc._adbg_remote, exc._adbg_handle = self, int(reply["h"]["h"])
        else:
            try:
                exc = cls(*args)
            except Exception:
                exc = cls(error.message)
        if error.traceback_text:
            exc.add_note("in the project's code (sandbox):\n" + error.traceback_text.rstrip())
        return exc


# A handle's kind (protocol.HANDLE_KINDS): what the test side makes of it
_HANDLE_MAKERS: dict[str, Callable[[Codec, dict, int], Any]] = {
    "exc": Codec._exception_class_handle,
    "exi": Codec._exception_handle,
    "class": lambda codec, info, number: class_proxy(codec, number, info),
    "module": lambda codec, info, number: RemoteModule(str(info.get("t", "module")), codec, number),
    "tzinfo": Codec._remote_object,
    "call": Codec._remote_object,
    "obj": Codec._remote_object,
}
agree("HANDLE_KINDS", _HANDLE_MAKERS, "the test host's codec (codec.py)")
