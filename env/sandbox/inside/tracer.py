"""The debugger inside a sandbox child: a line tracer that stops only in the project's own files.

    tracer = Tracer(root="/run/dir/", reply=send_reply, request=next_request, stop_at_entry=True)
    tracer.add_break("shop/cart.py", 12, "qty > 3")
    tracer.run_test("tests/test_cart.py::test_total")     # stops, answers commands, returns at the end
    tracer.ended                                           # {"ended": True, "reason": "...", ...}

Loaded by ``child.py`` (debug mode) before isolation; standard library only. While the program is
stopped, the tracer answers commands read from the trusted side (inspect, eval, list, break,
clear) and resumes on continue / step / next / return / until. Every answer is plain JSON-able
data: frames as {file, line, function}, variables as {type, repr} with capped reprs. The trusted
side never trusts any of it for a verdict; it only shows it to the agent.
"""

import linecache
import os
import re
import reprlib
import sys

MAX_REPR = 200
MAX_VARIABLES = 100
LIST_RADIUS = 5
MAX_LIST_LINES = 60
RESUME = ("continue", "step", "next", "return", "until")


class _Repr(reprlib.Repr):
    def __init__(self):
        super().__init__()
        self.maxstring = self.maxother = self.maxlong = MAX_REPR
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = self.maxfrozenset = self.maxdeque = 20
        self.maxlevel = 4


_REPR = _Repr()


def safe_repr(value):
    try:
        text = _REPR.repr(value)
    except BaseException as exc:  # a project's __repr__ may raise anything
        return "<repr() raised %s>" % type(exc).__name__
    return text if len(text) <= MAX_REPR else text[:MAX_REPR] + "..."


def describe(value):
    return {"type": type(value).__name__[:100], "repr": safe_repr(value)}


def _log_parts(message):
    """A logpoint's message as ("text", ...) and ("expr", ...) parts: {expression} is evaluated, {{ and }} are braces.
    A SyntaxError in an expression is the caller's answer (the trusted side checked it first)."""
    parts = []
    for piece in re.split(r"(\{\{|\}\}|\{[^{}]*\})", message):
        if piece in ("{{", "}}"):
            parts.append(("text", piece[0]))
        elif piece.startswith("{") and piece.endswith("}") and len(piece) > 1:
            compile(piece[1:-1], "<logpoint>", "eval")
            parts.append(("expr", piece[1:-1]))
        elif piece:
            parts.append(("text", piece))
    return parts


def _hidden(name):
    # dunders and pytest's assertion-rewriting temporaries say nothing about the program
    return (name.startswith("__") and name.endswith("__")) or name.startswith("@py")


