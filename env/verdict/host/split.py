"""The split verdict's trusted half: a project's modules as proxies of objects living in the sandbox.

    remote = Remote(channel)                  # the sandbox run's conversation (channel.py)
    remote.install({"ledger"})                 # `import ledger.accounts` now yields proxies
    from ledger.accounts import Account        # a RemoteClass
    acct = Account("alice")                    # constructed in the sandbox; `acct` is a RemoteObject
    assert acct.balance() == 0                 # the call and the comparison run there; 0 comes back as data

The tests and their expected values stay in this (trusted) process; the project's code never runs
here. What crosses is plain data (exact types: tuple, set, bytes, datetime, Decimal ...) and
numbered handles; every operation on a handle (attribute, call, ``==``, ``len``, iteration ...)
is one request to the sandbox, with exceptions that change no order in which the project's code
runs: ``obj.method(x)`` whose arguments are quiet loads is one request (``_method_call``); a
project iterator that ``list``, ``sorted``, ``set`` or ``sum`` takes whole crosses in batches
(``Remote.next``), its bare StopIteration raised here; ``iter()`` of a generator or of a builtin
iterator (``map``, ``zip`` ...) is answered here; and a project list, dict or set that an operation
returned is read from its copy until the next operation is sent (``Remote.fresh``: nothing of the
project's can run in between, unless the project runs threads of its own, which the sandbox reports). The project's exceptions come back as local stand-in classes
with the same names and class chain, so ``pytest.raises(ProjectError)`` works, and nothing the
project raises can stop the test session itself (``SystemExit`` and friends become
:class:`ProjectExit`).
"""

from __future__ import annotations

import builtins
import codecs
import collections
import copy
import datetime as dt
import decimal
import dis
import fractions
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import io
import itertools
import keyword
import operator
import os
import pickle
import re
import sys
import threading
import types
import uuid
import warnings
import zoneinfo
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .channel import Channel, RemoteError, RunAborted

_LOCAL_ONLY = ("_adbg_", "_pytest", "_fixture")
MAX_STAND_INS = 512  # exception classes rebuilt per run: a hostile chain costs the test process nothing more
_SCALARS = (type(None), bool, int, float, str, bytes, complex)


class ProjectExit(Exception):
    """The project's code raised SystemExit, KeyboardInterrupt or GeneratorExit."""


class CannotPass(TypeError):
    pass


class ProjectStopped(Exception):
    """The project's process ended (time, CPU or memory limit, or it exited); no call can be answered."""


# Dunders that name the project object's own data (a function's name, attrs' and dataclasses' fields), asked of the
# sandbox; every other dunder is a protocol probe of this process's machinery (pickle, copy, inspect, pytest), answered here.
_OBJECT_DUNDERS = frozenset({
    "__name__", "__qualname__", "__wrapped__", "__dataclass_fields__", "__match_args__", "__slots__", "__annotations__",
    "__defaults__", "__kwdefaults__", "__version__", "__all__", "__subclasses__", "__func__",
})  # fmt: skip


def _local_only(name: str) -> bool:
    if name in _OBJECT_DUNDERS or name.startswith("__attrs_"):
        return False
    return (name.startswith("__") and name.endswith("__")) or name.startswith(_LOCAL_ONLY)


