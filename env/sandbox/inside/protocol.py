"""The split's wire tags: the one table both halves keep to (``tests/test_wire_protocol.py`` reads the code of each half
and checks it uses exactly these). Standard library only, nothing imported: the sandbox half is this folder
(``values.py``, ``ops.py``, ``serve.py``), the trusted half ``env/verdict/host`` (``codec.py``, ``conversation.py``).
Both halves load this one file: the sandbox as part of its package, the trusted test host by path
(``env/verdict/host/protocol.py``). Each checks its own dispatch against it as it loads (``agree``: the sandbox's value
decoder and operations, the host's handle kinds) and refuses to run when they differ. Elsewhere the tags stay literals
(templates of the child's JSON replies, the hot paths of both codecs), and ``tests/test_wire_protocol.py`` reads each
half's code for them.
"""

# The trusted side's values in a request (marshal data): each dict is wrapped as ``{None: (tag, payload...)}``,
# built by env/verdict/host/codec.py's ``Codec.encode`` and read by values.py's ``repo_decode``.
VALUE_TAGS = {
    "d": "a dict: [(key, value), ...]",
    "h": "a project object, by its handle",
    "cb": "a function of the test's: (number, name, parameters, about, its own attributes[, (magic, marshalled code) of a "
          "portable lambda]); calling it asks the trusted side, or runs the portable lambda's code in the sandbox",
    "bm": "a project function bound to an object of the test's: (function, owner)",
    "ic": "a test iterator of plain data, copied: (number, pickle); how far the project reads it goes back",
    "it": "a test iterator pulled item by item: (number, name, 'gen' for a generator)",
    "st": "a set: [members]",
    "fs": "a frozenset: [members]",
    "lo": "an object of the test's, by reference: (number, type name, proxy flags)",
    "pk": "a pickle of standard-library or requirement types (defaultdict, paths ...), loaded in the sandbox",
    "mv": "a memoryview: its bytes, read-only",
    "mo": "a standard-library module, by name (the sandbox imports its own)",
    "dv": "a dict view: (keys/values/items, [items])",
    "rg": "a range: (start, stop, step)",
    "bi": "a builtin, by name (len, int, ValueError, Ellipsis ...)",
    "dt": "a datetime: (naive isoformat, tzinfo, fold)",
    "ti": "a time: (naive isoformat, tzinfo, fold)",
    "zi": "a zoneinfo.ZoneInfo: its key",
    "da": "a date: isoformat",
    "td": "a timedelta: (days, seconds, microseconds)",
    "tz": "a datetime.timezone: (offset days, offset seconds, name)",
    "D": "a Decimal: its text",
    "U": "a UUID: its hex",
    "Q": "a Fraction: (numerator, denominator) as text",
    "R": "a compiled pattern: (pattern, flags, whether bytes)",
}

# The sandbox's values in a reply (JSON): an object's keys, written by values.py's ``RepoEncoder`` and read by
# codec.py's ``Codec.decode`` / ``Codec.proxy``.
REPLY_TAGS = {
    "h": "a handle: the project object stays in the sandbox under this number",
    "t": "a handle's type name",
    "k": "a handle's kind (HANDLE_KINDS)",
    "q": "a class handle's module-qualified name",
    "m": "an exception class's chain: [[qualname, [direct bases]], ...]",
    "c": "an object's class, as a class handle's fields (the same class is the same handle): type(obj) there",
    "n": "a class handle's [module, qualname], for the trusted side's class standing for it",
    "z": "1: a class handle's class is a tzinfo class (its instances are tzinfos)",
    "g": "1: iter() of the object is itself and it has no len() (a generator, a builtin iterator)",
    "L": "a project list: a copy of its items, with its handle to write through",
    "S": "a set: its items (with a handle: the project's own set)",
    "T": "a tuple: its items",
    "F": "a frozenset: its items",
    "d": "a dict: [[key, value], ...] (with a handle: the project's own dict)",
    "B": "bytes, as latin-1 text",
    "dt": "a datetime: [naive isoformat, tzinfo, fold]",
    "ti": "a time: [naive isoformat, tzinfo, fold]",
    "zi": "a ZoneInfo: its key",
    "da": "a date: isoformat",
    "td": "a timedelta: [days, seconds, microseconds]",
    "tz": "a timezone: [offset days, offset seconds, name]",
    "D": "a Decimal: its text",
    "U": "a UUID: its hex",
    "Q": "a Fraction: [numerator, denominator] as text",
    "R": "a compiled pattern: [pattern, flags, whether bytes]",
    "lo": "an object of the test's, back from the project: its number",
    "fd": "with lo: attributes the project set on the test's function",
    "bi": "a builtin both sides share, by name",
    "bd": "a builtin type's own method: [type name, attribute]",
}

