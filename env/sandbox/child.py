"""The sandbox child: loads one submitted module and answers calls from the trusted side.

``env.sandbox.runner`` starts this file as ``python -I -S -B -X utf8 child.py REQ_FD RESP_FD`` in
the run's private directory, with a near-empty environment, stdout/stderr going to a capped file,
one pipe carrying requests and one carrying replies. Each frame is a 4-byte big-endian length and a
payload: requests are ``marshal`` data written by the trusted parent; replies are JSON that the
parent parses with size caps, so nothing the submission controls is ever unmarshalled there.

The tests and their expected values never enter this process: it only answers "call f(args)"
with a value or an exception. Standard library only, and nothing slow to import, because this
file's start-up is paid on every run.
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


def _read_exact(n):
    chunks = []
    while n:
        chunk = os.read(REQ_FD, n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _recv():
    size = int.from_bytes(_read_exact(4), "big")
    return marshal.loads(_read_exact(size))


def _send(text):
    data = text.encode("utf-8", "surrogatepass")
    data = len(data).to_bytes(4, "big") + data
    while data:
        data = data[os.write(RESP_FD, data) :]


# ---------------------------------------------------------------------------------------------
# isolation, applied to this process before the submission is loaded


def _apply_rlimits(limits, was_root):
    pairs = (
        (resource.RLIMIT_AS, limits["memory_bytes"]),
        (resource.RLIMIT_FSIZE, limits["file_bytes"]),
        (resource.RLIMIT_NOFILE, limits["open_files"]),
        (resource.RLIMIT_CORE, 0),
    )
    for which, value in pairs:
        resource.setrlimit(which, (value, value))
    # SIGXCPU at the soft limit names the cause; the hard limit a second later is a SIGKILL.
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_seconds"], limits["cpu_seconds"] + 1))
    # RLIMIT_NPROC counts every process and thread of the real uid, the server's included; the
    # kernel skips it for root, but not once a user namespace has dropped root's capabilities,
    # so it is applied only where the server itself is not root.
    if not was_root:
        resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))


def _libc():
    import ctypes

    return ctypes, ctypes.CDLL(None, use_errno=True)


def _unshare_network(ctypes, libc, tmpfs_bytes=0):
    # A fresh user namespace lets an unprivileged process own a fresh network namespace
    # whose only interface (loopback) is down: no route to anything. With tmpfs_bytes, also a
    # mount namespace in which the run's directory becomes a tmpfs of that size: a disk-fill
    # attack fills the tmpfs, not the host's disk.
    clone_newns, clone_newuser, clone_newnet = 0x00020000, 0x10000000, 0x40000000
    uid, gid = os.geteuid(), os.getegid()
    flags = clone_newuser | clone_newnet | (clone_newns if tmpfs_bytes else 0)
    if libc.unshare(flags) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER|CLONE_NEWNET) failed")
    if not tmpfs_bytes:
        return
    # Map our own ids so that files on the new tmpfs have an owner.
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open("/proc/self/" + name, "w") as handle:
            handle.write(text)
    cwd = os.getcwd()
    ms_nosuid, ms_nodev, ms_noexec = 2, 4, 8
    options = f"size={tmpfs_bytes},mode=0700".encode()
    if libc.mount(b"tmpfs", cwd.encode(), b"tmpfs", ms_nosuid | ms_nodev | ms_noexec, options) != 0:
        raise OSError(ctypes.get_errno(), "mounting the run's tmpfs failed")
    os.chdir(cwd)  # enter the new mount


def _landlock(ctypes, libc, abi, read_only, read_write):
    # Syscall numbers are the same on x86_64 and aarch64 (generic table).
    create_ruleset, add_rule, restrict_self = 444, 445, 446
    fs_bits = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
    handled_fs = fs_bits.get(abi, (1 << 16) - 1)  # ABI >= 5 adds IOCTL_DEV
    handled_net = 0b11 if abi >= 4 else 0  # BIND_TCP | CONNECT_TCP, with no rule: no TCP
    scoped = 0b11 if abi >= 6 else 0  # abstract unix sockets and signals stay inside

    class RulesetAttr(ctypes.Structure):
        _fields_ = [
            ("handled_access_fs", ctypes.c_uint64),
            ("handled_access_net", ctypes.c_uint64),
            ("scoped", ctypes.c_uint64),
        ]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    attr = RulesetAttr(handled_fs, handled_net, scoped)
    ruleset = libc.syscall(create_ruleset, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    execute, read_file, read_dir = 1 << 0, 1 << 2, 1 << 3
    ro_dir = execute | read_file | read_dir
    # Own directory: files and subdirectories, but no symlinks, devices, fifos or sockets.
    rw_dir = ro_dir | (1 << 1) | (1 << 4) | (1 << 5) | (1 << 7) | (1 << 8)
    if abi >= 3:
        rw_dir |= 1 << 14  # TRUNCATE
    for paths, access in ((read_only, ro_dir), (read_write, rw_dir)):
        for path in paths:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                allowed = access if os.path.isdir(path) else access & (execute | read_file | (1 << 1))
                rule = PathBeneath(allowed & handled_fs, fd)
                if libc.syscall(add_rule, ruleset, 1, ctypes.byref(rule), 0) != 0:
                    raise OSError(ctypes.get_errno(), "landlock_add_rule failed for " + path)
            finally:
                os.close(fd)
    if libc.syscall(restrict_self, ruleset, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    os.close(ruleset)


def _seccomp(ctypes, libc, bpf):
    # The filter was compiled once by the server (libseccomp); loading raw BPF needs no library.
    # Its signal rules name a placeholder pid: this process's own, from here on (env.sandbox.seccomp).
    placeholder, own = (0x7AD5_EC01).to_bytes(4, sys.byteorder), os.getpid().to_bytes(4, sys.byteorder)
    bpf = b"".join(bpf[i:i + 4] + (own if bpf[i + 4:i + 8] == placeholder else bpf[i + 4:i + 8]) for i in range(0, len(bpf), 8))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    program = ctypes.create_string_buffer(bpf, len(bpf))
    fprog = SockFprog(len(bpf) // 8, ctypes.cast(program, ctypes.c_void_p))
    pr_set_seccomp, seccomp_mode_filter = 22, 2
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "loading the seccomp filter failed")


def _drop_uid(uid):
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _isolate(setup):
    # Below the server in CPU priority, so a busy sandbox never slows the API down.
    os.nice(setup["nice"])
    was_root = os.geteuid() == 0
    layers = setup["layers"]
    if layers.get("uid") is not None and was_root:
        _drop_uid(layers["uid"])
    ctypes, libc = _libc()
    pr_set_no_new_privs = 38
    libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0)
    if layers.get("netns"):
        _unshare_network(ctypes, libc, layers.get("tmpfs", 0))
    if layers.get("landlock"):
        _landlock(ctypes, libc, layers["landlock"], setup["read_only"], [os.getcwd(), *setup.get("read_write", ())])
    if layers.get("seccomp"):
        _seccomp(ctypes, libc, layers["seccomp"])
    _apply_rlimits(setup["limits"], was_root and layers.get("uid") is None)


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
# the harness-owned concurrency driver (the only test code that must share this process)


_EXPLORER = None  # env/sandbox/explorer.py, loaded by path before isolation (never in sys.modules)


def _load_explorer():
    global _EXPLORER
    if _EXPLORER is None:
        import importlib.util

        here = os.path.dirname(os.path.abspath(__file__))
        spec = importlib.util.spec_from_file_location("_adbg_explorer", os.path.join(here, "explorer.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _EXPLORER = module


# ---------------------------------------------------------------------------------------------


def _load(setup):
    import types

    filename = os.path.join(os.getcwd(), setup["filename"])
    with open(filename, "w", encoding="utf-8") as handle:  # for tracebacks (linecache)
        handle.write(setup["source"])
    if setup.get("explore"):
        _EXPLORER.install()  # the locks the submission creates are the explorer's models from its first line
    module = types.ModuleType(setup["module"])
    module.__file__ = filename
    sys.modules[setup["module"]] = module
    exec(compile(setup["source"], filename, "exec"), module.__dict__)
    return module, filename


def _serve(module, filename):
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
                value = _EXPLORER.explore(module, filename, request["plan"])
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
        special = _special(value, kind)
        if special is not None:
            return special
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
        if isinstance(value, type(sys)):
            info["k"] = "module"
        elif isinstance(value, type):
            info["k"] = "class"
            info["q"] = _qualname(value)
            if issubclass(value, BaseException):
                info["k"] = "exc"
                info["m"] = _chain(value)
        elif callable(value):
            info["k"] = "call"
        else:
            info["k"] = "obj"
        return __import__("json").dumps(info)


def _chain(cls):
    """The class's MRO (at most 64 classes), each with its direct bases: the test side rebuilds the graph."""
    return [[_qualname(c), [_qualname(b) for b in c.__bases__][:16]] for c in cls.__mro__[:64]]