class Remote:
    """One sandbox run seen from the test process: encodes, decodes and caches proxies."""

    def __init__(self, run: Channel):
        self.run = run
        self.ops = 0  # requests sent: a test that sends none never touched the project
        self._proxies: dict[int, Any] = {}
        self._exceptions: dict[str, type[BaseException]] = {}
        self._types: dict[tuple[str, str], type] = {}  # local classes named as project objects' classes (__class__)
        # The test's functions the project may call back, by number; kept for the run (the project may keep them).
        self._callbacks: dict[int, Callable[..., Any]] = {}
        self._callback_numbers: dict[int, int] = {}
        self._shapes: dict[int, tuple[str, list[list[Any]] | None, list[str | None]]] = {}  # a callback's name, signature, about
        self._outcome: BaseException | None = None  # a callback's pytest.fail or skip, raised when its operation ends
        self._classes: dict[int, tuple[int, type]] = {}  # id of a test-defined class -> (its twin's handle, the class)
        self._shims: dict[int, type] = {}  # a project class -> the local base standing for it beside local bases
        # Project iterators an exhaustive consumer took (``list(it)``): handle -> (its frame's id, code, instruction,
        # mode); and the items a pull brought that the consumer has yet to take.
        self._consumers: dict[int, tuple[int, types.CodeType, int, str]] = {}
        self._pulled: dict[int, collections.deque[Any]] = {}
        self._stopped: set[int] = set()  # iterators whose pull ended in a bare StopIteration after its items
        # Operations sent so far: a project container copied from a reply is current until the next one (``fresh``).
        self.epoch = 0
        self.tests_root = os.path.join(os.getcwd(), "")  # the host runs in the task's tests tree
        _RUNS.append(self)
        run.on_callback = self.callback  # type: ignore[method-assign]  # the channel asks this run's Remote

    # -- requests -------------------------------------------------------------------------

    def op(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # failures show the test's line, not the proxy machinery
        return self.request(name, args, kwargs)[0]

    def request(self, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[Any, int]:
        """One operation: its decoded value and the epoch its containers are current at (``fresh``)."""
        __tracebackhide__ = True
        wire_args = tuple(self.encode(a) for a in args)
        wire_kwargs = {None: ("d", [(k, self.encode(v)) for k, v in kwargs.items()])}
        self.ops += 1
        try:
            with self.run.lock:  # the epoch moves with the request, in the order operations reach the project
                self.epoch += 1
                reply = self.run.op(name, wire_args, wire_kwargs)
                # after the callbacks' own operations, if any: this reply is the project's last word; a pull's items
                # were copied while its generator still ran, so they are never current
                stamp = self.epoch if name != "pull" else -1
        except RemoteError as exc:
            self.advance(exc.reply.get("adv"))
            self.replay_output(exc.reply.get("o"))
            self.replay_warnings(exc.reply.get("w"))
            if self._outcome is not None:
                outcome, self._outcome = self._outcome, None
                raise outcome from None
            raise self.exception(exc) from None
        except RunAborted as exc:
            raise ProjectStopped(str(exc)) from None
        self.advance(reply.get("adv"))
        self.replay_output(reply.get("o"))
        self.replay_warnings(reply.get("w"))
        if self._outcome is not None:
            outcome, self._outcome = self._outcome, None
            raise outcome
        if reply.get("mt") is not None:  # the project runs threads of its own: they may change a copy at any time
            stamp = -1
        return self.decode(reply.get("ok"), stamp), stamp

    def fresh(self, stamp: int) -> bool:
        """Whether a container copied from a reply stamped ``stamp`` is still the project's container as it is: no
        operation has been sent since (nothing of the project's ran: one thread, see ``request``)."""
        return stamp == self.epoch

    def iterated(self, iterator: Any, caller: types.FrameType) -> None:
        """``iter()`` of a project object gave ``iterator``; if the caller's instruction is a call of a consumer that
        takes every item (``list``, ``sorted``, ``set`` ...: ``_consumer``), remember it: its pulls are batched."""
        handle = _handle_of(iterator)
        if handle is None or handle[0] is not self:
            return
        mode = _consumer(caller)
        if mode is None:
            self._consumers.pop(handle[1], None)
        else:
            self._consumers[handle[1]] = (id(caller), caller.f_code, caller.f_lasti, mode)

    def next(self, iterator: Any, caller: types.FrameType) -> Any:
        """``next()`` of a project iterator. Items a pull already brought come first. While the consumer that took
        the iterator is still the one pulling (the same frame, at the same call instruction: a C function such as
        ``list()``, with no code of the test's between its pulls), items come by the hundred (``pull``), never past
        what that consumer takes; any other next() is one request."""
        __tracebackhide__ = True
        number = iterator._adbg_handle
        pulled = self._pulled.get(number)
        if pulled:
            return pulled.popleft()
        if number in self._stopped:  # the pull met a bare StopIteration after these items: the consumer meets it now
            self._stopped.discard(number)
            self._pulled.pop(number, None)
            raise StopIteration
        consumer = self._consumers.get(number)
        if consumer is None:
            return self.op("next", iterator)
        if consumer[:3] != (id(caller), caller.f_code, caller.f_lasti):
            self._consumers.pop(number, None)  # someone else pulls now: item by item
            return self.op("next", iterator)
        batch, ended = self.op("pull", iterator, consumer[3])
        items = collections.deque(batch)
        if ended:  # the pull met the iterator's end or an exception: the "next" after its items raises it
            self._consumers.pop(number, None)
        if ended == 2 and type(ended) is int:  # a bare StopIteration, kept here (see child.py's _pull)
            if not items:
                raise StopIteration
            self._stopped.add(number)
        elif not items:
            return self.op("next", iterator)
        self._pulled[number] = items
        return items.popleft()

    def callback(self, request: dict[str, Any]) -> dict[str, Any]:
        """The project called a function the test passed it: run it here (it is the test's code), reply with its
        value, or with its exception's type and message (the project sees a builtin of that type, or Exception)."""
        cid = request.get("cid")
        self.advance(request.get("adv"))
        self.replay_output(request.get("o"))  # what the project printed before it called the test's function
        function = self._callbacks.get(int(request.get("cb", 0)))
        if function is None:
            return {"cid": cid, "exc": ("RuntimeError", "no such function was passed to the project")}
        try:
            args = self.decode(request.get("a", []))
            kwargs = {str(k): self.decode(v) for k, v in request.get("k", [])}
            op = request.get("op")
            if op is None:
                return {"cid": cid, "ok": self.encode(function(*args, **kwargs))}
            return {"cid": cid, "ok": self.encode(self._object_op(function, str(op), args, kwargs))}
        except ProjectStopped:
            raise
        except Exception as exc:  # the test's own failure (an assertion in its callback) reaches the project
            handle = _handle_of(exc)
            if handle is not None and handle[0] is self:  # the project's exception the test raised: that very object
                return {"cid": cid, "exch": handle[1]}
            if self.test_defined(type(exc)):  # one of the tests' exception classes: raised there as its twin
                try:
                    return {"cid": cid, "exct": (self.sandbox_class(type(exc)), self.encode(list(exc.args)), str(exc)[:2000])}
                except ProjectStopped:
                    raise
                except Exception:  # noqa: BLE001  (a class or arguments that cannot cross: its name and message do)
                    pass
            return {"cid": cid, "exc": (type(exc).__name__, str(exc)[:2000])}
        except BaseException as exc:  # pytest.fail / skip, exits: the test's outcome, whatever the project does with it
            self._outcome = self._outcome or exc
            return {"cid": cid, "exc": ("BaseException", str(exc)[:2000])}

    def _object_op(self, obj: Any, op: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """The project's operation on an object of the test's it was passed by reference. Its public attributes
        only: what the project reaches through them is checked (``reachable``), so a test's object never hands it a
        module or a function of the trusted process's to run here."""
        if op in ("getattr", "setattr", "delattr", "method"):
            name = str(args[0]) if args else ""
            dunder = name.startswith("__") and name.endswith("__")
            own = self.test_defined(type(obj))  # the tests' own classes: their _private names too, as in process
            if (dunder and name not in _READABLE_DUNDERS) or (name.startswith("_") and not dunder and not own):
                raise AttributeError(f"the project may not reach the test's {name!r} (private to the trusted process)")
            if op == "setattr":
                return setattr(obj, name, args[1])
            if op == "delattr":
                return delattr(obj, name)
            value = getattr(obj, name)
            if op == "method":
                return value(*args[1:], **kwargs)
            self.reachable(value, obj)
            return value
        if op == "exit" and len(args) == 3:  # the project's exception, as the stand-in the test's __exit__ can inspect
            kind, value, _ = args
            return type(obj).__exit__(obj, kind, self.local_exception(kind, value), None)
        forward = _OBJECT_OPS.get(op)
        if forward is None:
            raise TypeError(f"no such operation on the test's object: {op}")
        return forward(obj, *args, **kwargs)

    def reachable(self, value: Any, owner: Any, depth: int = 0) -> None:
        """Refuse what a test's object would hand the project that the test never passed it: a module, a class or a
        function from outside the tests tree (``os.system`` held in an attribute). Its own methods, the tests'
        functions and classes, builtins, data and project objects are fine."""
        if depth > 8:
            return
        if isinstance(value, (list, tuple, set, frozenset)):
            for item in list(value)[:1000]:
                self.reachable(item, owner, depth + 1)
            return
        if isinstance(value, dict):
            for item in list(value.values())[:1000]:
                self.reachable(item, owner, depth + 1)
            return
        if type(value) in _SCALARS or _handle_of(value) is not None or isinstance(value, (_Bound, RemoteClass)):
            return
        if isinstance(value, types.ModuleType):
            raise AttributeError("the project may not reach a module of the trusted process")
        if getattr(builtins, getattr(value, "__name__", ""), None) is value:
            return  # a builtin: the sandbox's own crosses
        if isinstance(value, type):
            if self.test_defined(value):
                return
            raise AttributeError(f"the project may not reach the class {value.__qualname__} of the trusted process")
        if isinstance(value, (types.MethodType, types.BuiltinMethodType)) and (  # a stream's read: C methods too
            value.__self__ is owner or self.by_reference(value.__self__)
        ):
            return
        code = getattr(value, "__code__", None)
        if isinstance(code, types.CodeType) and self.in_tests_tree(code.co_filename):
            return
        if callable(value) and not self.by_reference(value):
            raise AttributeError(f"the project may not reach {getattr(value, '__qualname__', type(value).__name__)} of the trusted process")

    def in_tests_tree(self, filename: str) -> bool:
        return os.path.abspath(filename).startswith(self.tests_root)

    def test_defined(self, kind: type) -> bool:
        """A class the tests define (in a test file or conftest of this task's tests tree)."""
        module = sys.modules.get(str(getattr(kind, "__module__", "")))
        file = getattr(module, "__file__", None)
        return isinstance(file, str) and self.in_tests_tree(file)

    def by_reference(self, value: Any) -> bool:
        """Objects the project gets a reference to (never a copy): the tests' own, streams it may write to, context
        managers and unittest's helpers (``with self.assertRaises(...)`` in a project's test mixin)."""
        kind = type(value)
        return (kind is object  # a sentinel: the same object when it comes back
                or self.test_defined(kind) or isinstance(value, io.IOBase) or kind.__module__ in ("unittest.case", "unittest.mock")
                or (hasattr(kind, "__enter__") and hasattr(kind, "__exit__")))

    def advance(self, read: Any) -> None:
        """The test's iterators the sandbox iterates copies of, advanced by as many items as the project read."""
        for entry in read if isinstance(read, list) else ():
            iterator = self._callbacks.get(entry[0]) if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], int) else None
            if iterator is not None and type(iterator) in _COPYABLE_ITERATORS and isinstance(entry[1], int) and entry[1] > 0:
                collections.deque(itertools.islice(iterator, entry[1]), maxlen=0)

    @staticmethod
    def replay_output(printed: Any) -> None:
        """What the project printed, written to the test's sys.stdout / sys.stderr as they are now (capsys,
        ``redirect_stdout``): text only, never interpreted."""
        for entry in printed if isinstance(printed, list) else ():
            if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], str):
                (sys.stderr if entry[0] == "e" else sys.stdout).write(entry[1])

    def replay_warnings(self, caught: Any) -> None:
        """Warnings the project raised during one operation, raised again here: the test's filters decide
        (``pytest.warns``, ``-W error``), as they would in process."""
        for chain, message, filename, lineno in caught or []:
            category = self.exception_class(list(chain)) if chain else UserWarning
            if not (isinstance(category, type) and issubclass(category, Warning)):
                category = UserWarning
            instance = category(str(message))
            if isinstance(instance, StandIn):
                instance._adbg_message = str(message)  # what str() of a stand-in shows, and pytest.warns(match=) reads
            warnings.warn_explicit(instance, category, str(filename), int(lineno))

    def install(self, names: set[str]) -> ProjectFinder:
        """Route imports of the project's top-level ``names`` to the sandbox.

        Never a name the test process needs itself (the standard library, pytest, pluggy, this host) or finds in
        the tests tree (a helper module): a project file called ``json.py`` or ``_pytest/`` must not stand in for
        them. A copy of the project *installed* in the test environment never stands in for the project either:
        the finder comes first, so the project's names reach the sandbox even where site-packages holds them. A
        project named like a library pytest has already loaded (``packaging``, ``iniconfig``) is the tests' too:
        pytest keeps the objects it holds, and its later imports get its own copy (``LibraryCopies``).
        """
        own = {n for n in names if n in sys.stdlib_module_names or n in _RUNNER_NAMES or n.startswith("adbg")}
        finder = ProjectFinder(self, set(names) - own)
        sys.meta_path.insert(0, finder)  # before site-packages; the tests tree is asked first at each import
        copies = LibraryCopies(finder, self.tests_root)
        copies.take_loaded()
        copies.install()
        codecs.register(self.find_codec)  # asked last: only for names the standard library does not know
        try:
            self.op("share_builtins", sorted(_SHARED_BUILTINS))  # which builtins the sandbox may name as ours
        except ProjectStopped:
            pass  # each test says why when it reaches the project
        return finder

    def find_codec(self, name: str) -> codecs.CodecInfo | None:
        """A codec the project registered in the sandbox (``import idna.codec``): its functions run there."""
        try:
            info = self.op("codec", name)
        except (LookupError, CannotPass, ProjectStopped):
            return None
        parts = {part: getattr(info, part) for part in (
            "encode", "decode", "incrementalencoder", "incrementaldecoder", "streamreader", "streamwriter")}
        return codecs.CodecInfo(name=str(info.name), **parts)

    # -- test side -> sandbox ---------------------------------------------------------------

    def encode(self, value: Any, depth: int = 0) -> Any:
        if depth > 64:
            raise CannotPass("value nested too deeply to pass to the project's code")
        kind = type(value)
        if kind in _SCALARS:
            return value
        handle = _handle_of(value)
        if handle is not None:
            if handle[0] is not self:
                raise CannotPass("an object from another run")
            return {None: ("h", handle[1])}
        if kind in (list, tuple):
            return kind(self.encode(v, depth + 1) for v in value)
        if kind in (set, frozenset):
            items = tuple(self.encode(v, depth + 1) for v in value)
            if all(type(i) in _SCALARS or type(i) is tuple and all(type(j) in _SCALARS for j in i) for i in items):
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
            if isinstance(value, _ShimMeta) and len(value.__bases__) == 1 and hasattr(value, "_adbg_class"):
                return self.encode(value._adbg_class, depth)
            if self.test_defined(value):  # a class of the test's: a twin in the sandbox (attrs' decorators, registries)
                return {None: ("h", self.sandbox_class(value))}
            if getattr(builtins, value.__name__, None) is not value:
                try:  # a class the sandbox can import (the standard library's, the requirements')
                    return {None: ("pk", self._pickle(value))}
                except Exception:  # one it cannot: being defined (a requirement decorating it with the project's)
                    return {None: ("h", self.sandbox_class(value))}
        elif self.by_reference(value):
            flags = "tzinfo" if isinstance(value, dt.tzinfo) else "mapping" if isinstance(value, Mapping) else ""
            return {None: ("lo", self._register(value), kind.__name__[:100], flags)}
        if kind is _Bound:  # a project method reached through a test object: bound to it again in the sandbox
            return {None: ("bm", self.encode(value.function, depth + 1), self.encode(value.owner, depth + 1))}
        if hasattr(kind, "__next__"):  # an iterator of the test's
            number = self._register(value)
            copy = _iterator_copy(value) if kind in _COPYABLE_ITERATORS else None
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
                if _handle_of(obj) is not None or (not isinstance(obj, type) and remote.by_reference(obj)):
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
        if known is not None:
            return known[0]
        bases = tuple(object if b is object else b for b in cls.__bases__)
        for base in bases:
            if not (base is object or isinstance(base, RemoteClass) or self.test_defined(base)
                    or getattr(builtins, base.__name__, None) is base):
                raise CannotPass(f"cannot pass the class {cls.__qualname__} to the project's code: its base {base.__qualname__} "
                                 "is neither a builtin, a project class nor one the tests define")
        namespace = {k: v for k, v in vars(cls).items()
                     if k not in ("__dict__", "__weakref__") and not isinstance(v, (types.GetSetDescriptorType, types.MemberDescriptorType))}
        namespace["__qualname__"], namespace["__module__"] = cls.__qualname__, cls.__module__
        twin = _subclass(cls.__name__, bases, namespace, keep_names=True, remote=self)
        number = _handle_of(twin)
        if number is None and isinstance(twin, type) and isinstance(twin.__dict__.get("_adbg_class"), tuple):
            number = twin.__dict__["_adbg_class"]  # an exception class's twin: its stand-in here names it
        assert number is not None
        self._classes[id(cls)] = (number[1], cls)  # the class kept alive with it, so its id stays its own
        return number[1]

    def _register(self, function: Callable[..., Any]) -> int:
        number = self._callback_numbers.get(id(function))
        if number is None:
            number = self._callback_numbers[id(function)] = len(self._callbacks) + 1
            self._callbacks[number] = function
        return number

    # -- sandbox -> test side ---------------------------------------------------------------

    def decode(self, value: Any, stamp: int = -1) -> Any:
        """A value from the sandbox; the project's lists, dicts and sets in it are copies current at epoch ``stamp``
        (-1: a copy made while the project's code still runs, as a callback's arguments or a pull's items are)."""
        if isinstance(value, list):
            return [self.decode(v, stamp) for v in value]
        if not isinstance(value, dict):
            return value
        if "bi" in value:  # a builtin the sandbox named: ours, if it is one both sides share
            name = str(value["bi"])
            if name not in _SHARED_BUILTINS:
                raise ValueError("the sandbox named a builtin it may not hand the test")
            return getattr(builtins, name)
        if "bd" in value:  # a builtin type's own method (object.__lt__, dict.get): ours
            owner, attribute = (str(v) for v in value["bd"])
            kind = getattr(builtins, owner) if owner in _SHARED_BUILTINS else None
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
        if "h" in value and not ({"L", "d", "S"} & value.keys()):
            return self.proxy(value)
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
        known = self._proxies.get(number)
        if type(known) is kind:  # the same project object: the same local object, refreshed
            known._adbg_fill(data)
            known._adbg_epoch = stamp
            return known
        made = kind(data)
        made._adbg_remote, made._adbg_handle, made._adbg_epoch = self, number, stamp
        self._proxies[number] = made
        return made

    def proxy(self, info: dict) -> Any:
        number = int(info["h"])
        known = self._proxies.get(number)
        if known is not None:
            return known
        kind = info.get("k")
        if kind == "exc":
            made: Any = self.exception_class(list(info.get("m", [])))
            if issubclass(made, StandIn) and "_adbg_class" not in made.__dict__:
                made._adbg_class = (self, number)
        elif kind == "exi":  # an exception object (one the test constructed, one a function returned)
            made = self._exception_object(list(info.get("m", [])), number)
        elif kind == "class":
            made = RemoteClass(self, number, str(info.get("q", "?")))
        elif kind == "module":
            made = RemoteModule(str(info.get("t", "module")), self, number)
        elif kind == "tzinfo":
            made = RemoteTzinfo(self, number, str(info.get("t", "tzinfo")))
        else:
            named = info.get("c")
            kind = self.project_type(str(named[0]), str(named[1])) if isinstance(named, list) and len(named) == 2 else None
            made = RemoteObject(self, number, str(info.get("t", "object")), kind, info.get("g") == 1)
        self._proxies[number] = made
        return made

    def project_type(self, module: str, qualname: str) -> type:
        """The local class standing for a project object's class in ``obj.__class__`` (one per class: the same class
        twice is the same local class)."""
        made = self._types.get((module, qualname))
        if made is None:
            name = qualname.rpartition(".")[2] or "object"
            made = self._types[(module, qualname)] = type(name, (RemoteObject,), {"__module__": module, "__qualname__": qualname, "__slots__": ()})
        return made

    def _exception_object(self, chain: list, number: int) -> BaseException:
        cls, ref = self.exception_class(chain), _Ref(self, number)
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
                made = _StandInMeta(name.rpartition(".")[2] or "ProjectError", tuple(parents), {"__module__": module, "__qualname__": name})
            except TypeError:  # bases a local class cannot combine (builtin layouts): keep the first line
                made = _StandInMeta(name.rpartition(".")[2] or "ProjectError", (StandIn, parents[-1]), {"__module__": module, "__qualname__": name})
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


