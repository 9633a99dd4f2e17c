"""Repository mode, the operations the trusted test process applies to project objects here (``repo_ops``), the
pulls of iterators, pickles made and loaded in this process, and the exception reply of a repository run."""

import sys

from . import MODULES, PACKAGE
from .encoder import MAX_DEPTH, quote, safe_str
from .values import BUILTINS, FUNCTION, GENERATOR, SELF_ITERATORS, RepoEncoder, class_chain, test_object

_OURS = frozenset(PACKAGE + "." + name for name in MODULES)  # this package's modules


def pickle_here(obj, protocol, state):
    """A test's pickle.dumps of a project object, made here. Classes made here for the test (its subclasses of
    project classes, twins of its classes) and its own objects cannot be found by name in this process: they go as
    references to themselves, which only a load in this same run (``unpickle_here``) resolves."""
    import io
    import pickle

    made_list = state.setdefault("made", [])
    made = {id(kind): number for number, kind in enumerate(made_list)}
    # the tests' modules (never imported here), and __main__: what a class the project makes for a caller
    # (attrs.make_class) names when that caller is this process's dispatcher instead of the test's module: one of
    # this package's modules (out of sys.modules once loaded)
    test_modules = ({kind.__module__ for kind in made_list} - set(sys.modules)) | {"__main__"} | _OURS
    proxies = tuple((state.get("test_classes") or {}).values())

    class Pickler(pickle.Pickler):
        def persistent_id(self, value):
            if isinstance(value, type) and id(value) not in made and value.__module__ in test_modules:
                made[id(value)] = len(made_list)  # the project remade a test's class (attrs' slots=True)
                made_list.append(value)
            if isinstance(value, type) and id(value) in made:
                return ("made", made[id(value)])
            standin = state["standins"].get(id(value)) if type(value) is FUNCTION else None
            if standin is not None and standin[1] is value:  # a test's function: itself again on loading
                return ("sf", standin[0])
            if proxies and type(value) in proxies:
                flags = next(k for k, v in state["test_classes"].items() if v is type(value))
                return ("lo", object.__getattribute__(value, "_adbg_number"), flags)
            return None

    buffer = io.BytesIO()
    Pickler(buffer, protocol).dump(obj)
    return buffer.getvalue()


def unpickle_here(data, state):
    import io
    import pickle

    class Unpickler(pickle.Unpickler):
        def persistent_load(self, pid):
            if type(pid) is tuple and pid[0] == "made":
                return state.setdefault("made", [])[pid[1]]
            if type(pid) is tuple and pid[0] == "lo":
                return test_object(state, pid[1], pid[2])
            if type(pid) is tuple and pid[0] == "sf" and pid[1] in state.get("standin_numbers", {}):
                return state["standin_numbers"][pid[1]]
            raise pickle.UnpicklingError("unknown reference in a pickle of this run")

    return Unpickler(io.BytesIO(data)).load()


def subclass(name, bases, attrs, made_here=None):
    """A test's subclass of project classes: a real class here, whose methods the test defined run in the trusted
    process (each is a callback, given this instance as a project object)."""
    made = {}
    for key, (kind, value) in attrs.items():  # the test's functions arrive as stand-ins taking their parameters
        if kind == "method":
            made[key] = value if type(value) is FUNCTION else (lambda fn: lambda self, *a, **k: fn(self, *a, **k))(value)
        elif kind == "static":
            made[key] = staticmethod(value)
        elif kind == "class":
            made[key] = classmethod(value if type(value) is FUNCTION else (lambda fn: lambda cls, *a, **k: fn(cls, *a, **k))(value))
        elif kind == "property":
            made[key] = property(value if type(value) is FUNCTION else (lambda fn: lambda self: fn(self))(value))
        else:
            made[key] = value
    kind = type(str(name), tuple(bases), made)
    if made_here is not None:
        made_here.append(kind)
    return kind


_COMPARISONS = frozenset(("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"))


