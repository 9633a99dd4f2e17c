"""Repository mode, values both ways: the project's values encoded for the trusted test process (plain data with
its exact type, the rest as handles), and the test's values decoded here (its functions, objects and iterators as
stand-ins that ask the trusted process). The wire tags are ``protocol.py``'s."""

import sys

from . import protocol
from .encoder import Encoder
from .printed import pending_output

# ---------------------------------------------------------------------------------------------
# repository mode: the project's files live in this run's directory; the trusted test process
# imports them through proxies, and every operation on a project object happens here


class RepoEncoder(Encoder):
    """Plain data with its exact type (tuple, set, bytes, dates ...); the rest as handles."""

    def __init__(self, state):
        Encoder.__init__(self, state["handles"])
        self.state = state

    def encode(self, value, depth=0):
        self.tick(depth)
        kind = type(value)
        text = self.scalar(value, kind)
        if text is not None:
            return text
        # Mutable containers travel as a copy plus a handle, so the test side can write through to
        # the project's own list, dict or set (``obj.items.append(x)``).
        if kind is list or kind is set:
            items = ",".join(self.encode(v, depth + 1) for v in list(value))
            return '{"%s":[%s],"h":%d}' % ("L" if kind is list else "S", items, self.number(value))
        if kind is tuple or kind is frozenset:
            return '{"%s":[' % ("T" if kind is tuple else "F") + ",".join(self.encode(v, depth + 1) for v in list(value)) + "]}"
        if kind is dict:
            pairs = ",".join("[" + self.encode(k, depth + 1) + "," + self.encode(v, depth + 1) + "]" for k, v in list(dict.items(value)))
            return '{"d":[%s],"h":%d}' % (pairs, self.number(value))
        if kind is bytes:
            return '{"B":' + self.quote(bytes.decode(value, "latin-1")) + "}"
        moment = _moment(value, kind)
        if moment is not None:  # a datetime or time: its wall clock as text, its tzinfo as a value of its own
            tag, naive, zone, fold = moment
            return '{"%s":[%s,%s,%d]}' % (tag, self.quote(naive), "null" if zone is None else self.encode(zone, depth + 1), fold)
        special = _special(value, kind)
        if special is not None:
            return special
        classes = self.state.get("test_classes")
        if classes is not None and isinstance(value, classes[""]):  # the test's own object goes back as itself
            return '{"lo":%d}' % object.__getattribute__(value, "_adbg_number")
        if value is Ellipsis or value is NotImplemented:
            return '{"bi":"%s"}' % repr(value)
        if kind is type or kind is _BUILTIN_FUNCTION:  # str, len ...: the trusted process's own (it checks the name)
            name = getattr(value, "__name__", None)
            if type(name) is str and name in self.state["shared"] and getattr(__import__("builtins"), name, None) is value:
                return '{"bi":"%s"}' % name
        if kind in _DESCRIPTORS:  # object.__lt__, dict.get: the trusted process's own, named by type and attribute
            owner = getattr(value, "__objclass__", None)
            name = getattr(value, "__name__", None)
            if (type(name) is str and getattr(owner, "__name__", None) in self.state["shared"]
                    and getattr(__import__("builtins"), owner.__name__, None) is owner and vars(owner).get(name) is value):
                return '{"bd":[%s,%s]}' % (self.quote(owner.__name__), self.quote(name))
        if kind is _CopiedIterator:  # and its iterator
            return '{"lo":%d}' % value.number
        standin = self.state["standins"].get(id(value)) if kind is FUNCTION else None
        if standin is not None and standin[1] is value:  # so does the test's function (``wrapper.__wrapped__ is f``)
            own = [(k, v) for k, v in list(value.__dict__.items())[:64] if type(k) is str and not k.startswith(("_", "pytest"))]
            if not own:
                return '{"lo":%d}' % standin[0]
            pairs = ",".join("[%s,%s]" % (self.quote(k), self.encode(v, depth + 1)) for k, v in own)
            return '{"lo":%d,"fd":[%s]}' % (standin[0], pairs)  # with what the project set on it (parse.with_pattern)
        return self.handle(value)

    def number(self, value):
        key = id(value)  # sound: the handle keeps its object alive, and it is checked to be this one
        number = self.state["ids"].get(key)
        if number is None or self.handles.get(number) is not value:
            number = len(self.handles) + 1
            self.handles[number] = value
            self.state["ids"][key] = number
        return number

    def handle(self, value):
        number = self.number(value)
        kind = type(value)
        # What a handle says depends on its object's type alone: worked out once per object (a result the project
        # hands back again and again, a parser's cached expression, costs a lookup), again if its type changed
        texts = self.state["texts"]
        known = texts.get(number)
        if known is not None and known[0] is kind:
            return known[1]
        text = self._handle_text(value, number, kind)
        texts[number] = (kind, text)
        return text

    def _handle_text(self, value, number, kind):
        info = {"h": number, "t": kind.__name__[:100]}
        dt = sys.modules.get("datetime")
        if isinstance(value, type(sys)):
            info["k"] = "module"
        elif dt is not None and isinstance(value, dt.tzinfo):
            info["k"] = "tzinfo"  # the test side's proxy is a tzinfo too: its datetimes accept it
        elif isinstance(value, type):
            info["k"] = "class"
            info["q"] = _qualname(value)
            if issubclass(value, BaseException):
                info["k"] = "exc"
                info["m"] = class_chain(value)
            else:
                _class_fields(value, info, dt)
        elif isinstance(value, BaseException):
            info["k"] = "exi"
            info["m"] = class_chain(kind)
        elif callable(value):
            info["k"] = "call"
        else:
            info["k"] = "obj"
            if kind is GENERATOR or kind in SELF_ITERATORS:  # iter() of it is itself and it has no len(): the trusted side knows without asking
                info["g"] = 1
        if info["k"] in ("call", "obj", "tzinfo"):  # its class's handle: type() of it on the trusted side
            info["c"] = self._class_of(kind, dt)
        return __import__("json").dumps(info)

    def _class_of(self, cls, dt):
        """An object's class as a class handle's fields (the same class is the same handle: ``type(a) is type(b)``),
        worked out once per class."""
        number = self.number(cls)
        known = self.state.setdefault("classes", {}).get(number)
        if known is not None and known[0] is cls:
            return known[1]
        info = {"h": number, "t": type(cls).__name__[:100], "k": "class", "q": _qualname(cls)}
        _class_fields(cls, info, dt)
        self.state["classes"][number] = (cls, info)
        return info


