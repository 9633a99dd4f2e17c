"""The sandbox child: loads one submitted module and answers calls from the trusted side.

``env.sandbox.runner`` starts this file as ``python -I -S -B -X utf8 child.py REQ_FD RESP_FD PARENT`` in
the run's private directory, with a near-empty environment, stdout/stderr going to a capped file,
one pipe carrying requests and one carrying replies. Each frame is a 4-byte big-endian length and a
payload: requests are ``marshal`` data written by the trusted parent; replies are JSON that the
parent parses with size caps, so nothing the submission controls is ever unmarshalled there.

The tests and their expected values never enter this process: it only answers "call f(args)"
with a value or an exception. Standard library only, and nothing slow to import, because this
file's start-up is paid on every run. It stays one file because no ``env`` package is importable
here; the isolation layers it applies to itself live beside it in ``layers.py``, loaded by path.
"""

import marshal
import os
import resource
import sys

REQ_FD, RESP_FD = -1, -1  # set from argv by main()
MAX_DEPTH = 32
MAX_ITEMS = 100_000


# ---------------------------------------------------------------------------------------------
# framing


_INBOX = bytearray()  # read ahead from REQ_FD: a request's length and body come with one read, not two


def _read_exact(n):
    while len(_INBOX) < n:
        chunk = os.read(REQ_FD, max(65536, n - len(_INBOX)))
        if not chunk:
            raise EOFError
        _INBOX.extend(chunk)
    data = bytes(_INBOX[:n])
    del _INBOX[:n]
    return data


def _recv():
    size = int.from_bytes(_read_exact(4), "big")
    return marshal.loads(_read_exact(size))


def _send(text):
    data = text.encode("utf-8", "surrogatepass")
    data = len(data).to_bytes(4, "big") + data
    while data:
        data = data[os.write(RESP_FD, data) :]


# ---------------------------------------------------------------------------------------------
# the isolation layers (env/sandbox/layers.py), shared with run_bash's launcher