class _StandInMeta(type):
    """The class of a project exception's stand-in: what the local class lacks (``ParseException.explain_exception``,
    a class attribute) is the project class's, read in the sandbox."""

    def __getattr__(cls, name: str) -> Any:
        __tracebackhide__ = True
        if not _local_only(name):
            for klass in cls.__mro__:
                own = klass.__dict__.get("_adbg_class")
                if own is not None:
                    return own[0].op("getattr", _Ref(own[0], own[1]), name)
        raise AttributeError(name)


class StandIn:
    """Mixin of the local stand-ins for the project's exception classes. Constructing one the sandbox named (``raise
    pp.ParseException(s, loc, msg)`` in a test's parse action) constructs the project's exception there: the test holds
    a stand-in of that very object, which the project gets back when the test raises it at it."""

    _adbg_message = ""
    _adbg_remote: Remote | None = None
    _adbg_handle = 0
    _adbg_class: tuple[Remote, int] | None = None  # set on a class the sandbox named: its handle there

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        own = cls.__dict__.get("_adbg_class")
        if own is not None:
            made = own[0].op("call", _Ref(own[0], own[1]), *args, **kwargs)
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
        if remote is None or _local_only(name):
            raise AttributeError(name)
        return remote.op("getattr", _Ref(remote, self._adbg_handle), name)