def _class_fields(cls, info, dt):
    """What the trusted side names its local class for a project class after: its module and qualified name, and
    whether it is a tzinfo class (its instances must be tzinfos there too)."""
    info["n"] = [str(getattr(cls, "__module__", "?"))[:200], str(getattr(cls, "__qualname__", "?"))[:200]]
    if dt is not None and issubclass(cls, dt.tzinfo):
        info["z"] = 1


def class_chain(cls):
    """The class's MRO (at most 64 classes), each with its direct bases: the test side rebuilds the graph."""
    return [[_qualname(c), [_qualname(b) for b in c.__bases__][:16]] for c in cls.__mro__[:64]]


def _qualname(cls):
    return (str(getattr(cls, "__module__", "?")) + "." + str(getattr(cls, "__qualname__", "?")))[:200]


def _moment(value, kind):
    """(tag, naive isoformat, tzinfo, fold) of an exact datetime or time, else None."""
    dt = sys.modules.get("datetime")
    if dt is None or (kind is not dt.datetime and kind is not dt.time):
        return None
    naive = value.replace(tzinfo=None, fold=0)
    return ("dt" if kind is dt.datetime else "ti"), naive.isoformat(), value.tzinfo, value.fold


def _special(value, kind):
    dt = sys.modules.get("datetime")
    quote = __import__("_json").encode_basestring_ascii
    zoneinfo = sys.modules.get("zoneinfo")
    if zoneinfo is not None and kind is zoneinfo.ZoneInfo and isinstance(getattr(value, "key", None), str):
        return '{"zi":' + quote(value.key) + "}"  # the same zone from the same tz database on both sides
    if dt is not None:
        if kind is dt.date:
            return '{"da":' + quote(value.isoformat()) + "}"
        if kind is dt.timedelta:
            return '{"td":[%d,%d,%d]}' % (value.days, value.seconds, value.microseconds)
        if kind is dt.timezone:
            offset = value.utcoffset(None)
            return '{"tz":[%d,%d,%s]}' % (offset.days, offset.seconds, quote(value.tzname(None)))
    decimal = sys.modules.get("decimal")
    if decimal is not None and kind is decimal.Decimal:
        return '{"D":' + quote(str(value)) + "}"
    # Exact types only: a project subclass keeps its own methods, so it stays a handle.
    uuid = sys.modules.get("uuid")
    if uuid is not None and kind is uuid.UUID:
        return '{"U":' + quote(value.hex) + "}"
    fractions = sys.modules.get("fractions")
    if fractions is not None and kind is fractions.Fraction:
        return '{"Q":[%s,%s]}' % (quote(str(value.numerator)), quote(str(value.denominator)))
    re = sys.modules.get("re")
    if re is not None and kind is re.Pattern:
        pattern = value.pattern
        return '{"R":[%s,%d,%s]}' % (quote(pattern if type(pattern) is str else bytes.decode(pattern, "latin-1")), value.flags, "true" if type(pattern) is bytes else "false")
    return None