def repo_ops():
    import importlib
    import operator

    ops = {name: getattr(operator, name) for name in (
        "getitem", "setitem", "delitem", "contains", "eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul",
        "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor", "lshift", "rshift", "neg", "pos",
        "invert", "index",
    )}
    ops.update(
        repr=repr, str=str, len=len, bool=bool, hash=hash, iter=iter, next=next, abs=abs, int=int, float=float,
        format=format, round=round, reversed=reversed, getattr=getattr, setattr=setattr, delattr=delattr,
        isinstance=isinstance, issubclass=issubclass, dir=lambda obj: sorted(str(n) for n in dir(obj)),
        call=lambda fn, *args, **kwargs: fn(*args, **kwargs),
        method=lambda obj, name, *args, **kwargs: getattr(obj, name)(*args, **kwargs),
        enter=lambda obj: type(obj).__enter__(obj),
        exit=lambda obj, *args: type(obj).__exit__(obj, *args),
        exit_with=_exit_with,
        items=lambda obj: tuple(dict.items(obj)) if isinstance(obj, dict) else tuple(obj),
        rop=lambda name, a, b: getattr(operator, name)(b, a),  # reflected operators: b <op> a
        # a.__eq__(b) as the test called it: the class's method alone (NotImplemented stays NotImplemented)
        dunder=lambda name, a, b: getattr(type(a), name)(a, b) if name in _COMPARISONS else NotImplemented,
    )
    ops["codec"] = lambda name: __import__("codecs").lookup(name)  # one the project registered, for the tests
    ops["xor_"] = operator.xor  # the test side names the bitwise operators and_, or_, xor_ alike
    ops["import"] = importlib.import_module
    ops["data"] = _as_data
    ops["copy"] = lambda obj: __import__("copy").copy(obj)
    ops["deepcopy"] = lambda obj: __import__("copy").deepcopy(obj)
    return ops


MAX_PULL = 512  # items one "pull" hands over at most
MAX_PULL_TEXT = 256 * 1024  # characters of encoded items after which a pull stops (the reply limit is far above)


class Encoded(str):
    """A reply value already encoded (a pull's items, each encoded as it was made)."""


_NUMBERS = (int, float, bool)  # exact types: adding or comparing them runs no project code and cannot fail


def _plain_hashable(value, depth=0):
    """A value the trusted side gets as its own hashable data: hashing or comparing it there runs no project code and
    cannot fail (exact types only: a subclass stays a handle)."""
    kind = type(value)
    if kind is tuple:
        return depth < MAX_DEPTH and all(_plain_hashable(v, depth + 1) for v in tuple.__iter__(value))
    return value is None or kind is bool or kind is int or kind is float or kind is str or kind is bytes


def pull(obj, mode, state):
    """Items of a project iterator the test's consumer takes all of (``list(it)``, ``sorted(it)``: mode "all"), or
    takes while each is plain hashable data (``set(it)``: mode "plain"), a plain number (``max(it)``: mode
    "numbers"), an int (``sum(it)``, ``reduce(mul, it)`` before any float: mode "ints") or a float or an int a float
    can hold (after a float: mode "floats"); those stop after the first item that is not, the one where the consumer
    could stop or run project code (adding an int too large for a float to a float fails). Pulled one by one with
    next() as the single "next" operation would be, in this thread; an exception that ends the pull (StopIteration
    included) is kept and raised by the next "next" operation on the iterator, where the consumer would have met it
    (a pull after it pulls nothing more)."""
    takes = _TAKES[mode]
    kept = state["pending"].get(id(obj))
    encoded, size, ended = [], 0, kept is not None and kept[0] is obj
    stopped = False
    encoder = RepoEncoder(state)  # one per pull; each item gets the whole size budget, as a reply's value does
    scalar = encoder.scalar
    while not ended and len(encoded) < MAX_PULL and size < MAX_PULL_TEXT:
        try:
            item = next(obj)
        except StopIteration as exc:
            # A bare end (no value, exactly StopIteration): the trusted side raises it itself after the items, so
            # the consumer's last next() costs no round trip; nothing is kept here (a later next() asks the iterator)
            if type(exc) is StopIteration and exc.args == ():
                stopped = True
            else:
                state["pending"][id(obj)] = (obj, exc)
            ended = True
            break
        except BaseException as exc:  # noqa: B036  (the project's: raised again when asked)
            state["pending"][id(obj)] = (obj, exc)
            ended = True
            break
        kind = type(item)
        text = scalar(item, kind)  # None, bool, int, float, str: JSON at once, without an encoder for it
        if text is None:
            encoder.items = 0
            text = encoder.encode(item)
        encoded.append(text)
        size += len(text)
        if takes is not None and not takes(item):
            break
    # (items, ended): ended is 2 when the iterator stopped bare after the items (the trusted side raises
    # StopIteration itself), true when the next "next" raises what the pull met, false when it may yield more
    flag = "2" if stopped else "true" if ended else "false"
    return Encoded('{"T":[{"T":[%s]},%s]}' % (",".join(encoded), flag))