class _Ref:
    """A bare handle, for requests about an exception object."""

    def __init__(self, remote: Remote, number: int):
        self._adbg_remote, self._adbg_handle = remote, number


# C functions that, called on an iterator, take every item before they return or run anything else (so pulling
# them in batches runs no project code they would not run, in the same order): "all" whatever the items; "plain"
# while each item is plain hashable data (hashing a project object would ask the project between two items, and an
# unhashable one stops the consumer); "numbers" while each is an int, float or bool (adding or comparing anything
# else may run project code or fail, and stop the consumer).
_CONSUMERS = ((list, "all"), (tuple, "all"), (sorted, "all"), (set, "plain"), (frozenset, "plain"),
              (sum, "numbers"), (min, "numbers"), (max, "numbers"))
_CALL_SITES: dict[tuple[types.CodeType, int], tuple[str, str] | None] = {}
_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})


def _consumer(frame: types.FrameType) -> str | None:
    """The mode of the consumer the frame's current instruction calls (``_CONSUMERS``), None for anything else: a
    ``for`` loop, ``next()``, ``any()``, ``map()``, a call whose callee this cannot name for sure."""
    key = (frame.f_code, frame.f_lasti)
    site = _CALL_SITES.get(key, ())
    if site == ():
        site = _CALL_SITES[key] = _call_site(*key) if len(_CALL_SITES) < 100_000 else None
    if site is None:
        return None
    kind, name = site
    namespaces = (frame.f_globals, frame.f_builtins) if kind == "LOAD_GLOBAL" else (frame.f_locals, frame.f_globals, frame.f_builtins)
    for namespace in namespaces:
        if name in namespace:
            callee = namespace[name]
            return next((mode for function, mode in _CONSUMERS if callee is function), None)
    return None