def repo_decode(value, state):
    kind = type(value)
    if kind is list:
        return [repo_decode(v, state) for v in value]
    if kind is tuple:
        return tuple(repo_decode(v, state) for v in value)
    if kind is set or kind is frozenset:
        return kind(repo_decode(v, state) for v in value)
    if kind is dict:  # every dict arrives wrapped as {None: (tag, payload...)}
        tag, *rest = value[None]
        decode = _VALUE_DECODERS.get(tag)
        if decode is None:
            raise ValueError("unknown value tag " + repr(tag))
        return decode(rest, state)
    return value


def _callback_value(rest, state):
    code = _portable_code(rest[5]) if len(rest) > 5 else None
    made = _callback(state, rest[0], rest[1], rest[2] if len(rest) > 2 else None, rest[3] if len(rest) > 3 else None, code)
    for key, item in rest[4] if len(rest) > 4 and type(rest[4]) is list else ():  # the function's own attributes
        if type(key) is str and not key.startswith(("_", "pytest")):
            setattr(made, key, repo_decode(item, state))
    return made


def _copied_iterator(rest, state):
    copies = state.setdefault("copied", {})
    if rest[0] not in copies:
        copies[rest[0]] = _CopiedIterator(rest[0], __import__("pickle").loads(rest[1]), state)
    return copies[rest[0]]


def _pulled_iterator(rest, state):
    made = state.setdefault("iterators", {})  # one stand-in per iterator of the test's
    if rest[0] not in made:
        pull = _callback(state, rest[0], rest[1])
        made[rest[0]] = _test_generator(pull) if len(rest) > 2 and rest[2] == "gen" else _TestIterator(pull)
    return made[rest[0]]


def _stdlib_module(rest, _state):
    name = str(rest[0])
    if name.split(".")[0] not in sys.stdlib_module_names:
        raise ValueError("only the standard library's modules are named across")
    return __import__("importlib").import_module(name)


def _dict_view(rest, state):
    items = [repo_decode(v, state) for v in rest[1]]
    if rest[0] == "items":
        return dict(items).items()
    return (dict.fromkeys(items).keys() if rest[0] == "keys" else dict(enumerate(items)).values())


def _moment_value(kind):
    def decode(rest, state):
        naive, zone, fold = rest[0]
        parsed = getattr(__import__("datetime"), kind).fromisoformat(naive)
        return parsed.replace(tzinfo=repo_decode(zone, state), fold=fold)

    return decode


def _pattern(rest, _state):
    return __import__("re").compile(rest[0].encode("latin-1") if rest[2] else rest[0], rest[1])


def _timedelta(rest, _state):
    return __import__("datetime").timedelta(days=rest[0], seconds=rest[1], microseconds=rest[2])


def _timezone(rest, _state):
    dt = __import__("datetime")
    return dt.timezone(dt.timedelta(days=rest[0], seconds=rest[1]), rest[2])