def _qualname(cls):
    return (str(getattr(cls, "__module__", "?")) + "." + str(getattr(cls, "__qualname__", "?")))[:200]


def _special(value, kind):
    dt = sys.modules.get("datetime")
    quote = __import__("_json").encode_basestring_ascii
    if dt is not None:
        if kind is dt.datetime or kind is dt.time:
            tag = "dt" if kind is dt.datetime else "ti"
            zone = getattr(value.tzinfo, "key", None)
            return '{"%s":%s,"z":%s}' % (tag, quote(value.isoformat()), quote(zone) if isinstance(zone, str) else "null")
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
    return None


def _repo_decode(value, handles):
    kind = type(value)
    if kind is list:
        return [_repo_decode(v, handles) for v in value]
    if kind is tuple:
        return tuple(_repo_decode(v, handles) for v in value)
    if kind is set or kind is frozenset:
        return kind(_repo_decode(v, handles) for v in value)
    if kind is dict:  # every dict arrives wrapped as {None: (tag, payload...)}
        tag, *rest = value[None]
        if tag == "d":
            return {_repo_decode(k, handles): _repo_decode(v, handles) for k, v in rest[0]}
        if tag == "h":
            return handles[rest[0]]
        import datetime as dt

        if tag in ("dt", "ti"):
            parsed = (dt.datetime if tag == "dt" else dt.time).fromisoformat(rest[0])
            if rest[1]:
                import zoneinfo

                parsed = parsed.replace(tzinfo=zoneinfo.ZoneInfo(rest[1]))
            return parsed
        if tag == "da":
            return dt.date.fromisoformat(rest[0])
        if tag == "td":
            return dt.timedelta(days=rest[0], seconds=rest[1], microseconds=rest[2])
        if tag == "tz":
            return dt.timezone(dt.timedelta(days=rest[0], seconds=rest[1]), rest[2])
        if tag == "D":
            import decimal

            return decimal.Decimal(rest[0])
        raise ValueError("unknown value tag " + repr(tag))
    return value


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
    )
    ops["import"] = importlib.import_module
    ops["data"] = _as_data
    return ops


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