_FLOAT_INT = 2**1023  # an int below this in size turns into a float without failing (float's largest is about 2**1024)


_TAKES = {  # mode -> whether the consumer goes on past this item as it went past every one before it
    "all": None,
    "plain": _plain_hashable,
    "numbers": lambda item: type(item) in _NUMBERS,
    "ints": lambda item: type(item) is int or type(item) is bool,
    "floats": lambda item: type(item) is float or (type(item) is int or type(item) is bool) and -_FLOAT_INT < item < _FLOAT_INT,
}


def callpull(state, mode, obj, name, /, *args, **kwargs):
    """``consumer(obj.name(...))`` (or ``consumer(obj(...))``: name None) where the consumer takes the call's result
    whole (mode as ``pull``'s): the call, then, if its result is a generator or a builtin iterator (iter() of it is
    itself: nothing of the project's runs between the call and the consumer's first next()), a pull of it, in one
    request. Answers ``{"T": [result, pull or null]}``."""
    result = (obj if name is None else getattr(obj, name))(*args, **kwargs)
    kind = type(result)
    pulled = pull(result, mode, state) if kind is GENERATOR or kind in SELF_ITERATORS else "null"
    return Encoded('{"T":[%s,%s]}' % (RepoEncoder(state).encode(result), pulled))


def iterpull(obj, mode, sized, state):
    """``consumer(obj)`` where the consumer takes every item (mode as ``pull``'s) and does nothing between iter() and
    its first next() but, if ``sized``, a len() of ``obj`` (list, tuple): iter(obj), that len(), then a pull of the
    iterator, in one request. Answers ``{"T": [iterator, size, pull]}``: size null (not asked), an int, ``{"T":
    [message]}`` for a plain TypeError (the consumer goes on without a size), or "kept" for any other exception,
    raised by the next "len" of ``obj`` (where the consumer meets it: no pull then, as it would take no item)."""
    it = iter(obj)
    size, pulled = "null", "null"
    if sized:
        try:
            size = int.__repr__(len(obj))
        except BaseException as exc:  # noqa: B036  (the project's: a plain TypeError told, any other raised when asked)
            if type(exc) is TypeError:
                size = '{"T":[%s]}' % quote(safe_str(exc)[:2000])
            else:
                state["lens"][id(obj)] = (obj, exc)
                size = '"kept"'
    if size != '"kept"':
        pulled = pull(it, mode, state)
    return Encoded('{"T":[%s,%s,%s]}' % (RepoEncoder(state).encode(it), size, pulled))


def len_or_kept(obj, state):
    """len(): the exception an "iterpull" met asking it first, if one is kept."""
    kept = state["lens"].pop(id(obj), None) if state["lens"] else None
    if kept is not None and kept[0] is obj:
        raise kept[1]
    return len(obj)


def callattr(obj, name, /, *args, **kwargs):
    """``obj.name(...)`` in one request: the attribute read, then the call (keyword arguments of any name)."""
    return getattr(obj, name)(*args, **kwargs)


def next_or_kept(obj, state):
    """next(): the exception a pull met on this iterator first, if one is kept."""
    pending = state["pending"].pop(id(obj), None) if state["pending"] else None
    if pending is not None and pending[0] is obj:
        raise pending[1]
    return next(obj)