def _call_site(code: types.CodeType, offset: int) -> tuple[str, str] | None:
    """How the callee of the one-argument call at ``offset`` was loaded: (LOAD_GLOBAL or LOAD_NAME, its name), found
    by walking back over the argument's instructions; None when the instruction is anything else or the walk meets
    a jump, a jump target or an instruction it cannot account for (the caller then pulls item by item)."""
    try:
        instructions = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    except Exception:  # noqa: BLE001  (bytecode this cannot read: no batching)
        return None
    at = next((n for n, i in enumerate(instructions) if i.offset == offset), None)
    if at is not None and instructions[at].opname == "PRECALL" and at + 1 < len(instructions):
        at += 1  # 3.11 once the call site is specialised: PRECALL makes the call of a builtin class itself
    if at is None or instructions[at].opname != "CALL" or instructions[at].arg != 1:
        return None
    at -= 1
    if at >= 0 and instructions[at].opname == "PRECALL":  # 3.11
        if instructions[at].arg != 1:
            return None
        at -= 1
    depth = 0  # stack slots the instructions from here to the call leave: the argument's one, then the callee
    while at >= 0:
        instruction = instructions[at]
        if instruction.opcode in dis.hasjrel or instruction.opcode in dis.hasjabs or instruction.opname == "KW_NAMES":
            return None
        try:
            effect = dis.stack_effect(instruction.opcode, instruction.arg, jump=False) if instruction.opcode >= dis.HAVE_ARGUMENT \
                else dis.stack_effect(instruction.opcode)
        except ValueError:
            return None
        if depth == 1 and effect >= 1:  # the instruction that pushed the slot below the argument: the callee
            # (a jump to the callee's load, the line after a ``with`` block, still runs every instruction from it to the call)
            if instruction.opname in _LOADS and isinstance(instruction.argval, str):
                return instruction.opname, instruction.argval
            return None
        if instruction.is_jump_target:  # a jump into the argument's instructions: the callee may be another
            return None
        depth += effect
        if depth > 1:  # no proper part of one argument leaves two values: not code this walk understands
            return None
        at -= 1
    return None