# The builtins a test's lambda may name and still run in the sandbox instead of being called back (env/verdict/host/
# sites.py's ``portable_lambda``): pure functions of their arguments, which neither look inside them nor tell a stand-in
# of the test's object from the object (isinstance is checked against the arguments themselves, see values.py's
# ``_run_here``); the sandbox keeps them as they were before the project's code loaded.
PURE_BUILTINS = ("isinstance", "len", "abs", "int", "float", "str", "bool", "ord", "chr", "divmod", "round", "min", "max")

# The kinds of handle (REPLY_TAGS "k"): what the trusted side makes of it.
HANDLE_KINDS = {
    "module": "a project module: a RemoteModule",
    "tzinfo": "a tzinfo: a RemoteTzinfo (datetimes accept it)",
    "class": "a class: a local class whose metaclass is RemoteClass (its instances' type())",
    "exc": "an exception class: a local stand-in class with the same chain",
    "exi": "an exception object: an instance of that stand-in",
    "call": "something callable: a RemoteObject",
    "obj": "anything else: a RemoteObject",
}

# Operations the trusted side asks for by name (a request's "name"): ops.py's ``repo_ops`` and serve.py's additions.
_OPERATORS = (
    "getitem", "setitem", "delitem", "contains", "eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul", "truediv",
    "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor", "xor_", "lshift", "rshift", "neg", "pos", "invert", "index",
)
_BUILTIN_CALLS = (
    "repr", "str", "bool", "hash", "iter", "abs", "int", "float", "format", "round", "reversed", "getattr",
    "setattr", "delattr", "isinstance", "issubclass",
)
OPS = {
    **{name: "the operator module's %s, applied to project objects" % name for name in _OPERATORS},
    **{name: "the builtin %s()" % name for name in _BUILTIN_CALLS},
    "dir": "dir(obj), as sorted names",
    "call": "fn(*args, **kwargs)",
    "method": "getattr(obj, name)(*args, **kwargs)",
    "callattr": "getattr(obj, name)(*args, **kwargs) in one request (a method call read at its call site)",
    "enter": "type(obj).__enter__(obj)",
    "exit": "type(obj).__exit__(obj, *args)",
    "exit_with": "__exit__ while an exception of the test's propagates",
    "items": "a dict's items (or the object's items) as a tuple",
    "rop": "a reflected operator: b <op> a",
    "dunder": "a.__eq__(b) and friends: the class's own method, NotImplemented kept",
    "codec": "codecs.lookup(name): a codec the project registered",
    "import": "importlib.import_module(name): a project module",
    "data": "a project object of a builtin data type, as that type's own value",
    "copy": "copy.copy(obj), made in the sandbox",
    "deepcopy": "copy.deepcopy(obj), made in the sandbox",
    "next": "next(it): first what a pull of it met",
    "len": "len(obj): first what an iterpull of it met asking it",
    "callpull": "(mode, obj, name or None, *args, **kwargs): a call whose result a consumer takes whole, then a pull of "
                "it in that mode if it is a generator or a builtin iterator -> {'T': [result, pull's answer or null]}",
    "iterpull": "(obj, mode, sized): iter(obj), len(obj) if sized, then a pull of the iterator in that mode -> "
                "{'T': [iterator, size: null, an int, {'T': [TypeError's message]} or 'kept', pull's answer or null]}",
    "pull": "a batch of an iterator's items: (iterator, mode all/plain/numbers/ints/floats) -> {'T': [{'T': [items]}, ended]}",
    "subclass": "a test's subclass of project classes, made in the sandbox",
    "pickle": "a test's pickle.dumps of a project object, made in the sandbox",
    "unpickle": "pickle.loads of such a pickle, in the sandbox",
    "share_builtins": "the builtins both sides share, named by the trusted side",
}


def agree(table, handled, who):
    """Refuse to run (RuntimeError) unless ``handled``, the tags or names one half's code dispatches on, are exactly
    this table's ``table`` (a tag one side drops, or one only one side knows, stops the run before any verdict)."""
    expected = globals()[table]
    missing, unknown = sorted(set(expected) - set(handled)), sorted(set(handled) - set(expected))
    if missing or unknown:
        raise RuntimeError(
            "the split's wire table (protocol.py %s) and %s disagree: %s" % (
                table, who, "; ".join(part for part in (
                    "not handled: " + ", ".join(missing) if missing else "",
                    "not in the table: " + ", ".join(unknown) if unknown else "",
                ) if part))
        )