# The test side's value tags (protocol.VALUE_TAGS): each one's decoder, called with the payload after the tag
_VALUE_DECODERS = {
    "d": lambda rest, state: {repo_decode(k, state): repo_decode(v, state) for k, v in rest[0]},
    "h": lambda rest, state: state["handles"][rest[0]],
    "cb": _callback_value,
    "bm": lambda rest, state: __import__("types").MethodType(repo_decode(rest[0], state), repo_decode(rest[1], state)),
    "ic": _copied_iterator,
    "it": _pulled_iterator,
    "st": lambda rest, state: set(repo_decode(v, state) for v in rest[0]),
    "fs": lambda rest, state: frozenset(repo_decode(v, state) for v in rest[0]),
    "lo": lambda rest, state: test_object(state, rest[0], rest[2]),
    "pk": lambda rest, state: _unpickle(rest[0], state),
    "mv": lambda rest, _state: memoryview(rest[0]).toreadonly(),
    "mo": _stdlib_module,
    "dv": _dict_view,
    "rg": lambda rest, _state: range(rest[0], rest[1], rest[2]),
    "bi": lambda rest, _state: getattr(__import__("builtins"), rest[0]),
    "dt": _moment_value("datetime"),
    "ti": _moment_value("time"),
    "zi": lambda rest, _state: __import__("zoneinfo").ZoneInfo(rest[0]),
    "da": lambda rest, _state: __import__("datetime").date.fromisoformat(rest[0]),
    "td": _timedelta,
    "tz": _timezone,
    "D": lambda rest, _state: __import__("decimal").Decimal(rest[0]),
    "U": lambda rest, _state: __import__("uuid").UUID(hex=rest[0]),
    "Q": lambda rest, _state: __import__("fractions").Fraction(int(rest[0]), int(rest[1])),
    "R": _pattern,
}
protocol.agree("VALUE_TAGS", _VALUE_DECODERS, "the sandbox's value decoder (values.py)")


class _TestOutcome(BaseException):
    """The test's own outcome (pytest.fail, skip) raised in a function of the test's that the project called."""


def _ask(state, number, op, args, kwargs):
    """Ask the trusted process to apply ``op`` to the test's object ``number`` (None: call it), serving the project's
    requests that makes meanwhile (the test's code may call the project back)."""
    import builtins

    router = state["router"]
    cid = router.new_cid()
    quote = __import__("_json").encode_basestring_ascii
    encoder = RepoEncoder(state)
    pairs = ",".join("[" + quote(str(k)) + "," + encoder.encode(v) + "]" for k, v in kwargs.items())
    named = "" if op is None else ',"op":' + quote(op)
    # the arguments as the tuple they are: a list would cross as a project list, refreshed by a request when unpacked
    router.send('{"cb":%d,"cid":%d%s,"a":%s,"k":[%s]%s%s}' % (number, cid, named, encoder.encode(tuple(args)), pairs, pending_output(state), advances(state)))
    while True:
        message = router.next(cid)
        if message.get("cid") == cid:
            break
        if message.get("op") == "exit":  # the run is over: its main loop takes it
            with router.cond:
                router.requests.insert(0, message)
            raise _TestOutcome("the test run ended while the project waited for the test's code")
        state["serve_one"](message, state)  # the test's function called the project: answer, then keep waiting
    if "exch" in message:
        raise state["handles"][message["exch"]]
    if "exct" in message:  # the test's exception class, as its twin here
        number, args, text = message["exct"]
        try:
            made = state["handles"][number](*repo_decode(args, state))
        except Exception:
            made = Exception(str(text))
        raise made
    if "exc" in message:
        exc_type, text = message["exc"]
        cls = getattr(builtins, str(exc_type), None)
        if exc_type == "BaseException":
            raise _TestOutcome(str(text))  # pytest.fail, skip ...: the test's outcome, not the project's to catch
        raise (cls if isinstance(cls, type) and issubclass(cls, Exception) else Exception)(str(text))
    return repo_decode(message["ok"], state)


_ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift", "rshift")
FUNCTION = type(lambda: None)
BUILTINS = __import__("builtins").__dict__
GENERATOR = type((lambda: (yield))())


