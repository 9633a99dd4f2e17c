"""The split verdict's trusted half: a project's modules as proxies of objects living in the sandbox.

This module is the conversation (``Remote``: requests, replies, callbacks); ``codec`` encodes and decodes values,
``proxies``, ``classes`` (project classes as local classes) and ``stand_ins`` are what the tests hold, ``importer``
imports the project through proxies, ``sites`` reads the test's bytecode at call sites. The wire tags both halves use are ``env/sandbox/inside/protocol.py``'s.

    remote = Remote(channel)                  # the sandbox run's conversation (channel.py)
    remote.install({"ledger"})                 # `import ledger.accounts` now yields proxies
    from ledger.accounts import Account        # a local class standing for the project's (classes.py)
    acct = Account("alice")                    # constructed in the sandbox; `acct` is a proxy: type(acct) is Account
    assert acct.balance() == 0                 # the call and the comparison run there; 0 comes back as data

The tests and their expected values stay in this (trusted) process; the project's code never runs
here. What crosses is plain data (exact types: tuple, set, bytes, datetime, Decimal ...) and
numbered handles; every operation on a handle (attribute, call, ``==``, ``len``, iteration ...)
is one request to the sandbox, with exceptions that change no order in which the project's code
runs: ``obj.method(x)`` whose arguments are quiet loads is one request (``method_call``); a
project iterator that ``list``, ``sorted``, ``set``, ``sum`` or a ``reduce`` of arithmetic takes whole crosses in batches
(``Remote.next``), its bare StopIteration raised here, and a call whose result such a consumer takes right after
brings its first batch with it (``Remote.call_feeding``); ``iter()`` of a generator or of a builtin
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
import io
import itertools
import os
import sys
import types
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .channel import Channel, RemoteError, RunAborted
from .codec import COPYABLE_ITERATORS, SCALARS, SHARED_BUILTINS, Codec
from .importer import RUNNER_NAMES, LibraryCopies, ProjectFinder
from .proxies import OBJECT_OPS, READABLE_DUNDERS, RUNS, Bound, ClassProxy, handle_of
from .sites import after_iter, consumer_call, consumer_mode
from .stand_ins import CannotPass, ProjectStopped, StandIn

_NOTHING = object()
_WIRE_SCALARS = frozenset(SCALARS)  # sent as they are: ``Codec.encode`` returns them unchanged
_NO_KWARGS = {None: ("d", [])}  # never changed: marshalled as it is


class Remote(Codec):
    """One sandbox run seen from the test process: encodes, decodes and caches proxies."""

    def __init__(self, run: Channel):
        self.run = run
        self.ops = 0  # requests sent: a test that sends none never touched the project
        self.proxies: dict[int, Any] = {}
        self._kinds: dict[int, Any] = {}
        self._exceptions: dict[str, type[BaseException]] = {}
        # The test's functions the project may call back, by number; kept for the run (the project may keep them).
        self._callbacks: dict[int, Callable[..., Any]] = {}
        self._callback_numbers: dict[int, int] = {}
        self._shapes: dict[int, tuple[str, list[list[Any]] | None, list[str | None]]] = {}  # a callback's name, signature, about
        self._outcome: BaseException | None = None  # a callback's pytest.fail or skip, raised when its operation ends
        self._classes: dict[int, tuple[int, type]] = {}  # id of a test-defined class -> (its twin's handle, the class)
        self.shims: dict[int, type] = {}  # a project class -> the local base standing for it beside local bases
        # The items a pull brought that no one has taken yet, and the batch a consumer is taking (``_batches``)
        self._pulled: dict[int, collections.deque[Any]] = {}
        self._shared: dict[int, Iterator[Any]] = {}
        self._stopped: set[int] = set()  # iterators whose pull ended in a bare StopIteration after its items
        # Iterators a call returned with a first pull for the consumer that takes them right after (``call_feeding``):
        # handle -> (that frame, code, the consumer call's offsets, the mode of its next pulls or None: no more pulls)
        self._prepared: dict[int, tuple[types.FrameType, types.CodeType, tuple[int, ...], str | None]] = {}
        # The len() an "iterpull" asked of an object for the consumer (list, tuple) that asks it next: handle ->
        # (that consumer's frame and instruction, the size, the TypeError's message in a tuple, or "kept": ask, it
        # raises there)
        self._sizes: dict[int, tuple[types.FrameType, int, Any]] = {}
        # Operations sent so far: a project container copied from a reply is current until the next one (``fresh``).
        self.epoch = 0
        self.tests_root = os.path.join(os.getcwd(), "")  # the host runs in the task's tests tree
        RUNS.append(self)
        run.on_callback = self.callback  # type: ignore[method-assign]  # the channel asks this run's Remote

    # -- requests -------------------------------------------------------------------------

    def op(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # failures show the test's line, not the proxy machinery
        return self.request(name, args, kwargs)[0]

    def request(self, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[Any, int]:
        """One operation: its decoded value and the epoch its containers are current at (``fresh``)."""
        __tracebackhide__ = True
        wire_args = tuple([a if type(a) in _WIRE_SCALARS else self.encode(a) for a in args])
        wire_kwargs = {None: ("d", [(k, self.encode(v)) for k, v in kwargs.items()])} if kwargs else _NO_KWARGS
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
        if len(reply) > 2:  # more than its id and value: what the project read, printed, warned
            self.advance(reply.get("adv"))
            self.replay_output(reply.get("o"))
            self.replay_warnings(reply.get("w"))
        if self._outcome is not None:
            outcome, self._outcome = self._outcome, None
            raise outcome
        if reply.get("mt") is not None:  # the project runs threads of its own: they may change a copy at any time
            stamp = -1
        value = reply.get("ok")
        if name == "callpull" and isinstance(value, dict) and isinstance(value.get("T"), list) and len(value["T"]) == 2:
            return (self.decode(value["T"][0], stamp), self.decode(value["T"][1], -1)), stamp  # the pull's copies: see above
        if name == "iterpull" and isinstance(value, dict) and isinstance(value.get("T"), list) and len(value["T"]) == 3:
            made, size, pulled = value["T"]
            size = tuple(str(m) for m in size["T"][:1]) if isinstance(size, dict) and isinstance(size.get("T"), list) else size
            return (self.decode(made, -1), size if size is None or type(size) in (int, str, tuple) else None, self.decode(pulled, -1)), stamp
        return self.decode(value, stamp), stamp

    def fresh(self, stamp: int) -> bool:
        """Whether a container copied from a reply stamped ``stamp`` is still the project's container as it is: no
        operation has been sent since (nothing of the project's ran: one thread, see ``request``)."""
        return stamp == self.epoch

    def iterated(self, iterator: Any, caller: types.FrameType) -> Any:
        """``iter()`` of a project object gave ``iterator``: what the caller gets. When the caller's instruction is a
        call of a consumer that takes every item (``list``, ``sorted``, ``set`` ...: ``consumer_mode``), a local iterator
        over the batches of items a pull brings (``_batches``): the consumer, a C function, takes each batch at C
        speed and holds that iterator alone; anyone else gets ``iterator`` itself, pulled item by item (``next``)."""
        handle = handle_of(iterator)
        if handle is None or handle[0] is not self:
            return iterator
        number = handle[1]
        prepared = self._prepared.pop(number, None)
        if prepared is not None and prepared[0] is caller and prepared[1] is caller.f_code and caller.f_lasti in prepared[2]:
            mode = prepared[3]  # a first pull came with the call or the iter(); None: it met the end
        else:
            mode = consumer_mode(caller)
            if mode is None:
                return iterator
        return itertools.chain.from_iterable(self._batches(iterator, number, mode))

    def _batches(self, iterator: Any, number: int, mode: str | None) -> Iterator[Iterator[Any]]:
        """The batches of ``iterator``'s items its consumer takes: the items here first, then pulls in ``mode`` (None:
        none, the last pull met the end) until one meets the end; its bare StopIteration ends this generator, any other
        exception is raised by the "next" request after the items, where the consumer meets it. Each batch is a list
        iterator ``next`` shares: a next() of the project iterator itself (the test's code, called back while the
        consumer works) takes the consumer's next item, as in process."""
        __tracebackhide__ = True
        while True:
            items = self._pulled.pop(number, None)
            if items:
                shared = self._shared[number] = iter(list(items))
                yield shared
                continue
            if number in self._stopped:  # the pull met a bare StopIteration after its items
                self._stopped.discard(number)
                self._shared.pop(number, None)
                return
            if mode is None:  # the last pull met an exception: the next "next" raises it
                try:
                    item = self.op("next", iterator)
                except StopIteration:  # one with a value: the consumer only stops (raised here, PEP 479 would say otherwise)
                    self._shared.pop(number, None)
                    return
                self._pulled[number] = collections.deque((item,))
                continue
            batch, ended = self.op("pull", iterator, mode)
            if ended == 2 and type(ended) is int:  # a bare StopIteration after the items
                self._stopped.add(number)
            elif ended:
                mode = None
            elif mode == "ints" and any(type(item) is float for item in batch):  # the sum is a float from here on
                mode = "floats"
            if batch:
                self._pulled[number] = collections.deque(batch)

    def next(self, iterator: Any, caller: types.FrameType) -> Any:
        """``next()`` of a project iterator by anyone but a consumer that takes every item (``iterated``): the items a
        pull already brought first, else one request."""
        __tracebackhide__ = True
        number = iterator._adbg_handle
        shared = self._shared.get(number)
        if shared is not None:
            item = next(shared, _NOTHING)
            if item is not _NOTHING:
                return item
            del self._shared[number]
        pulled = self._pulled.get(number)
        if pulled:
            return pulled.popleft()
        if number in self._stopped:  # a pull met a bare StopIteration after these items: the caller meets it now
            self._stopped.discard(number)
            self._pulled.pop(number, None)
            raise StopIteration
        return self.op("next", iterator)

    def iter_feeding(self, obj: Any, caller: types.FrameType) -> Any:
        """iter() of a project object (not a generator). When the caller's instruction calls a consumer that takes
        every item and does nothing before its first next() but perhaps a len() of the object (``after_iter``:
        list, tuple, sorted, set, sum ...), iter(), that len() and the first pull are one request ("iterpull"): the
        consumer's len() and first items then wait here. Anything else: one "iter" request."""
        __tracebackhide__ = True
        found = consumer_call(caller)
        after = None if found is None else after_iter(found[0])
        if after is None:
            return self.op("iter", obj)
        mode, number = found[1], obj._adbg_handle
        (made, size, pulled), _ = self.request("iterpull", (obj, mode, after == ("len",)), {})
        if size is not None:
            self._sizes[number] = (caller, caller.f_lasti, size)
        handle = handle_of(made)
        if pulled is not None and handle is not None and handle[0] is self:
            self._hold(handle[1], caller, (caller.f_lasti,), mode, pulled)
        return made

    def size(self, obj: Any, caller: types.FrameType) -> Any:
        """len() of a project object: the one an "iterpull" asked for the consumer now asking (the same frame at the
        same instruction), else one request."""
        __tracebackhide__ = True
        known = self._sizes.pop(obj._adbg_handle, None) if self._sizes else None
        if known is not None and known[0] is caller and known[1] == caller.f_lasti and known[2] != "kept":
            if isinstance(known[2], tuple):  # the project's len() failed with a plain TypeError: the consumer goes on
                raise TypeError(*known[2])
            return known[2]
        return self.op("len", obj)  # raises what the "iterpull" met, if it kept an exception

    def _hold(self, number: int, caller: types.FrameType, offsets: tuple[int, ...], mode: str, pulled: Any) -> None:
        """A first pull made with the request before the consumer's iter(): its items wait for the consumer."""
        batch, ended = pulled
        items = collections.deque(batch)
        after = None if ended else "floats" if mode == "ints" and any(type(item) is float for item in items) else mode
        self._prepared[number] = (caller, caller.f_code, offsets, after)
        if ended == 2 and type(ended) is int:  # a bare StopIteration after the items: raised here (see ``next``)
            self._stopped.add(number)
        if items:
            self._pulled[number] = items

    def call_feeding(self, feeding: tuple[str, tuple[int, ...]], caller: types.FrameType, target: Any, name: str | None,
                     args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        """``consumer(target.name(*args))`` (name None: ``consumer(target(*args))``) where the consumer takes the
        result whole (``feeds_consumer``): the call and, if its result is a generator, the consumer's first pull, in one
        request ("callpull"); the items wait here for the consumer, which comes next with nothing run in between."""
        __tracebackhide__ = True
        mode, offsets = feeding
        (result, pulled), _ = self.request("callpull", (mode, target, name, *args), kwargs)
        handle = handle_of(result)
        if pulled is not None and handle is not None and handle[0] is self:
            self._hold(handle[1], caller, offsets, mode, pulled)
        return result

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
            handle = handle_of(exc)
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
            if (dunder and name not in READABLE_DUNDERS) or (name.startswith("_") and not dunder and not own):
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
        forward = OBJECT_OPS.get(op)
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
        if type(value) in SCALARS or handle_of(value) is not None or isinstance(value, (Bound, ClassProxy)):
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
            if iterator is not None and type(iterator) in COPYABLE_ITERATORS and isinstance(entry[1], int) and entry[1] > 0:
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

    def install(self, names: set[str], source_paths: Sequence[str] = ()) -> ProjectFinder:
        """Route imports of the project's top-level ``names`` to the sandbox.

        Never a name the test process needs itself (the standard library, pytest, pluggy, this host) or finds in
        the tests tree (a helper module): a project file called ``json.py`` or ``_pytest/`` must not stand in for
        them. A copy of the project *installed* in the test environment never stands in for the project either:
        the finder comes first, so the project's names reach the sandbox even where site-packages holds them. A
        project named like a library pytest has already loaded (``packaging``, ``iniconfig``) is the tests' too:
        pytest keeps the objects it holds, and its later imports get its own copy (``LibraryCopies``).
        """
        own = {n for n in names if n in sys.stdlib_module_names or n in RUNNER_NAMES or n.startswith("adbg")}
        roots = [os.path.normpath(os.path.join(self.tests_root, p)) for p in source_paths if isinstance(p, str) and not os.path.isabs(p)]
        finder = ProjectFinder(self, set(names) - own, roots)
        sys.meta_path.insert(0, finder)  # before site-packages; the tests tree is asked first at each import
        copies = LibraryCopies(finder, self.tests_root)
        copies.take_loaded()
        copies.install()
        codecs.register(self.find_codec)  # asked last: only for names the standard library does not know
        try:
            self.op("share_builtins", sorted(SHARED_BUILTINS))  # which builtins the sandbox may name as ours
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