def _sibling(name, filename):
    """A module of this directory, loaded by its path: this interpreter has no ``env`` package to import."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(os.path.abspath(__file__)), filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Loaded at start-up, on every path (a fresh child, the zygote before it forks, the probe): before any
# submitted code, and while the server's tree is still readable (Landlock shuts it away).
LAYERS = _sibling("_adbg_layers", "layers.py")


# ---------------------------------------------------------------------------------------------
# values: plain data crosses as JSON; anything else stays here behind a numbered handle


class _Encoder:
    def __init__(self, handles):
        self.handles = handles
        self.items = 0
        from _json import encode_basestring_ascii

        self.quote = encode_basestring_ascii

    def tick(self, depth):
        self.items += 1
        if depth > MAX_DEPTH or self.items > MAX_ITEMS:
            raise ValueError("value too large or too deeply nested to return")

    def scalar(self, value, kind):
        """JSON for None, bool, int, float and str; None for anything else."""
        if value is None:
            return "null"
        if kind is bool:
            return "true" if value else "false"
        if kind is int:
            return int.__repr__(value)
        if kind is float:
            if value != value:
                return "NaN"
            if value in (float("inf"), float("-inf")):
                return "Infinity" if value > 0 else "-Infinity"
            return float.__repr__(value)
        if kind is str:
            return self.quote(value)
        return None

    def encode(self, value, depth=0):
        self.tick(depth)
        kind = type(value)
        text = self.scalar(value, kind)
        if text is not None:
            return text
        if kind is list or kind is tuple:
            return "[" + ",".join(self.encode(v, depth + 1) for v in list.__iter__(list(value))) + "]"
        if kind is dict and all(type(k) is str for k in dict.keys(value)):
            pairs = ",".join(
                "[" + self.quote(k) + "," + self.encode(v, depth + 1) + "]" for k, v in dict.items(value)
            )
            return '{"d":[' + pairs + "]}"
        handle = len(self.handles) + 1
        self.handles[handle] = value
        return '{"h":' + str(handle) + ',"t":' + self.quote(kind.__name__[:100]) + "}"


def _decode(value, handles):
    kind = type(value)
    if kind is list:
        return [_decode(v, handles) for v in value]
    if kind is dict:
        if "$h" in value:
            return handles[value["$h"]]
        return {k: _decode(v, handles) for k, v in value.items()}
    return value


def _exception_reply(rid, exc, filename):
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    lines = traceback.format_list(frames[-8:])
    detail = "".join(lines) + "".join(traceback.format_exception_only(type(exc), exc))
    quote = __import__("_json").encode_basestring_ascii
    return '{"id":%d,"exc":%s,"msg":%s,"tb":%s}' % (
        rid,
        quote(type(exc).__name__[:100]),
        quote(_safe_str(exc)[:2000]),
        quote(detail[-4000:]),
    )


def _safe_str(exc):
    try:
        return str(exc)
    except BaseException:
        return "<unprintable exception>"


# ---------------------------------------------------------------------------------------------
# the harness-owned concurrency driver (the only test code that must share this process). It is handed from
# function to function as an argument and never stored in a global: nothing the submission can walk to by
# attribute (this file is ``sys.modules["__main__"]``) leads to it.


def _load_explorer():
    """env/sandbox/explorer.py, loaded by path before isolation (never in sys.modules)."""
    return _sibling("_adbg_explorer", "explorer.py")


# ---------------------------------------------------------------------------------------------


def _load(setup):
    import types

    filename = os.path.join(os.getcwd(), setup["filename"])
    with open(filename, "w", encoding="utf-8") as handle:  # for tracebacks (linecache)
        handle.write(setup["source"])
    module = types.ModuleType(setup["module"])
    module.__file__ = filename
    sys.modules[setup["module"]] = module
    exec(compile(setup["source"], filename, "exec"), module.__dict__)
    return module, filename


def _serve(module, filename, explorer):
    handles = {}
    while True:
        try:
            request = _recv()
        except EOFError:
            return
        rid = request["id"]
        op = request["op"]
        if op == "exit":
            return
        try:
            if op == "explore":
                value = explorer.explore(module, filename, request["plan"])
            elif op == "hammer":
                value = explorer.hammer(module, request["plan"])
            else:
                owner = handles[request["handle"]] if "handle" in request else module
                member = getattr(owner, request["name"])
                if op == "call":
                    args = _decode(request.get("args", []), handles)
                    kwargs = _decode(request.get("kwargs", {}), handles)
                    value = member(*args, **kwargs)
                else:  # "getattr"
                    value = member
            reply = '{"id":%d,"ok":%s}' % (rid, _Encoder(handles).encode(value))
        except BaseException as exc:  # the submission's exceptions are data for the tests
            reply = _exception_reply(rid, exc, filename)
        sys.stdout.flush()
        _send(reply)


# ---------------------------------------------------------------------------------------------
# repository mode: the project's files live in this run's directory; the trusted test process
# imports them through proxies, and every operation on a project object happens here


class _RepoEncoder(_Encoder):
    """Plain data with its exact type (tuple, set, bytes, dates ...); the rest as handles."""

    def __init__(self, state):
        _Encoder.__init__(self, state["handles"])
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
        standin = self.state["standins"].get(id(value)) if kind is _FUNCTION else None
        if standin is not None and standin[1] is value:  # so does the test's function (``wrapper.__wrapped__ is f``)
            own = [(k, v) for k, v in list(value.__dict__.items())[:64] if type(k) is str and not k.startswith(("_", "pytest"))]
            if not own:
                return '{"lo":%d}' % standin[0]
            pairs = ",".join("[%s,%s]" % (self.quote(k), self.encode(v, depth + 1)) for k, v in own)
            return '{"lo":%d,"fd":[%s]}' % (standin[0], pairs)  # with what the project set on it (parse.with_pattern)
        return self.handle(value)

    def number(self, value):
        key = id(value)
        number = self.state["ids"].get(key)
        if number is None:
            number = len(self.handles) + 1
            self.handles[number] = value
            self.state["ids"][key] = number
        return number

    def handle(self, value):
        number = self.number(value)
        kind = type(value)
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
                info["m"] = _chain(value)
        elif isinstance(value, BaseException):
            info["k"] = "exi"
            info["m"] = _chain(kind)
        elif callable(value):
            info["k"] = "call"
        else:
            info["k"] = "obj"
            if kind is _GENERATOR or kind in _SELF_ITERATORS:  # iter() of it is itself and it has no len(): the trusted side knows without asking
                info["g"] = 1
        if info["k"] in ("call", "obj"):  # what obj.__class__ names on the trusted side
            info["c"] = [str(getattr(kind, "__module__", "?"))[:200], str(getattr(kind, "__qualname__", "?"))[:200]]
        return __import__("json").dumps(info)


def _chain(cls):
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


def _repo_decode(value, state):
    handles = state["handles"]
    kind = type(value)
    if kind is list:
        return [_repo_decode(v, state) for v in value]
    if kind is tuple:
        return tuple(_repo_decode(v, state) for v in value)
    if kind is set or kind is frozenset:
        return kind(_repo_decode(v, state) for v in value)
    if kind is dict:  # every dict arrives wrapped as {None: (tag, payload...)}
        tag, *rest = value[None]
        if tag == "d":
            return {_repo_decode(k, state): _repo_decode(v, state) for k, v in rest[0]}
        if tag == "h":
            return handles[rest[0]]
        if tag == "cb":
            made = _callback(state, rest[0], rest[1], rest[2] if len(rest) > 2 else None, rest[3] if len(rest) > 3 else None)
            for key, item in rest[4] if len(rest) > 4 and type(rest[4]) is list else ():  # the function's own attributes
                if type(key) is str and not key.startswith(("_", "pytest")):
                    setattr(made, key, _repo_decode(item, state))
            return made
        if tag == "bm":
            return __import__("types").MethodType(_repo_decode(rest[0], state), _repo_decode(rest[1], state))
        if tag == "ic":
            copies = state.setdefault("copied", {})
            if rest[0] not in copies:
                copies[rest[0]] = _CopiedIterator(rest[0], __import__("pickle").loads(rest[1]), state)
            return copies[rest[0]]
        if tag == "it":
            made = state.setdefault("iterators", {})  # one stand-in per iterator of the test's
            if rest[0] not in made:
                pull = _callback(state, rest[0], rest[1])
                made[rest[0]] = _test_generator(pull) if len(rest) > 2 and rest[2] == "gen" else _TestIterator(pull)
            return made[rest[0]]
        if tag in ("st", "fs"):
            return (set if tag == "st" else frozenset)(_repo_decode(v, state) for v in rest[0])
        if tag == "lo":
            return _test_object(state, rest[0], rest[2])
        if tag == "pk":
            return _unpickle(rest[0], state)
        if tag == "mv":
            return memoryview(rest[0]).toreadonly()
        if tag == "mo":
            name = str(rest[0])
            if name.split(".")[0] not in sys.stdlib_module_names:
                raise ValueError("only the standard library's modules are named across")
            return __import__("importlib").import_module(name)
        if tag == "dv":
            items = [_repo_decode(v, state) for v in rest[1]]
            if rest[0] == "items":
                return dict(items).items()
            return (dict.fromkeys(items).keys() if rest[0] == "keys" else dict(enumerate(items)).values())
        if tag == "rg":
            return range(rest[0], rest[1], rest[2])
        if tag == "bi":
            import builtins

            return getattr(builtins, rest[0])
        import datetime as dt

        if tag in ("dt", "ti"):
            naive, zone, fold = rest[0]
            parsed = (dt.datetime if tag == "dt" else dt.time).fromisoformat(naive)
            return parsed.replace(tzinfo=_repo_decode(zone, state), fold=fold)
        if tag == "zi":
            import zoneinfo

            return zoneinfo.ZoneInfo(rest[0])
        if tag == "da":
            return dt.date.fromisoformat(rest[0])
        if tag == "td":
            return dt.timedelta(days=rest[0], seconds=rest[1], microseconds=rest[2])
        if tag == "tz":
            return dt.timezone(dt.timedelta(days=rest[0], seconds=rest[1]), rest[2])
        if tag == "D":
            import decimal

            return decimal.Decimal(rest[0])
        if tag == "U":
            import uuid

            return uuid.UUID(hex=rest[0])
        if tag == "Q":
            import fractions

            return fractions.Fraction(int(rest[0]), int(rest[1]))
        if tag == "R":
            import re

            return re.compile(rest[0].encode("latin-1") if rest[2] else rest[0], rest[1])
        raise ValueError("unknown value tag " + repr(tag))
    return value


class _TestOutcome(BaseException):
    """The test's own outcome (pytest.fail, skip) raised in a function of the test's that the project called."""


def _ask(state, number, op, args, kwargs):
    """Ask the trusted process to apply ``op`` to the test's object ``number`` (None: call it), serving the project's
    requests that makes meanwhile (the test's code may call the project back)."""
    import builtins

    router = state["router"]
    cid = router.new_cid()
    quote = __import__("_json").encode_basestring_ascii
    encoder = _RepoEncoder(state)
    pairs = ",".join("[" + quote(str(k)) + "," + encoder.encode(v) + "]" for k, v in kwargs.items())
    named = "" if op is None else ',"op":' + quote(op)
    # the arguments as the tuple they are: a list would cross as a project list, refreshed by a request when unpacked
    router.send('{"cb":%d,"cid":%d%s,"a":%s,"k":[%s]%s%s}' % (number, cid, named, encoder.encode(tuple(args)), pairs, _output(state), _advances(state)))
    while True:
        message = router.next(cid)
        if message.get("cid") == cid:
            break
        if message.get("op") == "exit":  # the run is over: its main loop takes it
            with router.cond:
                router.requests.insert(0, message)
            raise _TestOutcome("the test run ended while the project waited for the test's code")
        _serve_one(message, state)  # the test's function called the project: answer, then keep waiting
    if "exch" in message:
        raise state["handles"][message["exch"]]
    if "exct" in message:  # the test's exception class, as its twin here
        number, args, text = message["exct"]
        try:
            made = state["handles"][number](*_repo_decode(args, state))
        except Exception:
            made = Exception(str(text))
        raise made
    if "exc" in message:
        exc_type, text = message["exc"]
        cls = getattr(builtins, str(exc_type), None)
        if exc_type == "BaseException":
            raise _TestOutcome(str(text))  # pytest.fail, skip ...: the test's outcome, not the project's to catch
        raise (cls if isinstance(cls, type) and issubclass(cls, Exception) else Exception)(str(text))
    return _repo_decode(message["ok"], state)


_ARITHMETIC = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift", "rshift")
_FUNCTION = type(lambda: None)
_BUILTINS = __import__("builtins").__dict__
_GENERATOR = type((lambda: (yield))())


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


_SELF_ITERATORS = _self_iterators()
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


def _callback(state, number, name, parameters=None, about=None):
    """A function of the test's: calling it asks the trusted process to run it. With ``parameters`` (its signature,
    checked on the trusted side and here) it takes exactly those, so a wrong call fails here and a caller inspecting
    it sees the test's parameters. One stand-in per function: the same function twice is the same object here."""
    by_number = state.setdefault("standin_numbers", {})
    if number in by_number:
        return by_number[number]
    made = _signature_source(parameters) if parameters is not None else None
    if made is not None:
        source, defaults = made
        space = {"_adbg_ask": _ask, "_adbg_state": state, "_adbg_number": number, "_adbg_unset": _UNSET, "_adbg_d": defaults}
        exec(source, space)  # our own source: every name in it was checked to be an identifier
        call = space["call"]
    else:

        def call(*args, **kwargs):
            return _ask(state, number, None, args, kwargs)

    call.__name__ = call.__qualname__ = str(name)[:100]
    if type(about) is list and len(about) == 3 and all(a is None or type(a) is str for a in about):
        qualname, call.__doc__, module = about
        call.__qualname__ = qualname or call.__qualname__
        call.__module__ = module
    state.setdefault("standins", {})[id(call)] = (number, call)
    by_number[number] = call
    return call


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
    return {"": TestObject, "tzinfo": TestTzinfo, "mapping": TestMapping}


def _test_object(state, number, flags):
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
            return _repo_decode(pid, state)

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


def _advances(state):
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


def _pickle_here(obj, protocol, state):
    """A test's pickle.dumps of a project object, made here. Classes made here for the test (its subclasses of
    project classes, twins of its classes) and its own objects cannot be found by name in this process: they go as
    references to themselves, which only a load in this same run (``_unpickle_here``) resolves."""
    import io
    import pickle

    made_list = state.setdefault("made", [])
    made = {id(kind): number for number, kind in enumerate(made_list)}
    # the tests' modules (never imported here), and __main__: what a class the project makes for a caller
    # (attrs.make_class) names when that caller is this process's dispatcher instead of the test's module
    test_modules = ({kind.__module__ for kind in made_list} - set(sys.modules)) | {"__main__"}
    proxies = tuple((state.get("test_classes") or {}).values())

    class Pickler(pickle.Pickler):
        def persistent_id(self, value):
            if isinstance(value, type) and id(value) not in made and value.__module__ in test_modules:
                made[id(value)] = len(made_list)  # the project remade a test's class (attrs' slots=True)
                made_list.append(value)
            if isinstance(value, type) and id(value) in made:
                return ("made", made[id(value)])
            standin = state["standins"].get(id(value)) if type(value) is _FUNCTION else None
            if standin is not None and standin[1] is value:  # a test's function: itself again on loading
                return ("sf", standin[0])
            if proxies and type(value) in proxies:
                flags = next(k for k, v in state["test_classes"].items() if v is type(value))
                return ("lo", object.__getattribute__(value, "_adbg_number"), flags)
            return None

    buffer = io.BytesIO()
    Pickler(buffer, protocol).dump(obj)
    return buffer.getvalue()


def _unpickle_here(data, state):
    import io
    import pickle

    class Unpickler(pickle.Unpickler):
        def persistent_load(self, pid):
            if type(pid) is tuple and pid[0] == "made":
                return state.setdefault("made", [])[pid[1]]
            if type(pid) is tuple and pid[0] == "lo":
                return _test_object(state, pid[1], pid[2])
            if type(pid) is tuple and pid[0] == "sf" and pid[1] in state.get("standin_numbers", {}):
                return state["standin_numbers"][pid[1]]
            raise pickle.UnpicklingError("unknown reference in a pickle of this run")

    return Unpickler(io.BytesIO(data)).load()


def _subclass(name, bases, attrs, made_here=None):
    """A test's subclass of project classes: a real class here, whose methods the test defined run in the trusted
    process (each is a callback, given this instance as a project object)."""
    made = {}
    for key, (kind, value) in attrs.items():  # the test's functions arrive as stand-ins taking their parameters
        if kind == "method":
            made[key] = value if type(value) is _FUNCTION else (lambda fn: lambda self, *a, **k: fn(self, *a, **k))(value)
        elif kind == "static":
            made[key] = staticmethod(value)
        elif kind == "class":
            made[key] = classmethod(value if type(value) is _FUNCTION else (lambda fn: lambda cls, *a, **k: fn(cls, *a, **k))(value))
        elif kind == "property":
            made[key] = property(value if type(value) is _FUNCTION else (lambda fn: lambda self: fn(self))(value))
        else:
            made[key] = value
    kind = type(str(name), tuple(bases), made)
    if made_here is not None:
        made_here.append(kind)
    return kind


_COMPARISONS = frozenset(("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"))


def _repo_ops():
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


class _Encoded(str):
    """A reply value already encoded (a pull's items, each encoded as it was made)."""


_NUMBERS = (int, float, bool)  # exact types: adding or comparing them runs no project code and cannot fail


def _plain_hashable(value, depth=0):
    """A value the trusted side gets as its own hashable data: hashing or comparing it there runs no project code and
    cannot fail (exact types only: a subclass stays a handle)."""
    kind = type(value)
    if kind is tuple:
        return depth < MAX_DEPTH and all(_plain_hashable(v, depth + 1) for v in tuple.__iter__(value))
    return value is None or kind is bool or kind is int or kind is float or kind is str or kind is bytes


def _pull(obj, mode, state):
    """Items of a project iterator the test's consumer takes all of (``list(it)``, ``sorted(it)``: mode "all"), or
    takes while each is plain hashable data (``set(it)``: mode "plain") or a plain number (``sum(it)``, ``max(it)``:
    mode "numbers"); those two stop after the first item that is not, the one where the consumer could stop or run
    project code. Pulled one by one with next() as the single "next"
    operation would be, in this thread; an exception that ends the pull (StopIteration included) is kept and raised
    by the next "next" operation on the iterator, where the consumer would have met it (a pull after it pulls
    nothing more)."""
    encoded, size, ended = [], 0, id(obj) in state["pending"]
    stopped = False
    while not ended and len(encoded) < MAX_PULL and size < MAX_PULL_TEXT:
        try:
            item = next(obj)
        except StopIteration as exc:
            # A bare end (no value, exactly StopIteration): the trusted side raises it itself after the items, so
            # the consumer's last next() costs no round trip; nothing is kept here (a later next() asks the iterator)
            if type(exc) is StopIteration and exc.args == ():
                stopped = True
            else:
                state["pending"][id(obj)] = exc
            ended = True
            break
        except BaseException as exc:  # noqa: B036  (the project's: raised again when asked)
            state["pending"][id(obj)] = exc
            ended = True
            break
        text = _RepoEncoder(state).encode(item)
        encoded.append(text)
        size += len(text)
        if mode != "all" and not (_plain_hashable(item) if mode == "plain" else type(item) in _NUMBERS):
            break
    # (items, ended): ended is 2 when the iterator stopped bare after the items (the trusted side raises
    # StopIteration itself), true when the next "next" raises what the pull met, false when it may yield more
    flag = "2" if stopped else "true" if ended else "false"
    return _Encoded('{"T":[{"T":[%s]},%s]}' % (",".join(encoded), flag))


def _callattr(obj, name, /, *args, **kwargs):
    """``obj.name(...)`` in one request: the attribute read, then the call (keyword arguments of any name)."""
    return getattr(obj, name)(*args, **kwargs)


def _next(obj, state):
    """next(): the exception a pull met on this iterator first, if one is kept."""
    pending = state["pending"].pop(id(obj), None) if state["pending"] else None
    if pending is not None:
        raise pending
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


_CHAINS = {}  # id of an exception class -> (the class, kept alive so the id stays its own; its chain as JSON)


def _chain_text(cls):
    known = _CHAINS.get(id(cls))
    if known is None or known[0] is not cls:
        known = _CHAINS[id(cls)] = (cls, __import__("json").dumps(_chain(cls)))
    return known[1]


def _repo_exception(rid, exc, state, root):
    import traceback

    frames = _project_frames(exc.__traceback__, root)
    detail = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(exc), exc))
    quote = __import__("_json").encode_basestring_ascii
    try:  # the tuple it is: a list would cross as a project list, refreshed by one more request per exception
        args = _RepoEncoder(state).encode(tuple.__getitem__(exc.args, slice(None)) if isinstance(exc.args, tuple) else list(exc.args))
    except BaseException:
        args = "[" + quote(_safe_str(exc)[:2000]) + "]"
    # The object's handle, for the stand-in of a project exception class; a builtin one is rebuilt from its
    # arguments on the trusted side, which never asks for it (and keeping each StopIteration alive costs memory).
    kind = type(exc)
    handle = "null" if getattr(kind, "__module__", None) == "builtins" and _BUILTINS.get(kind.__name__) is kind else _RepoEncoder(state).handle(exc)
    return '{"id":%d,"exc":%s,"msg":%s,"tb":%s,"m":%s,"a":%s,"h":%s}' % (
        rid,
        quote(kind.__name__[:100]),
        quote(_safe_str(exc)[:2000]),
        quote(detail[-6000:]),
        _chain_text(kind),
        args,
        handle,
    )