def _exit_with(obj, exc, kind, message):
    """``__exit__`` while an exception propagates: the project's own exception object, or a builtin one
    of the test's exception type (or Exception) carrying its message."""
    import builtins

    if exc is None:
        cls = getattr(builtins, kind, None)
        cls = cls if isinstance(cls, type) and issubclass(cls, Exception) else Exception
        try:
            exc = cls(message)
        except BaseException:
            exc = Exception(message)
    return bool(type(obj).__exit__(obj, type(exc), exc, exc.__traceback__))


def _as_data(obj):
    """A project object that is a builtin data type, as that type's own value (no method of the
    project's runs), so the test side compares data with data, never through the project's __eq__."""
    if isinstance(obj, bool):
        return bool(int.__int__(obj))
    converters = (
        (int, int.__int__), (float, float.__float__), (str, str.__str__), (bytes, lambda o: bytes(memoryview(o))),
        (list, list.copy), (dict, dict.copy), (set, set.copy), (frozenset, frozenset.union),
        (tuple, lambda o: tuple.__getitem__(o, slice(None))),
    )
    for base, convert in converters:
        if isinstance(obj, base):
            return convert(obj)
    raise TypeError(type(obj).__name__ + " is not a data type")


def _project_frames(tb, root, keep=12):
    """The last ``keep`` frames of the traceback that are in the project's files, as ``traceback.extract_tb`` gives
    them; source positions are worked out for those frames only (for every frame, they cost more than the rest of a
    reply: a generator's StopIteration is an exception too)."""
    import traceback

    position = getattr(traceback, "_get_code_position", None)
    extract = getattr(traceback.StackSummary, "_extract_from_extended_frame_gen", None)
    if position is None or extract is None:  # another Python's traceback module: the public, slower way
        return [f for f in traceback.extract_tb(tb) if f.filename.startswith(root)][-keep:]
    kept = []
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(root):
            kept.append(tb)
        tb = tb.tb_next

    def frames():
        for entry in kept[-keep:]:
            where = position(entry.tb_frame.f_code, entry.tb_lasti)
            yield entry.tb_frame, ((entry.tb_lineno,) + tuple(where[1:]) if where[0] is None else where)

    return extract(frames())


# id of an exception class -> (the class, its chain as JSON). Keyed by id, not by the class: hashing a class runs its
# metaclass's __hash__, which may be the project's (and raise). Sound all the same: the entry keeps its class alive, so
# no other object can take that id while it is here, and the class is checked by identity.
_CHAINS = {}


def _chain_text(cls):
    known = _CHAINS.get(id(cls))
    if known is None or known[0] is not cls:
        known = _CHAINS[id(cls)] = (cls, __import__("json").dumps(class_chain(cls)))
    return known[1]


def repo_exception(rid, exc, state, root):
    import traceback

    frames = _project_frames(exc.__traceback__, root)
    detail = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(exc), exc))
    quote = __import__("_json").encode_basestring_ascii
    try:  # the tuple it is: a list would cross as a project list, refreshed by one more request per exception
        args = RepoEncoder(state).encode(tuple.__getitem__(exc.args, slice(None)) if isinstance(exc.args, tuple) else list(exc.args))
    except BaseException:
        args = "[" + quote(safe_str(exc)[:2000]) + "]"
    # The object's handle, for the stand-in of a project exception class; a builtin one is rebuilt from its
    # arguments on the trusted side, which never asks for it (and keeping each StopIteration alive costs memory).
    kind = type(exc)
    handle = "null" if getattr(kind, "__module__", None) == "builtins" and BUILTINS.get(kind.__name__) is kind else RepoEncoder(state).handle(exc)
    return '{"id":%d,"exc":%s,"msg":%s,"tb":%s,"m":%s,"a":%s,"h":%s}' % (
        rid,
        quote(kind.__name__[:100]),
        quote(safe_str(exc)[:2000]),
        quote(detail[-6000:]),
        _chain_text(kind),
        args,
        handle,
    )
