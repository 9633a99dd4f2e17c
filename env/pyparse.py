"""``ast.parse`` for a threaded server.

CPython 3.11 keeps the AST validator's recursion depth in interpreter-wide state, so two threads
parsing at once can fail with ``SystemError: AST constructor recursion depth mismatch`` (seen under
load here). Every parse in the server goes through this lock; parses are small and fast.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str, mode: str = "exec") -> ast.AST:
    with _LOCK:
        return ast.parse(source, mode=mode)