def _load_repo(setup):
    root = os.getcwd()
    for rel, content in setup["files"].items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(content.encode("utf-8", "surrogateescape") if type(content) is str else content)
    for key, value in setup.get("env", {}).items():
        os.environ[key] = value
    sys.path[:0] = [os.path.normpath(os.path.join(root, p)) for p in setup.get("paths", ["."])]
    sys.dont_write_bytecode = True
    return root + os.sep


MAX_WARNINGS = 100
_thread_count = __import__("_thread")._count  # threads started besides the main one


class _WarningLog:
    """What ``catch_warnings(record=True)`` plus ``simplefilter("always")`` around each operation gives (every warning
    recorded, for the trusted process's filters to decide; the filters as they were before it, whatever the operation
    changed), set up once and checked at each operation instead of entered anew: that context cost a third of the
    child's share of a call. An operation nested in another (the test's callback called the project) takes its own
    context, as before."""

    def __init__(self):
        import warnings

        self.warnings = warnings
        self.log = []
        self.append = self.log.append  # the one bound method installed: checked by identity
        self.base = list(warnings.filters)  # the filters a fresh catch_warnings would start from
        self.installed = None
        self.expected = None
        self.depth = 0

    def begin(self):
        """Start recording an outermost operation; where its records start in the log."""
        w = self.warnings
        if not (w.filters is self.installed and self.installed == self.expected
                and w._showwarnmsg_impl is self.append and w.showwarning is w._showwarning_orig):
            self.installed = [("always", None, Warning, None, 0), *self.base]
            self.expected = list(self.installed)
            w.filters = self.installed
            w._filters_mutated()
            w._showwarnmsg_impl = self.append
            w.showwarning = w._showwarning_orig
        self.depth += 1
        return len(self.log)

    def end(self, start):
        """The warnings the operation begun at ``start`` raised."""
        self.depth -= 1
        caught = self.log[start:]
        del self.log[start:]
        return caught