def _self_iterators():
    """The C iterator types whose iter() is the object itself and that have no len(): like a generator's, their
    handles say so ("g": 1), so the trusted side's iter() costs no round trip. itertools is built in."""
    import itertools

    kinds = {type(iter(x)) for x in ([], (), range(1), range(2**64), "", "\xe9", b"", bytearray(), set(), {}, {}.values(), {}.items())}
    kinds |= {type(reversed([])), type(reversed(range(1))), type(iter(int, 1)), map, filter, zip, enumerate, reversed}
    kinds |= {getattr(itertools, n) for n in (
        "accumulate", "chain", "combinations", "combinations_with_replacement", "compress", "count", "cycle", "dropwhile",
        "filterfalse", "groupby", "islice", "pairwise", "permutations", "product", "repeat", "starmap", "takewhile",
        "zip_longest", "batched") if hasattr(itertools, n)}
    return frozenset(k for k in kinds if "__len__" not in vars(k) and vars(k).get("__iter__") is not None)


SELF_ITERATORS = _self_iterators()
_BUILTIN_FUNCTION = type(len)
_DESCRIPTORS = (type(object.__lt__), type(str.upper), type(dict.__dict__["fromkeys"]))
_UNSET = object()  # a stand-in's default the test's function fills in itself


def _signature_source(parameters):
    """``def call(<the test function's parameters>)`` forwarding what the caller gave, or None if ``parameters`` is
    not a well-formed spec (checked here too: names are identifiers, kinds in order)."""
    order = {"po": 0, "pk": 1, "va": 2, "ko": 3, "vk": 4}
    if type(parameters) is not list or len(parameters) > 64:
        return None
    heads, positional, keywords, star, stars, last, defaults = [], [], [], None, None, -1, {}
    for entry in parameters:
        if type(entry) is not list or len(entry) not in (2, 4) or type(entry[0]) is not str or entry[1] not in order:
            return None
        name, kind = entry[0], entry[1]
        if not name.isidentifier() or name.startswith("_adbg") or __import__("keyword").iskeyword(name) or order[kind] < last:
            return None
        if kind in ("va", "vk") and (len(entry) != 2 or (kind == "va" and star) or (kind == "vk" and stars)):
            return None
        last = order[kind]
        if kind == "pk" and last == 1 and heads and heads[-1][1] == "po":
            heads.append(("/", None))
        heads.append((name, kind))
        if len(entry) == 4:
            defaults[name] = _UNSET if entry[3] else entry[2]
        if kind in ("po", "pk"):
            positional.append(name)
        elif kind == "ko":
            keywords.append(name)
        elif kind == "va":
            star = name
        else:
            stars = name
    if heads and heads[-1][1] == "po":
        heads.append(("/", None))
    text, seen_star = [], False
    for name, kind in heads:
        if kind == "ko" and not seen_star:
            text.append("*")
            seen_star = True
        if kind == "va":
            seen_star = True
        prefix = "*" if kind == "va" else "**" if kind == "vk" else ""
        text.append(prefix + name + ("=_adbg_d[%r]" % name if name in defaults else ""))
    body = ["    _adbg_a, _adbg_k, _adbg_gap = [], {}, False"]
    for name in positional:  # in order until one is left unset; later ones go by name
        body.append("    if %s is _adbg_unset: _adbg_gap = True" % name)
        kind = dict(heads)[name]
        if kind == "po":
            body.append("    elif not _adbg_gap: _adbg_a.append(%s)" % name)
        else:
            body.append("    elif not _adbg_gap: _adbg_a.append(%s)\n    else: _adbg_k[%r] = %s" % (name, name, name))
    if star:
        body.append("    _adbg_a.extend(%s)" % star)
    for name in keywords:
        body.append("    if %s is not _adbg_unset: _adbg_k[%r] = %s" % (name, name, name))
    if stars:
        body.append("    _adbg_k.update(%s)" % stars)
    body.append("    return _adbg_ask(_adbg_state, _adbg_number, None, tuple(_adbg_a), _adbg_k)")
    return "def call(%s):\n%s\n" % (", ".join(text), "\n".join(body)), defaults