class Tracer:
    def __init__(self, root, reply, request, stop_at_entry=True):
        self.root = root if root.endswith(os.sep) else root + os.sep
        self.reply = reply  # reply(request_id, data)
        self.request = request  # () -> the next command (a dict with "id" and "cmd")
        self.stop_at_entry = stop_at_entry
        self.breaks = {}  # absolute path -> {line: condition or None}
        self.mode = "continue"
        self.target = None  # the frame that next / return / until are about
        self.until_line = 0
        self.entry = None  # the code object to stop in first (the test function, the script)
        self.pending = 0  # the request id the next stop answers (0: the session's start)
        self.frame = None
        self.stack = []  # project frames at the stop, innermost first
        self.scopes = {}  # id(frame) -> its f_locals dict for this stop (edits persist through it)
        self.ended = None
        self.outcome = {}

    # -- breakpoints ---------------------------------------------------------------------------

    def add_break(self, path, line, condition=None, log=None):
        """``path`` is relative to the project root, as the agent gave it. With ``log`` it is a logpoint: a hit
        writes the message to the program's output, its {expression} parts evaluated in the frame, and goes on."""
        if condition:
            compile(condition, "<condition>", "eval")  # a SyntaxError is the caller's answer
        parts = _log_parts(log) if log else None
        self.breaks.setdefault(self.root + path, {})[line] = (condition or None, parts)

    def clear_break(self, path, line):
        lines = self.breaks.get(self.root + path, {})
        lines.pop(line, None)
        if not lines:
            self.breaks.pop(self.root + path, None)

    # -- tracing ----------------------------------------------------------------------------

    def _project(self, frame):
        return frame.f_code.co_filename.startswith(self.root)

    def global_trace(self, frame, event, arg):
        if not self._project(frame):
            return None
        code = frame.f_code
        if self.mode == "step" or code is self.entry or code.co_filename in self.breaks:
            return self.local_trace
        return None

    def local_trace(self, frame, event, arg):
        if event == "line":
            why = self._stop_reason(frame)
            if why:
                self._stop(frame, why[0], note=why[1])
        elif event == "return" and (self.mode == "step" or (frame is self.target and self.mode in ("next", "return", "until"))):
            # As in pdb: stepping off the end of a function stops at its return, showing the value.
            self._stop(frame, "return", retval=arg)
            if frame is self.target and self.mode in ("next", "return", "until"):
                self._retarget(frame.f_back)
        return self.local_trace

    def _retarget(self, caller):
        # The frame we were stepping in returned: keep stepping in its caller, if it is ours.
        if caller is not None and self._project(caller):
            caller.f_trace = self.local_trace
            self.target = caller
            if self.mode == "until":
                self.until_line = 0
        else:
            self.mode, self.target = "continue", None

    def _stop_reason(self, frame):
        code = frame.f_code
        if code is self.entry:
            self.entry = None
            return ("entry", "")
        lines = self.breaks.get(code.co_filename)
        if lines and frame.f_lineno in lines:
            condition, log = lines[frame.f_lineno]
            try:
                hit = condition is None or eval(condition, frame.f_globals, frame.f_locals)
            except BaseException as exc:
                return ("breakpoint", "the breakpoint's condition raised %s: %s" % (type(exc).__name__, _text(exc)[:500]))
            if hit and log is None:
                return ("breakpoint", "")
            if hit:
                self._log(frame, log)
        if self.mode == "step":
            return ("step", "")
        if self.mode == "next" and frame is self.target:
            return ("step", "")
        if self.mode == "until" and frame is self.target and frame.f_lineno > self.until_line:
            return ("step", "")
        return None

    def _log(self, frame, parts):
        # a logpoint's line in the program's output: what DAP's logMessage prints to the debug console
        out = []
        for kind, text in parts:
            if kind == "text":
                out.append(text)
                continue
            try:
                out.append(safe_repr(eval(text, frame.f_globals, frame.f_locals)))
            except BaseException as exc:
                out.append("<%s: %s>" % (type(exc).__name__, _text(exc)[:100]))
        place = "%s:%d" % (frame.f_code.co_filename[len(self.root):], frame.f_lineno)
        sys.stdout.write("[logpoint %s] %s\n" % (place, "".join(out)))

    # -- a stop: answer commands until one resumes the program ---------------------------------

    def _stop(self, frame, event, note="", retval=None):
        self.frame = frame
        self.stack = []
        self.scopes = {}
        walk = frame
        while walk is not None:
            if self._project(walk):
                self.stack.append(walk)
                walk.f_trace = self.local_trace  # so breakpoints and stepping reach every frame here
            walk = walk.f_back
        state = self.state(event, note)
        if event == "return":
            state["return_value"] = describe(retval)
        self.reply(self.pending, state)
        while True:
            command = self.request()
            rid, name = command["id"], command.get("cmd")
            if name in RESUME:
                self._resume(name, command)
                self.pending = rid
                return
            try:
                answer = self._answer(name, command)
            except BaseException as exc:
                answer = {"error": "%s: %s" % (type(exc).__name__, _text(exc)[:1000])}
            self.reply(rid, answer)

    def _resume(self, name, command):
        self.mode = name
        self.target = self.frame if name in ("next", "return", "until") else None
        if name == "until":
            line = command.get("line")
            self.until_line = (line - 1) if line else self.frame.f_lineno

    def _answer(self, name, command):
        if name == "where":
            return {"stack": self.where()}
        if name == "inspect":
            frame = self._frame(command.get("frame", 0))
            scope = command.get("scope", "locals")
            names = self._scope(frame) if scope == "locals" else frame.f_globals
            return {"frame": self._place(frame), "scope": scope, "variables": self.variables(names)}
        if name == "eval":
            frame = self._frame(command.get("frame", 0))
            return self.evaluate(frame, command["expression"])
        if name == "list":
            return self.listing(command.get("start"), command.get("end"))
        if name == "break":
            self.add_break(command["path"], command["line"], command.get("condition"), command.get("log"))
            return {"ok": True}
        if name == "clear":
            self.clear_break(command["path"], command["line"])
            return {"ok": True}
        return {"error": "unknown command %r" % (name,)}

    def _frame(self, index):
        if not isinstance(index, int) or not 0 <= index < len(self.stack):
            raise IndexError("frame %r does not exist; the stack has frames 0 (current) to %d" % (index, len(self.stack) - 1))
        return self.stack[index]

    def _scope(self, frame):
        key = id(frame)
        if key not in self.scopes:
            self.scopes[key] = frame.f_locals
        return self.scopes[key]

    # -- views -------------------------------------------------------------------------------

    def _place(self, frame):
        return {"file": frame.f_code.co_filename[len(self.root):], "line": frame.f_lineno, "function": frame.f_code.co_name}

    def where(self):
        return [self._place(f) for f in reversed(self.stack)]  # outermost first, current last

    def variables(self, names):
        shown = {}
        hidden = 0
        for name in list(names):
            if type(name) is not str or _hidden(name):
                continue
            if len(shown) >= MAX_VARIABLES:
                hidden += 1
                continue
            shown[name] = describe(names[name])
        return {"values": shown, "more": hidden}

    def state(self, event, note=""):
        frame = self.frame
        return {
            "stopped": True,
            "event": event,
            "note": note,
            "frame": self._place(frame),
            "stack": self.where(),
            "locals": self.variables(self._scope(frame)),
            "source": self._lines(frame.f_code.co_filename, frame.f_lineno - 2, frame.f_lineno + 2),
        }

    def _lines(self, filename, start, end):
        total = len(linecache.getlines(filename))
        out = []
        for number in range(max(1, start), min(total, end) + 1):
            out.append([number, linecache.getline(filename, number).rstrip("\n")[:400]])
        return out

    def listing(self, start=None, end=None):
        filename = self.frame.f_code.co_filename
        if start is None:
            start, end = self.frame.f_lineno - LIST_RADIUS, self.frame.f_lineno + LIST_RADIUS
        elif end is None:
            end = start + 2 * LIST_RADIUS
        end = min(end, start + MAX_LIST_LINES - 1)
        return {
            "file": filename[len(self.root):],
            "current": self.frame.f_lineno,
            "breakpoints": sorted(self.breaks.get(filename, {})),
            "lines": self._lines(filename, start, end),
        }

    def evaluate(self, frame, expression):
        scope = self._scope(frame)
        try:
            code = compile(expression, "<eval>", "eval")
        except SyntaxError:
            code = compile(expression, "<eval>", "exec")  # a statement (x = 1); its SyntaxError is the answer
            exec(code, frame.f_globals, scope)
            return {"value": None, "executed": True}
        return {"value": describe(eval(code, frame.f_globals, scope))}

    # -- running a target --------------------------------------------------------------------

    def _finish(self, reason, **facts):
        sys.settrace(None)
        self.ended = {"ended": True, "reason": reason, **facts}

    def run_script(self, path):
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        code = compile(source, path, "exec")
        if self.stop_at_entry:
            self.entry = code
        namespace = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
        sys.argv = [path]
        sys.settrace(self.global_trace)
        try:
            exec(code, namespace)
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            return self._finish("the script exited with status %d" % status, status=status)
        except BaseException as exc:
            where = _innermost(exc, self.root)
            return self._finish(
                "the script raised %s: %s%s" % (type(exc).__name__, _text(exc)[:500], where), status=1, exception=type(exc).__name__
            )
        finally:
            sys.settrace(None)
        return self._finish("the script finished (exit status 0)", status=0)

    def run_test(self, node_id, extra_args=()):
        import inspect

        import pytest

        tracer = self

        class Plugin:
            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_protocol(self, item, nextitem):
                function = getattr(item, "function", None)
                if tracer.stop_at_entry and function is not None:
                    tracer.entry = getattr(inspect.unwrap(function), "__code__", None)
                sys.settrace(tracer.global_trace)
                try:
                    yield
                finally:
                    sys.settrace(None)

            def pytest_runtest_logreport(self, report):
                if report.failed or report.when == "call":
                    if report.failed and report.when != "call":
                        tracer.outcome.setdefault("outcome", "error")
                    elif report.when == "call":
                        tracer.outcome["outcome"] = "passed" if report.passed else ("skipped" if report.skipped else "failed")
                    crash = getattr(report.longrepr, "reprcrash", None)
                    if crash is not None and "message" not in tracer.outcome:
                        # the first line: pytest's "where ..." explanation holds object addresses
                        message = str(crash.message).split("\n", 1)[0]
                        tracer.outcome["message"] = message.removeprefix("AssertionError: ")[:500]
                        tracer.outcome["location"] = "%s:%s" % (str(crash.path).replace(tracer.root, ""), crash.lineno)

        args = [node_id, "-q", "-s", "--no-header", "-p", "no:cacheprovider", "-p", "no:faulthandler", "-p", "no:pastebin", *extra_args]
        status = pytest.main(args, plugins=[Plugin()])
        outcome = self.outcome.get("outcome")
        if outcome is None:
            return self._finish("no test ran for %s (pytest exit status %d)" % (node_id, int(status)), status=int(status), outcome="not run")
        detail = ""
        if "message" in self.outcome:
            detail = ": %s (at %s)" % (self.outcome["message"], self.outcome["location"])
        return self._finish("the test %s %s%s" % (node_id, outcome.upper() if outcome != "error" else "ERRORED", detail), status=int(status), outcome=outcome)


def _text(exc):
    try:
        return str(exc)
    except BaseException:
        return "<unprintable>"


def _innermost(exc, root):
    tb = exc.__traceback__
    where = ""
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.startswith(root):
            where = " (at %s:%d)" % (filename[len(root):], tb.tb_lineno)
        tb = tb.tb_next
    return where