def _serve_one(request, state):
    """Apply one operation and reply: its value or the project's exception, with the warnings it raised."""
    rid = request["id"]
    caught = []
    log = state["warnings"]
    try:
        fn = state["ops"][request["name"]]
        args = _repo_decode(request.get("args", ()), state)
        kwargs = _repo_decode(request.get("kwargs", {None: ("d", [])}), state)
        if log.depth:
            import warnings

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")  # the trusted process's filters decide what each one does there
                result = fn(*args, **kwargs)
        else:
            start = log.begin()
            try:
                result = fn(*args, **kwargs)
            finally:
                caught = log.end(start)
        reply = '{"id":%d,"ok":%s' % (rid, result if type(result) is _Encoded else _RepoEncoder(state).encode(result))
    except BaseException as exc:  # the project's exceptions are data for the tests
        reply = _repo_exception(rid, exc, state, state["root"])[:-1]
    # "mt": the project has threads of its own running, so the trusted side keeps no copy as current (split.py's fresh)
    threads = ',"mt":1' if _thread_count() else ""
    state["router"].send(reply + _warnings(caught) + _output(state) + _advances(state) + threads + "}")


def _warnings(caught):
    if not caught:
        return ""
    quote = __import__("_json").encode_basestring_ascii
    items = []
    for w in caught[:MAX_WARNINGS]:
        category = w.category if isinstance(w.category, type) and issubclass(w.category, Warning) else UserWarning
        items.append("[%s,%s,%s,%d]" % (__import__("json").dumps(_chain(category)), quote(_safe_str(w.message)[:2000]),
                                        quote(str(w.filename)[:300]), int(w.lineno or 0)))
    return ',"w":[' + ",".join(items) + "]"