def _callback(state, number, name, parameters=None, about=None, code=None):
    """A function of the test's: calling it asks the trusted process to run it. With ``parameters`` (its signature,
    checked on the trusted side and here) it takes exactly those, so a wrong call fails here and a caller inspecting
    it sees the test's parameters. One stand-in per function: the same function twice is the same object here. With
    ``code`` (a lambda of plain arithmetic, comparisons and pure builtins on its arguments, ``_portable_code``) it
    runs here, unless an argument is one of the test's own objects (then the trusted process runs it, as ever)."""
    by_number = state.setdefault("standin_numbers", {})
    if number in by_number:
        return by_number[number]
    ask = _ask if code is None else _run_here(code, str(name)[:100])
    made = _signature_source(parameters) if parameters is not None else None
    if made is not None:
        source, defaults = made
        space = {"_adbg_ask": ask, "_adbg_state": state, "_adbg_number": number, "_adbg_unset": _UNSET, "_adbg_d": defaults}
        exec(source, space)  # our own source: every name in it was checked to be an identifier
        call = space["call"]
    else:

        def call(*args, **kwargs):
            return ask(state, number, None, args, kwargs)

    call.__name__ = call.__qualname__ = str(name)[:100]
    if type(about) is list and len(about) == 3 and all(a is None or type(a) is str for a in about):
        qualname, call.__doc__, module = about
        call.__qualname__ = qualname or call.__qualname__
        call.__module__ = module
    state.setdefault("standins", {})[id(call)] = (number, call)
    by_number[number] = call
    return call


def _portable_code(sent):
    """The code of a test's lambda the trusted side found portable (``sites.portable_lambda``: (magic, marshal)),
    if this interpreter reads it as its own; None otherwise (the lambda is then called back, as any function)."""
    import importlib.util
    import marshal

    if type(sent) not in (list, tuple) or len(sent) != 2 or sent[0] != importlib.util.MAGIC_NUMBER or type(sent[1]) is not bytes:
        return None
    try:
        code = marshal.loads(sent[1])
    except Exception:  # noqa: BLE001  (not this interpreter's: called back instead)
        return None
    return code if type(code) is type(_portable_code.__code__) else None


def _run_here(code, name):
    """What a stand-in asks with, for a portable lambda: the lambda, made here with the builtins it may name as they
    were before any project code ran, applied to its arguments; the trusted process's run when one of them is the
    test's own object (a stand-in here: a type check of it would tell a stand-in, not the test's object)."""
    function = type(_portable_code)(code, {"__builtins__": _PURE_BUILTINS}, name)

    def ask(state, number, op, args, kwargs):
        classes = state.get("test_classes")
        standins = state.get("standins") or {}
        for value in (*args, *kwargs.values()):
            kind = type(value)
            if (classes is not None and issubclass(kind, classes[""])) or kind is _CopiedIterator or kind is _TestIterator \
                    or (kind is FUNCTION and id(value) in standins):
                return _ask(state, number, op, args, kwargs)
        return function(*args, **kwargs)

    return ask


_PURE_BUILTINS = {name: getattr(__import__("builtins"), name) for name in protocol.PURE_BUILTINS}  # before the project loads


