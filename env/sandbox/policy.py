"""The static policy: a friendly early error for blatant misuse, never a security boundary.

    check_source("import os\\n", allowed_imports=frozenset())
    # -> PolicyViolation("line 1: import of 'os' is not allowed in this task ...")

The kernel layers and the separate-process verdict are what contain hostile code; this lint only
saves an agent a wasted run and tells it which line to change. It must accept ordinary correct
code: single-underscore attributes (``self._lock``, ``namedtuple._replace``), dunder *methods*
defined or called the usual way (``def __eq__``, ``super().__init__()``) and any string literal.
``SANDBOX_STATIC_CHECK=off`` switches it off so tests can prove the other layers hold alone.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from env import settings
from env.pyparse import parse

MAX_SOURCE_BYTES = 64 * 1024

# Names whose only uses in a debugging fix are escapes or dynamic code.
BLOCKED_NAMES = frozenset(
    {
        "eval", "exec", "compile", "__import__", "open", "input", "breakpoint", "globals", "locals",
        "vars", "memoryview", "__builtins__", "__loader__", "__spec__",
    }
)
# Dunder attributes that ordinary code reaches for; every other dunder attribute is a walk
# towards interpreter internals (``__class__``, ``__subclasses__``, ``__globals__`` ...).
ALLOWED_DUNDER_ATTRS = frozenset(
    {
        "__init__", "__name__", "__qualname__", "__doc__", "__enter__", "__exit__", "__len__",
        "__iter__", "__next__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
        "__hash__", "__repr__", "__str__", "__contains__", "__getitem__", "__setitem__",
        "__delitem__", "__call__", "__add__", "__sub__", "__mul__", "__bool__", "__post_init__",
    }
)
# Frame, code and generator internals: the classic ways back to the harness.
BLOCKED_ATTRS = frozenset(
    {
        "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "f_back", "f_globals",
        "f_locals", "f_builtins", "f_code", "tb_frame", "tb_next", "co_code", "func_globals",
        # the tracer and profiler hooks, and the frames behind them: a fix never needs them, and code that
        # asks whether it is traced is asking whether the race detector is watching
        "settrace", "gettrace", "setprofile", "getprofile", "settrace_all_threads", "setprofile_all_threads",
        "_getframe", "_current_frames",
    }
)
# Calls that take an attribute name as a string: a dunder literal there is the same walk.
NAME_TAKING_CALLS = frozenset({"getattr", "setattr", "delattr", "hasattr", "attrgetter", "methodcaller"})
ALWAYS_BLOCKED_MODULES = frozenset(
    {"os", "sys", "subprocess", "socket", "ctypes", "gc", "inspect", "importlib", "builtins", "pickle", "marshal"}
)


class PolicyViolation(ValueError):
    """The submission breaks the static policy; the message names the line."""


@dataclass(frozen=True)
class Policy:
    allowed_imports: frozenset[str]
    enabled: bool = True

    @classmethod
    def for_task(cls, allowed_imports: frozenset[str]) -> Policy:
        return cls(allowed_imports, enabled=settings.switch("SANDBOX_STATIC_CHECK"))


def parse_source(source: str) -> ast.Module:
    """Parse with the size checks that keep ``ast.parse`` itself from being an attack surface."""
    if "\x00" in source:
        raise PolicyViolation("the code contains a NUL byte")
    try:
        size = len(source.encode("utf-8"))
    except UnicodeEncodeError:
        raise PolicyViolation("the code is not valid UTF-8 text (it contains a lone surrogate)") from None
    if size > MAX_SOURCE_BYTES:
        raise PolicyViolation(f"the code is {size} bytes; the limit is {MAX_SOURCE_BYTES} bytes")
    try:
        return parse(source)
    except SyntaxError as exc:
        raise PolicyViolation(f"line {exc.lineno}: SyntaxError: {exc.msg}") from None
    except (MemoryError, RecursionError, ValueError):
        raise PolicyViolation("the code is too deeply nested to parse") from None


def check_source(source: str, allowed_imports: frozenset[str], enabled: bool = True) -> ast.Module:
    """Parse and lint; returns the tree or raises :class:`PolicyViolation` naming the first bad line."""
    tree = parse_source(source)
    if not enabled:
        return tree
    allowed = allowed_imports - ALWAYS_BLOCKED_MODULES
    hint = ", ".join(sorted(allowed)) or "none"
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or "."]
            for name in names:
                if name.split(".")[0] not in allowed or (isinstance(node, ast.ImportFrom) and node.level):
                    raise PolicyViolation(f"line {line}: import of '{name}' is not allowed in this task (allowed: {hint})")
        elif isinstance(node, ast.Name) and node.id in BLOCKED_NAMES:
            raise PolicyViolation(f"line {line}: use of '{node.id}' is not allowed")
        elif isinstance(node, ast.Attribute) and _blocked_attr(node.attr):
            raise PolicyViolation(f"line {line}: access to attribute '{node.attr}' is not allowed")
        elif isinstance(node, ast.Call) and _called_name(node.func) in NAME_TAKING_CALLS:
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _blocked_attr(arg.value):
                    raise PolicyViolation(f"line {line}: access to attribute '{arg.value}' is not allowed")
    return tree


@functools.lru_cache(maxsize=64)  # at most 64 sources of at most MAX_SOURCE_BYTES each are kept
def _violation(source: str, allowed_imports: frozenset[str], enabled: bool) -> str | None:
    try:
        check_source(source, allowed_imports, enabled)
    except PolicyViolation as exc:
        return str(exc)
    return None


def check_verdict(source: str, allowed_imports: frozenset[str], enabled: bool = True) -> None:
    """``check_source`` without the tree: raises the same :class:`PolicyViolation`, or returns. One submission starts
    several runs (its visible tests, its held-out cases, the race checks' processes), each checked before it starts:
    the same text is checked once and looked up after."""
    message = _violation(source, allowed_imports, enabled)
    if message is not None:
        raise PolicyViolation(message)


def _blocked_attr(attr: str) -> bool:
    dunder = attr.startswith("__") and attr.endswith("__")
    return attr in BLOCKED_ATTRS or (dunder and attr not in ALLOWED_DUNDER_ATTRS)


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""
