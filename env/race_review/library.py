"""What the standard library's callables do, as far as shared state is concerned (the review reads no library code).

Each known callable has a ``Spec``: whether it returns a plain value, a copy, one of its arguments, an alias of its
argument, a container of its own, a lock ...; every argument it is given is read by it. A callable of a known module
that is not listed, and every builtin that reaches attributes or code by a computed name (``getattr``, ``eval``,
``vars`` ...), is one the review cannot follow: it says so by name.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Literal

SpecKind = Literal[
    "pure", "copy", "select", "alias", "next", "none", "lock", "condition", "semaphore", "event", "local", "container",
    "wraps", "contextmanager", "nullcontext", "cast", "exception", "outside", "super", "type", "object", "property",
    "staticmethod", "classmethod", "counter", "mutate", "attribute", "sum", "pop", "queue", "getter", "item",
]


@dataclass(frozen=True)
class Spec:
    kind: SpecKind
    detail: str = ""  # the container's kind, the lock's kind
    safe: bool = False  # never raises (for the lock-leak check: an exception between acquire and release)


_PURE_SAFE = "isinstance callable id".split()  # never raise, whatever they are given
_PURE = "len issubclass hash repr ascii abs bool int float str round ord chr format bin hex oct divmod pow any all range bytes complex".split()
_REFUSED = {
    "vars": "`vars`: it hands out an object's attribute dict",
    "globals": "`globals`: it hands out the module's names",
    "locals": "`locals`: it hands out a frame's names",
    "eval": "`eval`: it runs code made at run time",
    "exec": "`exec`: it runs code made at run time",
    "compile": "`compile`: it makes code at run time",
    "__import__": "`__import__`: it imports a module by a computed name",
    "open": "`open`: files are outside what it reads",
    "input": "`input`",
    "breakpoint": "`breakpoint`",
    "memoryview": "`memoryview`: a view others can write through",
    "dir": "`dir`",
    "help": "`help`",
    "map": "`map`: it calls a function later, when its result is read",
    "filter": "`filter`: it calls a function later, when its result is read",
}

BUILTINS: dict[str, Spec] = {
    **{name: Spec("pure", safe=True) for name in _PURE_SAFE},
    "getattr": Spec("attribute", safe=False), "setattr": Spec("attribute"), "hasattr": Spec("attribute"), "delattr": Spec("attribute"),
    **{name: Spec("pure") for name in _PURE},
    "list": Spec("copy", "list"), "set": Spec("copy", "set"), "dict": Spec("copy", "dict"), "tuple": Spec("copy", "tuple"),
    "frozenset": Spec("copy", "frozenset"), "sorted": Spec("copy", "list"), "bytearray": Spec("copy", "list"),
    "min": Spec("select"), "max": Spec("select"), "sum": Spec("sum"),
    "iter": Spec("alias"), "enumerate": Spec("alias"), "zip": Spec("alias"), "reversed": Spec("alias"),
    "next": Spec("next"), "print": Spec("none"),
    "super": Spec("super", safe=True), "type": Spec("type", safe=True), "object": Spec("object", safe=True),
    "property": Spec("property", safe=True), "staticmethod": Spec("staticmethod", safe=True), "classmethod": Spec("classmethod", safe=True),
    **{
        name: Spec("exception", safe=True)
        for name, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    },
}

_LOCKS = {"Lock": "Lock", "RLock": "RLock", "allocate_lock": "Lock"}

MODULES: dict[str, dict[str, Spec]] = {
    "threading": {
        **{name: Spec("lock", kind, safe=True) for name, kind in _LOCKS.items()},
        "Condition": Spec("condition", safe=True), "Semaphore": Spec("semaphore", "Semaphore", safe=True),
        "BoundedSemaphore": Spec("semaphore", "BoundedSemaphore", safe=True), "Event": Spec("event", safe=True),
        "local": Spec("local", safe=True), "get_ident": Spec("pure", safe=True), "get_native_id": Spec("pure", safe=True),
        "active_count": Spec("pure", safe=True), "current_thread": Spec("outside", safe=True), "main_thread": Spec("outside", safe=True),
        "enumerate": Spec("outside", safe=True), "TIMEOUT_MAX": Spec("pure", safe=True),
    },
    "_thread": {"allocate_lock": Spec("lock", "Lock", safe=True), "get_ident": Spec("pure", safe=True)},
    "time": {
        **{name: Spec("pure", safe=True) for name in ("time", "monotonic", "perf_counter", "process_time", "time_ns", "monotonic_ns", "perf_counter_ns", "thread_time")},
        "sleep": Spec("none", safe=True),
    },
    "math": {},  # every public name: pure
    "random": {
        **{name: Spec("pure") for name in ("random", "randint", "uniform", "randrange", "getrandbits", "gauss", "seed")},
        "choice": Spec("select"), "shuffle": Spec("mutate"),
    },
    "typing": {"cast": Spec("cast", safe=True)},  # every other name of typing: a type (pure)
    "uuid": {name: Spec("pure", safe=True) for name in ("uuid1", "uuid3", "uuid4", "uuid5", "UUID")},
    "functools": {"wraps": Spec("wraps", safe=True)},
    "contextlib": {
        "contextmanager": Spec("contextmanager", safe=True), "nullcontext": Spec("nullcontext", safe=True),
        "suppress": Spec("nullcontext", "suppress", safe=True),
    },
    "logging": {"getLogger": Spec("outside", safe=True)},  # a logger's methods: code the review cannot read (handed nothing shared)
    "heapq": {
        **{name: Spec("mutate") for name in ("heappush", "heapify")},
        **{name: Spec("pop") for name in ("heappop", "heappushpop", "heapreplace")},
    },
    "bisect": {
        **{name: Spec("mutate") for name in ("insort", "insort_left", "insort_right")},
        **{name: Spec("pure") for name in ("bisect", "bisect_left", "bisect_right")},
    },
    "decimal": {name: Spec("pure") for name in ("Decimal", "localcontext", "getcontext")},
    "fractions": {"Fraction": Spec("pure")},
    "datetime": {name: Spec("pure") for name in ("datetime", "date", "time", "timedelta", "timezone")},
    "datetime.datetime": {name: Spec("pure") for name in ("now", "utcnow", "today", "fromtimestamp", "utcfromtimestamp", "fromisoformat", "combine", "strptime")},
    "datetime.date": {name: Spec("pure") for name in ("today", "fromtimestamp", "fromisoformat")},
    "secrets": {**{name: Spec("pure") for name in ("token_hex", "token_urlsafe", "token_bytes", "randbelow", "randbits", "compare_digest")}, "choice": Spec("select")},
    "operator": {
        **{
            name: Spec("pure") for name in (
                "add", "sub", "mul", "truediv", "floordiv", "mod", "neg", "pos", "abs", "not_", "truth", "eq", "ne", "lt", "le",
                "gt", "ge", "index", "and_", "or_", "xor", "invert", "lshift", "rshift", "pow", "is_", "is_not",
            )
        },
        "itemgetter": Spec("getter", safe=True),  # a callable that subscripts what it is later given ...
        "itemgetter()": Spec("item"),  # ... which is this: ``itemgetter(k)(x)`` reads ``x[k]``
    },
    "enum": {name: Spec("pure") for name in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "auto", "unique")},
    "abc": {"ABC": Spec("pure"), "ABCMeta": Spec("pure"), "abstractmethod": Spec("alias", safe=True)},
    "collections.abc": {},  # every name: a type (pure)
    "queue": {name: Spec("queue", safe=True) for name in ("Queue", "SimpleQueue", "LifoQueue", "PriorityQueue")},
    # (records.py writes out what @dataclass and field() do; used anywhere else they are ones it cannot follow)
    "dataclasses": {
        "asdict": Spec("copy", "dict"), "astuple": Spec("copy", "tuple"), "FrozenInstanceError": Spec("exception"),
        "KW_ONLY": Spec("pure", safe=True), "InitVar": Spec("pure", safe=True),
    },
    "string": {},  # constants
    "json": {"dumps": Spec("pure"), "loads": Spec("container", "dict")},
    "collections": {
        "deque": Spec("container", "deque"), "defaultdict": Spec("container", "dict"), "OrderedDict": Spec("container", "dict"),
        "Counter": Spec("container", "dict"),
    },
    "itertools": {"count": Spec("counter", safe=True)},
    "copy": {"copy": Spec("copy", "copy"), "deepcopy": Spec("copy", "copy")},
}


def spec(name: str) -> Spec | str:
    """The Spec of a callable by its dotted name ("len", "threading.Lock"), or why the review cannot follow it."""
    module, _, attr = name.rpartition(".")
    if not module:
        if name in _REFUSED:
            return _REFUSED[name]
        found = BUILTINS.get(name)
        return found if found is not None else f"the builtin `{name}`"
    if attr.startswith("_"):
        return f"`{name}`, a private name of the module `{module}`"
    table = MODULES.get(module)
    if table is None:
        return f"`{name}`: the module `{module}` is outside what it knows"
    if module == "math":
        return Spec("pure")
    if module == "typing" and attr not in table:
        return Spec("alias", safe=True)  # a type, or an identity (typing.final(x) is x): what it is given, as is
    if module in ("collections.abc", "string") and attr not in table:
        return Spec("pure", safe=True)
    found = table.get(attr)
    return found if found is not None else f"`{name}`"


KNOWN_MODULES = frozenset(MODULES)
