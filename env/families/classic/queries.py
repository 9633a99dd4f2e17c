"""Answers to ``query_context``, computed from the code and the tests (never from the gold fix).

    answer_query("function_signature", "binary_search", code, task, last_verdict)
    # -> "def binary_search(arr, target):\n    Return the index of target ..."
"""

from __future__ import annotations

import ast

from env.families.classic.fields import QUERY_TYPES
from env.families.classic.judge import Verdict
from env.families.classic.task import TaskSpec
from env.pyparse import parse


class QueryError(ValueError):
    pass


def _definitions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef]:
    found: dict[str, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        found[f"{node.name}.{item.name}"] = item
    return found


def _signature(node: ast.AST) -> str:
    if isinstance(node, ast.ClassDef):
        head = f"class {node.name}:"
    else:
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        head = f"def {node.name}({ast.unparse(node.args)}):"
    doc = ast.get_docstring(node)  # type: ignore[arg-type]
    return head + (f'\n    """{doc}"""' if doc else "")


def _pick(names: dict, target: str | None, kind: str) -> list[str]:
    if not target:
        return list(names)
    matches = [n for n in names if n == target or n.endswith("." + target)]
    if not matches:
        raise QueryError(f"no {kind} named {target!r}; available: {', '.join(names) or 'none'}")
    return matches


def _calls(node: ast.AST) -> set[str]:
    called = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            called.add(func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "")
    return called - {""}


def _related(source: str, defs: dict, target: str | None) -> str:
    chunks = []
    for name in _pick(defs, target, "function or class"):
        node = defs[name]
        short = name.split(".")[-1]
        callees = sorted(n for n in defs if n.split(".")[-1] in _calls(node) and n != name)
        callers = sorted(n for n, other in defs.items() if n != name and short in _calls(other))
        text = ast.get_source_segment(source, node) or ""
        chunks.append(
            f"# {name}\n{text}\n# calls: {', '.join(callees) or 'nothing in this module'}"
            f"\n# called by: {', '.join(callers) or 'nothing in this module'}"
        )
    return "\n\n".join(chunks)


def _test_nodes(task: TaskSpec) -> dict[str, ast.FunctionDef]:
    tree = parse(task.test_source)
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


def _test_details(task: TaskSpec, verdict: Verdict | None, target: str | None) -> str:
    nodes = _test_nodes(task)
    outcomes = {t.id: t for t in verdict.tests} if verdict else {}
    chunks = []
    for name in _pick(nodes, target, "test"):
        outcome = outcomes.get(name)
        status = f"last run: {outcome.outcome.upper()}" if outcome else "not run yet"
        detail = f"\n{outcome.message}" if outcome and outcome.message else ""
        chunks.append(f"{ast.get_source_segment(task.test_source, nodes[name])}\n# {status}{detail}")
    return "\n\n".join(chunks)


def _error_explanation(task: TaskSpec, verdict: Verdict | None, target: str | None) -> str:
    if verdict is None:
        return "Nothing has run yet."
    failing = [t for t in verdict.tests if t.outcome != "passed" and (not target or t.id == target)]
    if target and not failing:
        known = [t.id for t in verdict.tests]
        if target not in known:
            raise QueryError(f"no test named {target!r}; available: {', '.join(known)}")
        return f"{target} passed on the current code."
    lines = []
    for test in failing:
        kind = "an assertion did not hold" if test.outcome == "failed" else "the code raised or the run stopped"
        lines.append(f"{test.id}: {kind}.\n{test.message}")
    if verdict.stress is not None and not verdict.stress.passed and not target:
        lines.append(
            "concurrency check (controlled interleavings, a review of the lock discipline and real threads; all three "
            f"must pass): it failed.\n{verdict.stress.message}"
        )
    if verdict.rejected:
        lines.insert(0, f"The code was not run: {verdict.rejected}")
    return "\n\n".join(lines) or "Every test passes on the current code."


def answer_query(query_type: str, target: str | None, code: str, task: TaskSpec, verdict: Verdict | None) -> str:
    if query_type not in QUERY_TYPES:
        raise QueryError(f"unknown query_type {query_type!r}; expected one of: {', '.join(QUERY_TYPES)}")
    if query_type in ("function_signature", "related_code"):
        try:
            tree = parse(code)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            code = task.buggy_source  # the current code does not parse: answer about the original
            tree = parse(code)
        defs = _definitions(tree)
        if query_type == "function_signature":
            return "\n\n".join(_signature(defs[n]) for n in _pick(defs, target, "function or class"))
        return _related(code, defs, target)
    if query_type == "test_details":
        return _test_details(task, verdict, target)
    return _error_explanation(task, verdict, target)
