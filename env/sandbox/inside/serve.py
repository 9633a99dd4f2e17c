"""Repository mode's server: the project's files are written to this run's directory, the trusted test process
imports them through proxies, and every operation on a project object happens here, one request at a time (or
nested: the test's code called back by the project may call the project again)."""

import os
import sys

from . import protocol
from .encoder import exception_reply, safe_str
from .framing import recv, send
from .ops import (
    Encoded,
    callattr,
    callpull,
    iterpull,
    len_or_kept,
    next_or_kept,
    pickle_here,
    pull,
    repo_exception,
    repo_ops,
    subclass,
    unpickle_here,
)
from .printed import Output, pending_output
from .values import RepoEncoder, advances, class_chain, repo_decode


def load_repo(setup):
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
        args = repo_decode(request.get("args", ()), state)
        kwargs = repo_decode(request.get("kwargs", {None: ("d", [])}), state)
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
        reply = '{"id":%d,"ok":%s' % (rid, result if type(result) is Encoded else RepoEncoder(state).encode(result))
    except BaseException as exc:  # the project's exceptions are data for the tests
        reply = repo_exception(rid, exc, state, state["root"])[:-1]
    # "mt": the project has threads of its own running, so the trusted side keeps no copy as current (conversation.py's fresh)
    threads = ',"mt":1' if _thread_count() else ""
    extra = (_warnings(caught) if caught else "") + (pending_output(state) if state["out"] else "") + (advances(state) if state["read"] else "")
    state["router"].send(reply + extra + threads + "}")


def _warnings(caught):
    if not caught:
        return ""
    quote = __import__("_json").encode_basestring_ascii
    items = []
    for w in caught[:MAX_WARNINGS]:
        category = w.category if isinstance(w.category, type) and issubclass(w.category, Warning) else UserWarning
        items.append("[%s,%s,%s,%d]" % (__import__("json").dumps(class_chain(category)), quote(safe_str(w.message)[:2000]),
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
        self.waiting = 0  # threads waiting for the reader to hand them a message
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
            send(text)

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
                    self.waiting += 1
                    try:
                        self.cond.wait()
                    finally:
                        self.waiting -= 1
                    continue
                self.reading = True
                self.cond.release()
                try:
                    message = recv()
                except EOFError:
                    message = None
                finally:
                    self.cond.acquire()
                    self.reading = False
                    if self.waiting:  # (notify_all is Python code that costs a tenth of a small request)
                        self.cond.notify_all()
                if message is None:
                    self.closed = True
                elif "cid" in message:
                    self.replies[message["cid"]] = message
                else:
                    self.requests.append(message)


def _serve_repo(root):
    state = {"handles": {}, "ids": {}, "texts": {}, "ops": repo_ops(), "root": root, "router": _Router(), "made": [], "standins": {}}
    state["warnings"] = _WarningLog()
    state["serve_one"] = _serve_one  # for values.py's _ask: the test's code called the project back
    state["ops"]["subclass"] = lambda name, bases, attrs: subclass(name, bases, attrs, state["made"])
    # A test's pickle.dumps of a project object: pickled and loaded here, never in the trusted process.
    state["ops"]["pickle"] = lambda obj, protocol: pickle_here(obj, protocol, state)
    state["ops"]["unpickle"] = lambda data: unpickle_here(data, state)
    # Wire of the speed-ups (env/verdict/host/conversation.py is the other half): "pull" [iterator, mode] answers
    # {"T": [{"T": [items]}, ended]}; "callattr" [obj, name, args...] is getattr then call; "callpull" [mode, obj,
    # name or None, args...] a call whose result a consumer takes whole, then a pull of it if it is a generator:
    # {"T": [result, pull or null]}; "iterpull" [obj, mode, sized] iter(obj), its len() if sized, then a pull:
    # {"T": [iterator, size, pull]}; a handle's "g": 1 marks a generator; "next" ("len") raises first what a pull
    # ("iterpull") met.
    state["pending"] = {}  # id of an iterator -> (the iterator, kept alive; the exception a pull of it met)
    state["ops"]["next"] = lambda obj: next_or_kept(obj, state)
    state["ops"]["pull"] = lambda obj, mode: pull(obj, mode, state)
    state["ops"]["callattr"] = callattr
    state["ops"]["callpull"] = lambda mode, obj, name, /, *args, **kwargs: callpull(state, mode, obj, name, *args, **kwargs)
    state["lens"] = {}  # id of an object -> (the object, kept alive; the exception an "iterpull" met asking its len())
    state["ops"]["iterpull"] = lambda obj, mode, sized: iterpull(obj, mode, sized, state)
    state["ops"]["len"] = lambda obj: len_or_kept(obj, state)
    state["out"], state["printed"], state["read"] = [], 0, []
    # The builtins both sides share, as the trusted process names them (it checks each one it is sent)
    state["shared"] = frozenset()
    state["ops"]["share_builtins"] = lambda names: state.__setitem__("shared", frozenset(n for n in names if type(n) is str))
    protocol.agree("OPS", state["ops"], "the sandbox's operations (ops.py, serve.py)")
    sys.stdout, sys.stderr = Output(state, "o", sys.stdout), Output(state, "e", sys.stderr)
    while True:
        try:
            request = state["router"].next()
        except EOFError:
            return
        if request.get("op") == "exit":
            return
        _serve_one(request, state)


def run_repo(setup):
    try:
        root = load_repo(setup)
    except BaseException as exc:
        sys.stdout.flush()
        send(exception_reply(0, exc, ""))
        return
    sys.stdout.flush()
    send('{"id":0,"ok":"ready"}')
    _serve_repo(root)
    sys.stdout.flush()