class _Router:
    """The repository run's channel, shared by the project's threads (a test's function called back from a worker
    thread): one thread reads at a time, each reply goes to the thread waiting for its cid, and the trusted process's
    requests go to whichever thread asks next (the one waiting for a reply serves them meanwhile)."""

    def __init__(self):
        import threading

        self.cond = threading.Condition()
        self.send_lock = threading.Lock()
        self.reading = False
        self.closed = False
        self.replies = {}
        self.requests = []
        self.cid = 0

    def new_cid(self):
        with self.cond:
            self.cid += 1
            return self.cid

    def send(self, text):
        with self.send_lock:
            sys.stdout.flush()
            _send(text)

    def next(self, cid=None):
        """The reply to ``cid``, or a request to serve (the only thing returned when ``cid`` is None)."""
        with self.cond:
            while True:
                if cid is not None and cid in self.replies:
                    return self.replies.pop(cid)
                if self.requests:
                    return self.requests.pop(0)
                if self.closed:
                    raise EOFError
                if self.reading:
                    self.cond.wait()
                    continue
                self.reading = True
                self.cond.release()
                try:
                    message = _recv()
                except EOFError:
                    message = None
                finally:
                    self.cond.acquire()
                    self.reading = False
                    self.cond.notify_all()
                if message is None:
                    self.closed = True
                elif "cid" in message:
                    self.replies[message["cid"]] = message
                else:
                    self.requests.append(message)