def _repo_exception(rid, exc, state, root):
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(root)]
    detail = "".join(traceback.format_list(frames[-12:])) + "".join(traceback.format_exception_only(type(exc), exc))
    quote = __import__("_json").encode_basestring_ascii
    try:
        args = _RepoEncoder(state).encode(list(exc.args))
    except BaseException:
        args = "[" + quote(_safe_str(exc)[:2000]) + "]"
    mro = __import__("json").dumps(_chain(type(exc)))
    return '{"id":%d,"exc":%s,"msg":%s,"tb":%s,"m":%s,"a":%s,"h":%s}' % (
        rid,
        quote(type(exc).__name__[:100]),
        quote(_safe_str(exc)[:2000]),
        quote(detail[-6000:]),
        mro,
        args,
        _RepoEncoder(state).handle(exc),
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


def _serve_repo(root):
    state = {"handles": {}, "ids": {}}
    ops = _repo_ops()
    while True:
        try:
            request = _recv()
        except EOFError:
            return
        rid = request["id"]
        if request["op"] == "exit":
            return
        try:
            fn = ops[request["name"]]
            args = _repo_decode(request.get("args", ()), state["handles"])
            kwargs = _repo_decode(request.get("kwargs", {None: ("d", [])}), state["handles"])
            reply = '{"id":%d,"ok":%s}' % (rid, _RepoEncoder(state).encode(fn(*args, **kwargs)))
        except BaseException as exc:  # the project's exceptions are data for the tests
            reply = _repo_exception(rid, exc, state, root)
        sys.stdout.flush()
        _send(reply)


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
    explorer for a verdict sandbox; pytest and the tracer for a debug sandbox."""
    if not config.get("debug"):
        _load_explorer()
        return
    import importlib.util

    sys.path.extend(p for p in config.get("site", ()) if p not in sys.path)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the server's own pytest plugins are not the project's
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("_adbg_tracer", os.path.join(here, "tracer.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["_adbg_tracer"] = module
    import _pytest.python  # noqa: F401
    import pytest  # noqa: F401  (and the plugins pytest.main loads: imported once, here)


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
    for path, line, condition in setup.get("breakpoints", ()):
        try:
            tracer.add_break(path, line, condition)
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
    _libc()[1].prctl(15, name, 0, 0, 0)  # PR_SET_NAME


def _run(setup):
    """Load the submission and answer calls until the server is done with this run."""
    _name_process(b"adbg-run")
    if setup.get("mode") == "repo":
        return _run_repo(setup)
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
    _serve(module, filename)
    sys.stdout.flush()


def main():
    """The fresh-interpreter path: isolate this process, then run."""
    setup = _recv()
    _prepare(setup["config"])
    _isolate(setup["config"])
    _run(setup)


def _probe_uid(uid):
    """In a throw-away fork: can ``uid`` still read the standard library it will import from?"""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            _drop_uid(uid)
            stdlib = os.path.dirname(os.__file__)
            os.listdir(stdlib)
            with open(os.path.join(stdlib, "bisect.py"), "rb"):
                code = 0
        finally:
            os._exit(code)
    return os.waitpid(pid, 0)[1] == 0


def probe(bpf_path=None, uid=None):
    """Report which layers this host lets a child apply (see env.sandbox.isolation)."""
    import json  # before Landlock shuts the standard library away
    import socket

    report = {"landlock_abi": 0, "netns": False, "tmpfs": False, "landlock": False, "seccomp": False, "uid": False, "errors": []}
    if uid is not None and os.geteuid() == 0:
        report["uid"] = _probe_uid(uid)
        if not report["uid"]:
            report["errors"].append(f"uid: uid {uid} cannot read the Python standard library here")
    ctypes, libc = _libc()
    bpf = None
    if bpf_path:  # read before the tmpfs mount hides it
        with open(bpf_path, "rb") as handle:
            bpf = handle.read()
    report["landlock_abi"] = max(0, libc.syscall(444, None, 0, 1))  # LANDLOCK_CREATE_RULESET_VERSION
    libc.prctl(38, 1, 0, 0, 0)
    try:
        _unshare_network(ctypes, libc, 1024 * 1024)
        report["netns"] = report["tmpfs"] = True
    except OSError as exc:
        report["errors"].append("netns: " + str(exc))
    if report["landlock_abi"]:
        try:
            _landlock(ctypes, libc, report["landlock_abi"], [], [os.getcwd()])
            report["landlock"] = True
        except OSError as exc:
            report["errors"].append("landlock: " + str(exc))
    if bpf:
        try:
            _seccomp(ctypes, libc, bpf)
            try:
                socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                report["errors"].append("seccomp: the filter loaded but did not deny an internet socket")
            except PermissionError:
                report["seccomp"] = True
        except OSError as exc:
            report["errors"].append("seccomp: " + str(exc))
    print(json.dumps(report))


# ---------------------------------------------------------------------------------------------
# the warm path: a pre-imported, single-threaded fork server ("zygote")

# Imported once in the zygote so that no run pays for them; none holds a secret.
ZYGOTE_PRELOAD = (
    "ctypes", "_json", "json", "types", "traceback", "linecache", "threading", "hashlib", "hmac", "shutil",
    "tempfile", "bisect", "math", "typing", "collections", "functools", "itertools", "heapq", "dataclasses", "re",
    "datetime", "decimal", "operator", "importlib", "enum",
)


def _pooled_child(config, own, scratch):
    """A pre-isolated child: every layer applied, then it waits for a run's fds and setup."""
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
    _isolate(config)
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
    _run(_recv())


def zygote(ctrl_fd):
    """Keep a few pre-isolated children ready and hand each run's fds to one of them.

    The first message on the SOCK_SEQPACKET control socket is the sandbox's configuration; each
    later one is a run, with its three fds attached (SCM_RIGHTS). The reply is the child's pid;
    when a run's child exits, its status follows. This process stays single-threaded, never runs
    submitted code, and removes each child's scratch directory once it has exited.
    """
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
    _prepare(config)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    pool = collections.deque()  # (pid, socket, scratch) of idle, pre-isolated children
    running = {}  # pid -> scratch of children serving a run
    uid = config["layers"].get("uid")

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
                _pooled_child(config, theirs, scratch)
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
                    return  # the server is gone
                request = marshal.loads(message)
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
        # Runs still in flight end by their server-side deadline at the latest.
        for pid, scratch in running.items():
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--probe"]:
        probe(sys.argv[2] or None, int(sys.argv[3]) if sys.argv[3] else None)
    elif sys.argv[1:2] == ["--zygote"]:
        zygote(int(sys.argv[2]))
    else:
        REQ_FD, RESP_FD = int(sys.argv[1]), int(sys.argv[2])
        main()