def _test_proxy_classes():
    """The classes of proxies of the test's own objects (made once: datetime and collections.abc load on demand)."""
    import collections.abc
    import datetime

    def forward(op):
        def method(self, *args, **kwargs):
            return _ask(self._adbg_state, self._adbg_number, op, args, kwargs)

        method.__name__ = "__%s__" % op
        return method

    class TestObject:
        """An object of the test's (an instance of a class the tests define, a stream, a unittest helper), passed
        by reference: every attribute, call and operation on it is answered by the trusted process."""

        __slots__ = ("_adbg_state", "_adbg_number")

        def __getattr__(self, name):
            if name.startswith("__") and name.endswith("__"):
                raise AttributeError(name)  # protocol probes (copy, pickle, numpy ...) are not the test's
            return _ask(self._adbg_state, self._adbg_number, "getattr", (name,), {})

        def __setattr__(self, name, value):
            _ask(self._adbg_state, self._adbg_number, "setattr", (name, value), {})

        def __delattr__(self, name):
            _ask(self._adbg_state, self._adbg_number, "delattr", (name,), {})

        def __copy__(self):  # the test's object copied where it lives (a project object's deepcopy reaches it)
            return _ask(self._adbg_state, self._adbg_number, "copy", (), {})

        def __deepcopy__(self, memo):
            return _ask(self._adbg_state, self._adbg_number, "deepcopy", (), {})

    for op in ("call", "repr", "str", "len", "iter", "next", "getitem", "setitem", "delitem", "contains", "bool",
               "hash", "eq", "ne", "lt", "le", "gt", "ge", "enter", "exit", "neg", "pos", "abs", "invert", *_ARITHMETIC,
               *("r" + name for name in _ARITHMETIC)):
        setattr(TestObject, "__%s__" % op, forward(op))

    class TestTzinfo(TestObject, datetime.tzinfo):
        __slots__ = ()

    for op in ("utcoffset", "dst", "tzname", "fromutc"):
        setattr(TestTzinfo, op, (lambda name: lambda self, when: _ask(self._adbg_state, self._adbg_number, "method", (name, when), {}))(op))

    class TestMapping(TestObject, collections.abc.Mapping):
        __slots__ = ()

    for op in ("keys", "items", "values", "get"):
        setattr(TestMapping, op, (lambda name: lambda self, *a, **k: _ask(self._adbg_state, self._adbg_number, "method", (name, *a), k))(op))
    class TestPathLike(TestObject):  # os.PathLike by its __fspath__: open(), os.path and pathlib take it
        __slots__ = ()

    TestPathLike.__fspath__ = forward("fspath")
    return {"": TestObject, "tzinfo": TestTzinfo, "mapping": TestMapping, "pathlike": TestPathLike}


def test_object(state, number, flags):
    """The one proxy of the test's object ``number`` (the same object twice is the same proxy: ``is``, dict keys)."""
    known = state.setdefault("test_objects", {})
    if number not in known:
        classes = state.get("test_classes") or state.setdefault("test_classes", _test_proxy_classes())
        made = object.__new__(classes.get(flags, classes[""]))
        object.__setattr__(made, "_adbg_state", state)
        object.__setattr__(made, "_adbg_number", number)
        known[number] = made
    return known[number]


def _unpickle(data, state):
    """A value of the standard library's or the task's requirements' types, sent as a pickle by the trusted process
    (a copy: defaultdict, OrderedDict, paths ...); the project objects and test objects inside it are references."""
    import io
    import pickle

    class Unpickler(pickle.Unpickler):
        def persistent_load(self, pid):
            return repo_decode(pid, state)

    return Unpickler(io.BytesIO(data)).load()


class _CopiedIterator:
    """This sandbox's copy of a test's iterator of plain data: the items it hands out are counted, and the count goes
    to the trusted process with the next message, which advances the test's own iterator as far."""

    __slots__ = ("number", "inner", "count", "state")

    def __init__(self, number, inner, state):
        self.number, self.inner, self.count, self.state = number, inner, 0, state

    def __iter__(self):
        return self

    def __next__(self):
        item = next(self.inner)
        if not self.count:
            self.state["read"].append(self)
        self.count += 1
        return item

    def __length_hint__(self):
        return __import__("operator").length_hint(self.inner)


def advances(state):
    """How far the project read the test's copied iterators since the last message (``,"adv":[[number, n], ...]``)."""
    if not state["read"]:
        return ""
    read, state["read"] = state["read"], []
    counts = []
    for copied in read:
        counts.append("[%d,%d]" % (copied.number, copied.count))
        copied.count = 0
    return ',"adv":[' + ",".join(counts) + "]"


def _test_generator(pull):
    """A generator of the test's, as a generator here (``isinstance(x, types.GeneratorType)``): each item is pulled."""
    while True:
        try:
            item = pull()
        except StopIteration:
            return
        yield item


class _TestIterator:
    """An iterator of the test's (a generator, ``iter(list)``, ``itertools.count()``): each item is pulled from it."""

    def __init__(self, pull):
        self._pull = pull

    def __iter__(self):
        return self

    def __next__(self):
        return self._pull()