class _MethodCall:
    """``target.name`` that the caller's very next step calls (``_method_call``): the attribute read and the call made
    in one request ("callattr"), in the same order and thread as two would make them; it is never seen otherwise."""

    __slots__ = ("remote", "target", "name")

    def __init__(self, remote: Remote, target: Any, name: str):
        self.remote, self.target, self.name = remote, target, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return self.remote.op("callattr", self.target, self.name, *args, **kwargs)


_METHOD_SITES: dict[tuple[types.CodeType, int], str | None] = {}
_QUIET_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_CONST", "LOAD_DEREF"})  # they run no code at all


def _method_call(frame: types.FrameType, name: str) -> bool:
    """Whether the frame is reading attribute ``name`` to call it at once: a method load whose arguments are only
    local names, constants and globals, so nothing (no project code) can run between the read and the call."""
    key = (frame.f_code, frame.f_lasti)
    site = _METHOD_SITES.get(key, "")
    if site == "":
        site = _METHOD_SITES[key] = _method_site(*key) if len(_METHOD_SITES) < 100_000 else None
    return site == name


def _method_site(code: types.CodeType, offset: int) -> str | None:
    """The attribute the method load at ``offset`` reads, if the instructions after it up to its call are quiet
    loads (``_QUIET_LOADS``, globals) and nothing jumps into them; None otherwise."""
    try:
        instructions = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    except Exception:  # noqa: BLE001  (bytecode this cannot read: no fusing)
        return None
    at = next((n for n, i in enumerate(instructions) if i.offset == offset), None)
    if at is None:
        return None
    load = instructions[at]
    # LOAD_ATTR too: 3.11 reads ``module.function`` for a call that way. The value read is the callee when the call
    # right after takes exactly the quiet loads between them as its arguments.
    if load.opname not in ("LOAD_METHOD", "LOAD_ATTR"):
        return None
    count, at = 0, at + 1
    while at < len(instructions):
        instruction = instructions[at]
        if instruction.is_jump_target:
            return None
        if not (instruction.opname in _QUIET_LOADS or instruction.opname == "LOAD_GLOBAL" and not instruction.arg & 1):
            break
        count, at = count + 1, at + 1
    if at < len(instructions) and instructions[at].opname == "KW_NAMES":
        at += 1
    if at < len(instructions) and instructions[at].opname == "PRECALL":  # 3.11
        if instructions[at].arg != count:
            return None
        at += 1
    if at < len(instructions) and instructions[at].opname == "CALL" and instructions[at].arg == count and not instructions[at].is_jump_target:
        return load.argval if isinstance(load.argval, str) else None
    return None


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
_SHARED_BUILTINS = frozenset((
    "object type int float complex bool str bytes bytearray list tuple dict set frozenset range slice memoryview "
    "property staticmethod classmethod super enumerate zip map filter reversed abs all any ascii bin callable chr "
    "divmod format hash hex id isinstance issubclass iter len max min next oct ord pow repr round sorted sum "
    "Ellipsis NotImplemented"
).split())
_COPYABLE_ITERATORS = frozenset(
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
    allowed = _PLAIN_DATA | _COPYABLE_ITERATORS

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
            entry += [p.default, False] if type(p.default) in _SCALARS else [None, True]
        spec.append(entry)
    return spec


def _handle_of(value: Any) -> tuple[Remote, int] | None:
    kind = type(value)  # the real type: a Mock(spec=proxy) claims the proxy's __class__ and is no proxy
    if issubclass(kind, (RemoteObject, _Ref, RemoteModule, RemoteList, RemoteDict, RemoteSet)):
        return value._adbg_remote, value._adbg_handle
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
    """Any project object: every operation on it runs in the sandbox."""

    # weakly referable, as most objects are
    __slots__ = ("_adbg_remote", "_adbg_handle", "_adbg_type", "_adbg_kind", "_adbg_generator", "__weakref__")

    def __init__(self, remote: Remote, number: int, type_name: str, kind: type | None = None, generator: bool = False):
        object.__setattr__(self, "_adbg_remote", remote)
        object.__setattr__(self, "_adbg_handle", number)
        object.__setattr__(self, "_adbg_type", type_name)
        object.__setattr__(self, "_adbg_kind", kind)
        # a generator there (the handle's "g": 1, see child.py's _serve_repo for the wire): iter() is itself, len() fails
        object.__setattr__(self, "_adbg_generator", generator)

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # type: ignore[override]
        """``obj.__class__``: a local class named as the project object's (``cache.__class__.__name__``); ``type()``
        is still the proxy's, and ``isinstance`` against the project's classes still asks the sandbox."""
        return object.__getattribute__(self, "_adbg_kind") or type(self)

    def __getattr__(self, name: str) -> Any:
        __tracebackhide__ = True
        if _local_only(name):
            raise AttributeError(name)
        if _method_call(sys._getframe(1), name):
            return _MethodCall(self._adbg_remote, self, name)
        return self._adbg_remote.op("getattr", self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        __tracebackhide__ = True
        self._adbg_remote.op("setattr", self, name, value)

    def __delattr__(self, name: str) -> None:
        __tracebackhide__ = True
        self._adbg_remote.op("delattr", self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
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
        return _Bound(self, instance)

    def __enter__(self) -> Any:
        __tracebackhide__ = True
        return self._adbg_remote.op("enter", self)

    def __exit__(self, kind: Any, value: Any, tb: Any) -> Any:
        __tracebackhide__ = True
        if kind is None:
            return self._adbg_remote.op("exit", self, None, None, None)
        # The project's __exit__ sees the exception: its own object, or a builtin of the test's type.
        own = value if _handle_of(value) is not None else None
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
        # A generator's __iter__ returns it and runs none of the project's code: answered here.
        made = self if object.__getattribute__(self, "_adbg_generator") else remote.op("iter", self)
        remote.iterated(made, sys._getframe(1))
        return made

    def __next__(self) -> Any:
        __tracebackhide__ = True
        return self._adbg_remote.next(self, sys._getframe(1))

    def __len__(self) -> int:
        __tracebackhide__ = True
        if object.__getattribute__(self, "_adbg_generator"):  # what len() of a generator or a map says, without asking
            raise TypeError(f"object of type '{object.__getattribute__(self, '_adbg_type')}' has no len()")
        return self._adbg_remote.op("len", self)


_DOC = property(lambda self: self._adbg_remote.op("getattr", self, "__doc__"))  # the project's docstring, not ours
for _name in ("repr", "str", "bool", "hash", "abs", "int", "float", "index", "neg", "pos", "invert", "reversed"):
    setattr(RemoteObject, f"__{_name}__", _unary(_name))
_COMPARE_SITES: dict[tuple[types.CodeType, int], bool] = {}
_COMPARE_OP = dis.opmap["COMPARE_OP"]


def _compare_site(frame: types.FrameType) -> bool:
    """Whether the frame's current instruction is a comparison operator (not a call of ``__eq__`` and kin)."""
    key = (frame.f_code, frame.f_lasti)
    site = _COMPARE_SITES.get(key)
    if site is None:
        code = frame.f_code.co_code  # the unspecialised bytecode: COMPARE_OP whatever the interpreter made of it
        site = 0 <= frame.f_lasti < len(code) and code[frame.f_lasti] == _COMPARE_OP
        if len(_COMPARE_SITES) < 100_000:
            _COMPARE_SITES[key] = site
    return site


def _compare(name: str):
    """Against the test's own data, compare data with data here: the project's __eq__ never decides
    whether its result equals an expected value (an always-equal object is not 1.75)."""
    local = getattr(operator, name)

    def forward(self: RemoteObject, other: Any) -> Any:
        __tracebackhide__ = True
        if _handle_of(other) is not None:  # two project objects: the project's own comparison
            if _compare_site(sys._getframe(1)):  # ``a == b``: the whole operator there (reflection, subclasses first)
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

    _adbg_remote: Remote
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


_READABLE_DUNDERS = frozenset({"__name__", "__qualname__", "__doc__"})
_OBJECT_OPS: dict[str, Callable[..., Any]] = {
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
}  # fmt: skip


_RUNS: list[Remote] = []  # this test process's one run (the host serves one request): where project pickles load


def _from_sandbox_pickle(data: bytes) -> Any:
    __tracebackhide__ = True
    if not _RUNS:
        raise RuntimeError("a project object's pickle can be loaded only while its run is alive")
    return _RUNS[-1].op("unpickle", data)


class _Bound:
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


class _ShimMeta(type):
    """The metaclass of a class statement naming project classes among its bases (``__mro_entries__``): project bases
    only make a real subclass in the sandbox; with local bases (unittest.TestCase), a local class whose inherited
    project methods run in the sandbox (``_Bound``)."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> Any:
        __tracebackhide__ = True
        originals = namespace.get("__orig_bases__", bases)
        if "_adbg_class" not in namespace and all(isinstance(b, RemoteClass) for b in originals):
            return _subclass(name, tuple(originals), namespace)
        return super().__new__(mcls, name, bases, namespace, **kwargs)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if "_adbg_class" in cls.__dict__:  # the stand-in itself is never instantiated: the project class is
            return cls._adbg_class(*args, **kwargs)
        return super().__call__(*args, **kwargs)


def _shim_getattr(self: Any, name: str) -> Any:
    __tracebackhide__ = True
    if _local_only(name):
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
        return _Bound(value, self) if plain_function else value
    raise AttributeError(name)


_EXPLICIT_METHODS = frozenset({
    "__init__", "__repr__", "__str__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
    "__getitem__", "__setitem__", "__delitem__", "__len__", "__iter__", "__contains__", "__setattr__", "__delattr__",
    "__enter__", "__exit__", "__call__",
})  # fmt: skip


class RemoteClass(RemoteObject):
    """A project class: calling it constructs in the sandbox; ``isinstance`` asks the sandbox.

    ``class Mine(ProjectBase): ...`` in a test makes a real subclass in the sandbox whose methods the test defined
    are callbacks: the project's code calls them on its own instances, and they run here, given a proxy of it.
    """

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        # ``Base.__init__(self, ...)`` in a test's subclass: the project's method, not the proxy's own (Python's
        # implicit special-method lookups never come through here, so proxies still work as proxies).
        if name in _EXPLICIT_METHODS:
            __tracebackhide__ = True
            return object.__getattribute__(self, "_adbg_remote").op("getattr", self, name)
        return object.__getattribute__(self, name)

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type]:
        """In a class statement's bases, a local class standing for this project class (see ``_ShimMeta``)."""
        shims = self._adbg_remote._shims
        number = self._adbg_handle
        if number not in shims:
            shims[number] = _ShimMeta(self._adbg_type.rpartition(".")[2] or "ProjectClass", (), {
                "_adbg_class": self, "__getattr__": _shim_getattr, "__module__": "adbg_host.split"})
        return (shims[number],)

    def __instancecheck__(self, obj: Any) -> bool:
        __tracebackhide__ = True
        try:
            return bool(self._adbg_remote.op("isinstance", obj, self))
        except CannotPass:
            return False

    def __subclasscheck__(self, cls: Any) -> bool:
        __tracebackhide__ = True
        try:
            return bool(self._adbg_remote.op("issubclass", cls, self))
        except CannotPass:
            return False


# A project module's metadata that tests read (``pkg.__version__``, ``mod.__all__``, ``mod.__file__``), from the
# sandbox's module; other dunders are the import machinery's, kept here. ``__file__`` names a file in the sandbox,
# which this process never opens (``guard``'s audit hook refuses it).
MODULE_METADATA = frozenset({
    "__file__", "__version__", "__version_info__", "__all__", "__doc__", "__author__", "__license__", "__copyright__",
    "__email__", "__title__", "__url__", "__description__",
})  # fmt: skip


# The test runner's own top-level modules: never the project's, whatever the project names its files.
_RUNNER_NAMES = frozenset({"pytest", "_pytest", "pluggy", "py"})

# A module's dunders that belong to the import system of the process holding it: never the sandbox's.
_IMPORT_MACHINERY = frozenset({
    "__builtins__", "__loader__", "__spec__", "__path__", "__cached__", "__package__", "__name__", "__dict__",
    "__class__", "__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__dir__", "__init__", "__new__",
})  # fmt: skip


def _subclass(name: str, bases: tuple[Any, ...], namespace: dict[str, Any], keep_names: bool = False, remote: Remote | None = None) -> Any:
    __tracebackhide__ = True
    remote = remote or next(b._adbg_remote for b in bases if isinstance(b, RemoteClass))
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


class RemoteModule(types.ModuleType):
    """A project module: attributes are read from (and written to) the sandbox's module."""

    def __init__(self, name: str, remote: Remote, number: int):
        super().__init__(name)
        types.ModuleType.__setattr__(self, "_adbg_remote", remote)
        types.ModuleType.__setattr__(self, "_adbg_handle", number)

    def __getattr__(self, name: str) -> Any:
        __tracebackhide__ = True
        if _local_only(name) and name not in MODULE_METADATA and not self._adbg_own_dunder(name):
            raise AttributeError(name)
        if _method_call(sys._getframe(1), name):
            return _MethodCall(self._adbg_remote, self, name)
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
        if _local_only(name) or isinstance(value, RemoteModule):  # import machinery bookkeeping
            types.ModuleType.__setattr__(self, name, value)
        else:
            self._adbg_remote.op("setattr", self, name, value)

    def __delattr__(self, name: str) -> None:
        __tracebackhide__ = True
        if _local_only(name):
            types.ModuleType.__delattr__(self, name)
        else:
            self._adbg_remote.op("delattr", self, name)


class _ModuleDict(dict):
    """A read-only view of a project module's namespace: local bookkeeping, then the sandbox's names."""

    def __init__(self, local: dict, module: RemoteModule):
        super().__init__(local)
        self._module = module

    def __missing__(self, key: str) -> Any:
        if not isinstance(key, str) or _local_only(key):
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


def _in_tests_tree(name: str) -> bool:
    """Whether a top-level module of that name is on the path outside site-packages (a helper beside the tests). A
    directory of tests with no ``__init__.py`` is no helper: its name is the project's (``examples/`` holding tests)."""
    here = [p for p in sys.path if not p.rstrip("/").endswith("-packages")]
    try:
        found = importlib.machinery.PathFinder.find_spec(name, here)  # path entries only: no recursion
    except (ImportError, ValueError):
        return False
    return found is not None and found.origin is not None


class LibraryCopies:
    """A library of the test environment that imports one of the project's names (hypothesis imports ``attr``) gets
    the environment's own installed copy, as the test machinery it is; the tests get the project. Each import made
    by a file in site-packages runs with the installed modules in ``sys.modules`` (kept here between imports) and the
    project's proxies put back after it, so the library's names stay bound to its copy."""

    def __init__(self, finder: ProjectFinder, tests_root: str):
        self.finder, self.tests_root = finder, tests_root
        self.copies: dict[str, types.ModuleType] = {}
        self.real_import = builtins.__import__
        self.lock = threading.RLock()
        self.depth = 0

    def install(self) -> None:
        builtins.__import__ = self.hooked

    def take_loaded(self) -> None:
        """The test environment's modules already loaded under the project's names, kept for the libraries'
        imports: the tests' imports find the project instead."""
        with self.lock:
            for key in [k for k in sys.modules if k.partition(".")[0] in self.finder.names]:
                self.copies[key] = sys.modules.pop(key)

    def hooked(self, name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if self.depth == 0 and self._library_wants_project(name, globals, level):
            return self._import_copy(name, globals, locals, fromlist, level)
        return self.real_import(name, globals, locals, fromlist, level)

    def _library_wants_project(self, name: str, globals: Any, level: int) -> bool:
        if not isinstance(globals, dict):
            return False
        file = globals.get("__file__")
        if not isinstance(file, str) or "-packages" + os.sep not in file or os.path.abspath(file).startswith(self.tests_root):
            return False
        top = name if level == 0 else str(globals.get("__package__") or "")
        return top.partition(".")[0] in self.finder.names

    def _import_copy(self, name: str, globals: Any, locals: Any, fromlist: Any, level: int) -> Any:
        tops = self.finder.names
        with self.lock:
            proxies = {k: m for k, m in sys.modules.items() if k.partition(".")[0] in tops}
            for key in proxies:
                del sys.modules[key]
            sys.modules.update(self.copies)
            self.finder.enabled, self.depth = False, self.depth + 1
            try:
                return self.real_import(name, globals, locals, fromlist, level)
            finally:
                self.finder.enabled, self.depth = True, self.depth - 1
                for key in [k for k in sys.modules if k.partition(".")[0] in tops]:
                    self.copies[key] = sys.modules.pop(key)
                sys.modules.update(proxies)


class ProjectFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of the project's top-level names (and everything under them) become proxies."""

    def __init__(self, remote: Remote, names: set[str]):
        self.remote, self.names = remote, set(names)
        self.enabled = True  # off while a library of the test environment imports its own copy (LibraryCopies)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        top = fullname.partition(".")[0]
        if top not in self.names or not self.enabled:
            return None
        if top == fullname and _in_tests_tree(top):
            return None  # the tests' own helper module wins, as it does under plain pytest
        if top != fullname and not isinstance(sys.modules.get(top), RemoteModule):
            return None  # a submodule of a package that is not the project's
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        __tracebackhide__ = True
        module = self.remote.op("import", spec.name)
        if not isinstance(module, RemoteModule):
            raise ImportError(f"{spec.name} is not a module in the project")
        types.ModuleType.__setattr__(module, "__name__", spec.name)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Already executed, in the sandbox."""


class _ProjectModuleName:
    """``proxy.__module__``: the project object's (``C.__init__.__module__`` is the module that made the class)."""

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        __tracebackhide__ = True
        if instance is None:
            return __name__
        return instance._adbg_remote.op("getattr", instance, "__module__")


for _kind in (RemoteObject, RemoteTzinfo, RemoteClass):  # their docstrings document this module; tests read the project's
    _kind.__doc__ = _DOC  # type: ignore[assignment]
    _kind.__module__ = _ProjectModuleName()  # type: ignore[assignment]
