"""The call tracer ``trace_report`` runs in the sandboxed shell: one test under pytest, every call of the project's
own code recorded (standard library only; run as ``python - TEST MAX_CALLS`` with this source on stdin).

Each call: its function and place (path relative to the workspace, line), the thread, the caller (the nearest
project call below it on the stack), its arguments, and at its end the return value or the exception, and what
changed in its locals and in the attributes of ``self`` between entry and exit. Reprs are bounded and never raise.
Project code is every file under the working directory except tests (``tests/``, ``test_*.py``, ``*_test.py``,
``conftest.py``). The record (the calls kept, and how many were made) is written as one JSON document to fd 3, a
pipe the server reads apart from the output (``ShellRunner.run(record=True)``): nothing the run prints is ever
parsed. The test's outcome and failure are not recorded here: the server takes them from the trusted run.

It runs in the same process as the project and reads nothing secret: its record is the traced process's data,
information for the agent that the server checks for shape and never part of a reward.
"""

import json
import os
import re
import reprlib
import sys
import threading

RECORD_FD = 3
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
NAMES = 64  # arguments and changes kept per call (the server refuses more)


class _Repr(reprlib.Repr):
    def repr_instance(self, x, level):
        # addresses out before cutting: two runs must print the same report
        text = _ADDRESS.sub("", repr(x))
        return text if len(text) <= self.maxother else text[: self.maxother - 3] + "..."


_REPR = _Repr()
_REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict, _REPR.maxlevel = 60, 60, 6, 6, 3
ROOT = os.getcwd()


def _shown(value):
    try:
        text = _REPR.repr(value)
    except BaseException as exc:  # a __repr__ that raises: say so, never fail the run
        text = f"<repr failed: {type(exc).__name__}>"
    return _ADDRESS.sub("", text)[:120]


def _project(path):
    if not path.startswith(ROOT + os.sep):
        return None
    rel = path[len(ROOT) + 1:]
    name = rel.rsplit("/", 1)[-1]
    if rel.startswith("tests/") or "/tests/" in rel or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return None
    if "site-packages" in rel or rel.startswith("."):
        return None
    return rel


class Recorder:
    def __init__(self, limit):
        self.limit, self.calls, self.dropped, self.live = limit, [], 0, {}  # limit: calls kept while recording
        self.lock = threading.Lock()

    def _caller(self, frame):
        back = frame.f_back
        while back is not None:
            if id(back) in self.live and self.live[id(back)][0] is back:
                return self.live[id(back)][1]["id"]
            back = back.f_back
        return None

    def _state(self, frame):
        local = {k: _shown(v) for k, v in list(frame.f_locals.items())[: NAMES + 1] if k != "self"}
        owner = frame.f_locals.get("self")
        attrs = {}
        try:
            attrs = {k: _shown(v) for k, v in list(vars(owner).items())[:NAMES]} if owner is not None and hasattr(owner, "__dict__") else {}
        except BaseException:
            attrs = {}
        return local, attrs

    def trace(self, frame, event, arg):
        if event != "call":
            return None
        code = frame.f_code
        if not code.co_flags & 1 or (code.co_name.startswith("<") and code.co_name != "<lambda>"):
            return None  # module and class bodies (not CO_OPTIMIZED), comprehensions
        rel = _project(code.co_filename)
        if rel is None:
            return None
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)]
        with self.lock:
            call = {
                "id": len(self.calls) + self.dropped + 1,
                "function": getattr(code, "co_qualname", code.co_name)[:300],
                "path": rel[:300],
                "line": frame.f_lineno,
                "thread": threading.current_thread().name[:100],
                "caller": self._caller(frame),
                "args": {n: _shown(frame.f_locals[n]) for n in names[:NAMES] if n in frame.f_locals},
            }
            if len(self.calls) >= self.limit:
                self.dropped += 1
                return None
            self.calls.append(call)
        before = self._state(frame)
        self.live[id(frame)] = (frame, call)
        raised = []

        def local(frame, event, arg):
            if event == "exception":
                raised[:] = [f"{arg[0].__name__}: {_shown(arg[1])}"[:300]]
            elif event == "line":
                raised.clear()  # handled inside: the function goes on
            elif event == "return":
                after = self._state(frame)
                if raised and arg is None:
                    call["raised"] = raised[0]
                else:
                    call["returned"] = _shown(arg)
                changed = {k: [before[0].get(k), v] for k, v in after[0].items() if before[0].get(k) != v and k not in call["args"]}
                changed_args = {k: [before[0].get(k), v] for k, v in after[0].items() if k in call["args"] and before[0].get(k) != v}
                attrs = {k: [before[1].get(k), v] for k, v in after[1].items() if before[1].get(k) != v}
                if changed or changed_args:
                    call["locals_changed"] = dict(list({**changed_args, **changed}.items())[:NAMES])
                if attrs:
                    call["self_changed"] = dict(list(attrs.items())[:NAMES])
                self.live.pop(id(frame), None)
            return local

        return local


RECORDED = 20000  # calls kept while the test runs; the report then keeps at most the budget of them
CHARS = 11000  # the report's JSON, at most (the shell shows 16 KiB of output): earliest calls off the path go first


def chosen(calls, budget):
    """The calls on the failing path (every call that raised, and the calls it was made from), then the latest
    others, up to ``budget``; in call order."""
    by_id = {call["id"]: call for call in calls}
    keep = []
    for call in calls:
        if "raised" in call:
            step = call
            while step is not None and step["id"] not in keep:
                keep.append(step["id"])
                step = by_id.get(step["caller"])
    keep = keep[:budget]
    path = set(keep)
    for call in reversed(calls):
        if len(keep) >= budget:
            break
        if call["id"] not in keep:
            keep.append(call["id"])
    kept = [by_id[i] for i in sorted(keep)]
    while kept and len(json.dumps(kept)) > CHARS:
        off_path = [c for c in kept if c["id"] not in path]
        kept.remove(off_path[0] if off_path else kept[0])
    return kept


def main():
    test, budget = sys.argv[1], int(sys.argv[2])
    os.set_inheritable(RECORD_FD, False)  # programs the project's code starts never get the record pipe
    sys.path.insert(0, ROOT)
    import pytest

    recorder = Recorder(RECORDED)
    threading.settrace(recorder.trace)
    sys.settrace(recorder.trace)
    try:
        pytest.main([test, "-q", "-p", "no:cacheprovider", "--no-header", "--tb=no", "-W", "ignore"])
    finally:
        sys.settrace(None)
        threading.settrace(None)
    kept = chosen(recorder.calls, budget)
    made = len(recorder.calls) + recorder.dropped
    data = json.dumps({"calls": kept, "calls_made": made, "cut": made - len(kept)}).encode()
    while data:
        data = data[os.write(RECORD_FD, data) :]
    os.close(RECORD_FD)


if __name__ == "__main__":
    main()