MAX_OUTPUT = 4 * 1024 * 1024  # what one run may print for the tests to see; past it, a note says it was cut


class _Output:
    """The project's sys.stdout / sys.stderr: what it prints goes to the trusted process with its next message, and
    is written there to the test's own stream (capsys, redirect_stdout and pyparsing's debug tests read it); it also
    goes where it went before, the run's own output (the agent's run_tests shows it)."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, state, key, original):
        self.state, self.key, self.original = state, key, original

    def write(self, text):
        if type(text) is not str:
            raise TypeError("write() argument must be str, not " + type(text).__name__)
        self.original.write(text)
        state = self.state
        if state["printed"] < MAX_OUTPUT:
            kept = text[: MAX_OUTPUT - state["printed"]]
            state["printed"] += len(text)
            if len(kept) < len(text):
                kept += "\n[the project's output past %d characters is not shown]\n" % MAX_OUTPUT
            state["out"].append((self.key, kept))
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        self.original.flush()

    def isatty(self):
        return False

    def writable(self):
        return True

    def fileno(self):
        raise OSError("the project's output goes to the tests, not to a file")


def _output(state):
    """The pending output as a member of the next message (``,"o":[[stream, text], ...]``), then forgotten."""
    if not state["out"]:
        return ""
    sys.stdout.flush()  # the run's own output, in step with the tests'
    sys.stderr.flush()
    pending, state["out"] = state["out"], []
    quote = __import__("_json").encode_basestring_ascii
    return ',"o":[' + ",".join('["%s",%s]' % (key, quote(text)) for key, text in pending) + "]"


def _serve_repo(root):
    state = {"handles": {}, "ids": {}, "ops": _repo_ops(), "root": root, "router": _Router(), "made": [], "standins": {}}
    state["warnings"] = _WarningLog()
    state["ops"]["subclass"] = lambda name, bases, attrs: _subclass(name, bases, attrs, state["made"])
    # A test's pickle.dumps of a project object: pickled and loaded here, never in the trusted process.
    state["ops"]["pickle"] = lambda obj, protocol: _pickle_here(obj, protocol, state)
    state["ops"]["unpickle"] = lambda data: _unpickle_here(data, state)
    # Wire of the speed-ups (env/verdict/host/split.py is the other half): "pull" [iterator, mode] answers
    # {"T": [{"T": [items]}, ended]}; "callattr" [obj, name, args...] is getattr then call; a handle's "g": 1 marks a
    # generator; "next" raises first what a pull met.
    state["pending"] = {}  # id of an iterator (alive: it has a handle) -> the exception a pull of it met
    state["ops"]["next"] = lambda obj: _next(obj, state)
    state["ops"]["pull"] = lambda obj, mode: _pull(obj, mode, state)
    state["ops"]["callattr"] = _callattr
    state["out"], state["printed"], state["read"] = [], 0, []
    # The builtins both sides share, as the trusted process names them (it checks each one it is sent)
    state["shared"] = frozenset()
    state["ops"]["share_builtins"] = lambda names: state.__setitem__("shared", frozenset(n for n in names if type(n) is str))
    sys.stdout, sys.stderr = _Output(state, "o", sys.stdout), _Output(state, "e", sys.stderr)
    while True:
        try:
            request = state["router"].next()
        except EOFError:
            return
        if request.get("op") == "exit":
            return
        _serve_one(request, state)


def _run_repo(setup):
    try:
        root = _load_repo(setup)
    except BaseException as exc:
        sys.stdout.flush()
        _send(_exception_reply(0, exc, ""))
        return
    sys.stdout.flush()
    _send('{"id":0,"ok":"ready"}')
    _serve_repo(root)
    sys.stdout.flush()


# ---------------------------------------------------------------------------------------------
# debug mode: the project's files, and one test or script run under the tracer (env/sandbox/tracer.py);
# the trusted side's commands arrive while the program is stopped


def _prepare(config):
    """Modules read from the server's tree load before isolation (they are out of reach afterwards): the race
    explorer for a verdict sandbox (returned, never stored in a global); pytest and the tracer for a debug sandbox."""
    if not config.get("debug"):
        explorer = _load_explorer()
        # A repository task's declared requirements, for the project's own imports (after its own paths: the
        # project always wins over an installed copy of itself).
        sys.path.extend(p for p in config.get("site", ()) if p not in sys.path)
        return explorer
    sys.path.extend(p for p in config.get("site", ()) if p not in sys.path)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the server's own pytest plugins are not the project's
    sys.modules["_adbg_tracer"] = _sibling("_adbg_tracer", "tracer.py")
    import _pytest.python  # noqa: F401
    import pytest  # noqa: F401  (and the plugins pytest.main loads: imported once, here)

    if config.get("host"):  # a sandboxed verdict run reports with the trusted test process's own plugin
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "adbg_host", os.path.join(config["host"], "__init__.py"), submodule_search_locations=[config["host"]]
        )
        package = importlib.util.module_from_spec(spec)
        sys.modules["adbg_host"] = package
        spec.loader.exec_module(package)
        __import__("adbg_host.pytest_host")


def _run_debug(setup):
    import json

    try:
        root = _load_repo(setup)
        os.environ["TMPDIR"] = root
    except BaseException as exc:
        sys.stdout.flush()
        _send(_exception_reply(0, exc, ""))
        return

    def reply(rid, data):
        sys.stdout.flush()
        _send(json.dumps({"id": rid, "ok": data}))

    def request():
        try:
            return _recv()
        except EOFError:  # the server closed the session
            os._exit(0)

    tracer = sys.modules["_adbg_tracer"].Tracer(root, reply, request, setup.get("stop_at_entry", True))
    for path, line, condition, log in setup.get("breakpoints", ()):
        try:
            tracer.add_break(path, line, condition, log)
        except SyntaxError:
            continue  # checked by the trusted side when it was set
    target = setup["target"]
    if target["kind"] == "test":
        tracer.run_test(target["id"])
    else:
        tracer.run_script(os.path.join(root, target["path"]))
    reply(tracer.pending, tracer.ended)


def _name_process(name):
    # Shown by ps and /proc/<pid>/comm: "adbg-idle" waits in the pool, "adbg-run" serves a run.
    LAYERS.load_libc()[1].prctl(15, name, 0, 0, 0)  # PR_SET_NAME


def _run_pytest(setup):
    """A sandboxed verdict run: the project and its tests together here, pytest loaded before any of their code;
    the records (collected ids, each test's outcome) are the one reply."""
    import json

    try:
        root = _load_repo(setup)
        os.environ["TMPDIR"] = root
    except BaseException as exc:
        sys.stdout.flush()
        _send(_exception_reply(0, exc, ""))
        return
    records = []

    class _NoRemote:
        ops = 0  # nothing crosses a process boundary here

    recorder = sys.modules["adbg_host.pytest_host"].Recorder(records.append, setup["select"], _NoRemote())
    plugins = [recorder]
    measure = _Coverage(root) if setup.get("coverage") else None
    if measure is not None:
        plugins.append(measure)
    ini = os.path.join(root, "adbg-pytest.ini")
    with open(ini, "w", encoding="utf-8") as handle:
        handle.write("[pytest]\n")  # the project's own pytest settings are the agent's to write: never read
    args = ["-q", "--no-header", "--rootdir", root, "-c", ini, "--tb=short", "-W", "ignore::DeprecationWarning"]
    for plugin in sys.modules["adbg_host.pytest_host"].UNUSED_PLUGINS:
        args += ["-p", "no:" + plugin]
    try:
        if measure is not None:
            measure.start()
        sys.modules["pytest"].main(args + list(setup["collect"]), plugins=plugins)
    except BaseException as exc:  # what the project's code did to the session: the run says so, outcomes stand
        records.append({"fatal": "the test session ended early: " + _safe_str(exc)[:300]})
    if measure is not None:
        records.append({"coverage": measure.finish()})
    sys.stdout.flush()
    _send(json.dumps({"id": 0, "ok": records}))


class _Coverage:
    """Which lines of the project each test executed (the coverage package, one dynamic context per test): for task
    synthesis, which mutates covered lines and screens each mutant with the tests that cover it."""

    def __init__(self, root):
        import coverage  # from the task's test environment

        self.root = root
        self.cov = coverage.Coverage(data_file=None, config_file=False, include=[root + "*"], auto_data=False)

    def start(self):
        self.cov.start()

    def pytest_runtest_logstart(self, nodeid, location):
        self.cov.switch_context(nodeid)

    def pytest_runtest_logfinish(self, nodeid, location):
        self.cov.switch_context("")

    def finish(self):
        """{"tests": [ids], "lines": {path: {line: [indices into tests]}}}: compact, a reply has a size limit."""
        self.cov.stop()
        data = self.cov.get_data()
        tests, index, lines = [], {}, {}
        for path in data.measured_files():
            if not path.startswith(self.root):
                continue
            per_line = {}
            for line, contexts in sorted(data.contexts_by_lineno(path).items()):
                ids = []
                for context in contexts:
                    if context:
                        if context not in index:
                            index[context] = len(tests)
                            tests.append(context)
                        ids.append(index[context])
                if ids:
                    per_line[str(line)] = sorted(ids)
            if per_line:
                lines[path[len(self.root):]] = per_line
        return {"tests": tests, "lines": lines}


def _run(setup, explorer):
    """Load the submission and answer calls until the server is done with this run."""
    _name_process(b"adbg-run")
    if setup.get("mode") == "repo":
        return _run_repo(setup)
    if setup.get("mode") == "pytest":
        return _run_pytest(setup)
    if setup.get("mode") == "debug":
        return _run_debug(setup)
    try:
        module, filename = _load(setup)
    except BaseException as exc:
        sys.stdout.flush()
        _send(_exception_reply(0, exc, os.path.join(os.getcwd(), setup["filename"])))
        return
    sys.stdout.flush()
    _send('{"id":0,"ok":"ready"}')
    _serve(module, filename, explorer)
    sys.stdout.flush()


def main(parent):
    """The fresh-interpreter path: isolate this process (dying with ``parent``), then run."""
    setup = _recv()
    explorer = _prepare(setup["config"])
    LAYERS.isolate(setup["config"], parent)
    _run(setup, explorer)


# ---------------------------------------------------------------------------------------------
# the warm path: a pre-imported, single-threaded fork server ("zygote")

# Imported once in the zygote so that no run pays for them; none holds a secret.
ZYGOTE_PRELOAD = (
    "ctypes", "_json", "json", "types", "traceback", "linecache", "threading", "hashlib", "hmac", "shutil",
    "tempfile", "bisect", "math", "typing", "collections", "functools", "itertools", "heapq", "dataclasses", "re",
    "datetime", "decimal", "operator", "importlib", "enum",
)


def _pooled_child(config, own, scratch, explorer, parent):
    """A pre-isolated child: every layer applied (it dies with the zygote, ``parent``), then it waits for a run's
    fds and setup."""
    global REQ_FD, RESP_FD
    import signal
    import socket

    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    fd = own.fileno()
    os.closerange(3, fd)  # nothing of the zygote's: its control socket, other children's sockets
    os.closerange(fd + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    os.setsid()  # its own process group: the server kills the whole group
    os.chdir(scratch)
    LAYERS.isolate(config, parent)
    _name_process(b"adbg-idle")
    _, fds, _, _ = socket.recv_fds(own, 64, 3)
    own.close()
    if len(fds) != 3:
        return  # the zygote is shutting down
    req_fd, resp_fd, out_fd = fds
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.close(out_fd)
    REQ_FD, RESP_FD = req_fd, resp_fd
    sys.argv = [sys.argv[0], str(req_fd), str(resp_fd)]
    _run(_recv(), explorer)


def zygote(ctrl_fd, parent):
    """Keep a few pre-isolated children ready and hand each run's fds to one of them.

    The first message on the SOCK_SEQPACKET control socket is the sandbox's configuration; each
    later one is a run, with its three fds attached (SCM_RIGHTS). The reply is the child's pid;
    when a run's child exits, its status follows. This process stays single-threaded, never runs
    submitted code, and removes each child's scratch directory once it has exited.

    It dies with the server (``parent``), and its children with it. A ``stop`` message (the server
    replaces this zygote) leaves the runs in flight to the server; the socket closing without one
    means the server is gone, and every child is killed.
    """
    LAYERS.die_with_parent(parent)
    import collections
    import json
    import select
    import shutil
    import signal
    import socket
    import tempfile

    for name in ZYGOTE_PRELOAD:
        __import__(name)
    ctrl = socket.socket(fileno=ctrl_fd)
    config = marshal.loads(ctrl.recv(1 << 20))
    explorer = _prepare(config)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    pool = collections.deque()  # (pid, socket, scratch) of idle, pre-isolated children
    running = {}  # pid -> scratch of children serving a run
    uid = config["layers"].get("uid")
    me = os.getpid()
    abandoned = False

    def fork_pooled():
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        scratch = tempfile.mkdtemp(prefix="adbg-run-", dir=config["tmp_root"])
        if uid is not None:
            os.chown(scratch, uid, uid)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                ours.close()
                _pooled_child(config, theirs, scratch, explorer, me)
                sys.stdout.flush()
            except BaseException:
                __import__("traceback").print_exc()  # into the run's output, if it got one
                code = 1
            os._exit(code)
        theirs.close()
        pool.append((pid, ours, scratch))

    def reap():
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in running:
                shutil.rmtree(running.pop(pid), ignore_errors=True)
                ctrl.send(json.dumps({"exit": pid, "status": os.waitstatus_to_exitcode(status)}).encode())
            else:  # an idle child died: drop it, a new one replaces it
                for entry in [e for e in pool if e[0] == pid]:
                    pool.remove(entry)
                    entry[1].close()
                    shutil.rmtree(entry[2], ignore_errors=True)

    def hand_over(fds):
        while True:
            if not pool:
                fork_pooled()
            pid, sock, scratch = pool.popleft()
            try:
                socket.send_fds(sock, [b"run"], fds)
            except OSError:
                continue  # that child is gone; the next one takes the run
            finally:
                sock.close()
            running[pid] = scratch
            return pid

    try:
        while len(pool) < config["pool"]:
            fork_pooled()
        while True:
            ready = select.select([ctrl, wake_r], [], [])[0]
            if wake_r in ready:
                os.read(wake_r, 4096)
                reap()
            if ctrl in ready:
                message, fds, _, _ = socket.recv_fds(ctrl, 65536, 3)
                if not message:
                    abandoned = True  # the server is gone
                    return
                request = marshal.loads(message)
                if request.get("stop"):
                    return
                pid = hand_over(fds)
                for fd in fds:
                    os.close(fd)
                ctrl.send(json.dumps({"id": request["id"], "pid": pid}).encode())
                while len(pool) < config["pool"]:
                    fork_pooled()
    finally:
        for pid, sock, scratch in pool:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            sock.close()
            running[pid] = scratch
        # Runs still in flight end by their server-side deadline at the latest, or now if nobody is left to read them.
        for pid, scratch in running.items():
            if abandoned:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--probe"]:
        LAYERS.probe(sys.argv[2] or None, int(sys.argv[3]) if sys.argv[3] else None)
    elif sys.argv[1:2] == ["--zygote"]:
        parent = LAYERS.parent_from_argv()
        zygote(int(sys.argv[2]), parent)
    else:
        parent = LAYERS.parent_from_argv()
        REQ_FD, RESP_FD = int(sys.argv[1]), int(sys.argv[2])
        main(parent)
