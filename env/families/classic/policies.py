"""A classic task's scripted plays: the gold fix, its overfit, the smoke trajectory and the degenerate policies.

    classic_policies(task, "wrong")     # {name: actions}: each grades exactly 0.0, its step rewards sum to <= 0
    lookup_table(task)                  # the overfit: a table of the visible tests' answers in front of the bug

The degenerate policies: giving up, resubmitting the bug, the bug with a no-op edit (a comment, an extra function,
a renamed local, reordered imports), a stuffed hypothesis, query spam, and alternating a broken submission with
the bug. The lookup table's progress reward is a small share (the held-out cases count too), its grade exactly 0.0.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from env.families.base import Action
from env.families.classic.task import TaskSpec
from env.families.policies import STUFFED, WRONG, HypothesisKind
from env.pyparse import parse


def oracle_actions(task: TaskSpec) -> list[Action]:
    """One ``submit_fix`` with the gold module and the gold hypothesis."""
    return [_submit(task.gold_source, task.gold_hypothesis)]


def overfit_actions(task: TaskSpec) -> list[Action] | None:
    table = lookup_table(task)
    return None if table is None else [_submit(table, task.gold_hypothesis)]


def smoke_actions(task: TaskSpec) -> list[Action]:
    """A query, a no-op resubmission of the bug, then the gold fix."""
    return [
        {"action_type": "query_context", "query_type": "error_explanation"},
        _submit(task.buggy_source + "\n# unchanged\n", "not sure"),
        *oracle_actions(task),
    ]


def hypothesis_text(task: TaskSpec, kind: HypothesisKind) -> str:
    return {"wrong": WRONG, "stuffed": STUFFED, "correct": task.gold_hypothesis}[kind]


# -- no-op edits of a classic module -------------------------------------------------------------


def with_comment(source: str, line: int) -> str:
    """A comment inserted above ``line`` (next to the bug), indented like it."""
    lines = source.splitlines(keepends=True)
    index = max(0, min(line - 1, len(lines) - 1))
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())] if lines else ""
    lines.insert(index, f"{indent}# checked this line carefully\n")
    return "".join(lines)


def with_extra_function(source: str) -> str:
    return source.rstrip("\n") + "\n\n\ndef _unused_helper(value=None):\n    return value\n"


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id == self.old:
            node.id = self.new
        return node


def with_renamed_local(source: str) -> str | None:
    """The first local variable assigned in a function, renamed everywhere in that function."""
    tree = parse(source)
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = {a.arg for a in func.args.args + func.args.kwonlyargs + func.args.posonlyargs}
        for node in ast.walk(func):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in params:
                _Rename(node.id, f"{node.id}_renamed").visit(func)
                return ast.unparse(tree) + "\n"
    return None


def with_reordered_imports(source: str, allowed: frozenset[str]) -> str:
    """The top-level imports in reverse order; a module with fewer than two first gets unused imports of
    allowed modules, so that there is an order to change (both are no-ops)."""
    tree = parse(source)
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
    lines = source.splitlines(keepends=True)
    texts = ["".join(lines[n.lineno - 1 : n.end_lineno]) for n in imports]
    present = {alias.name for n in imports if isinstance(n, ast.Import) for alias in n.names}
    texts += [f"import {name}\n" for name in sorted(allowed - present)][: max(0, 2 - len(texts))]
    if imports:
        first, last = imports[0].lineno - 1, imports[-1].end_lineno or imports[-1].lineno
        covered = {i for n in imports for i in range(n.lineno - 1, n.end_lineno or n.lineno)}
        between = [lines[i] for i in range(first, last) if i not in covered]  # comments between imports stay
        return "".join(lines[:first] + texts[::-1] + between + lines[last:])
    return "".join(texts[::-1]) + "\n" + source


def noop_variants(task: TaskSpec) -> dict[str, str]:
    source = task.buggy_source
    line = task.gold_locations[0].start if task.gold_locations else 1
    variants = {"comment_next_to_bug": with_comment(source, line), "extra_function": with_extra_function(source)}
    if (renamed := with_renamed_local(source)) is not None:
        variants["renamed_local"] = renamed
    variants["reordered_imports"] = with_reordered_imports(source, task.allowed_imports)
    return variants


def broken(source: str) -> str:
    """Every function body replaced by a raise: fails every test the bug passed."""
    tree = parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = [ast.Raise(exc=ast.Call(func=ast.Name(id="RuntimeError", ctx=ast.Load()), args=[], keywords=[]), cause=None)]
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


class _Recorder:
    """Stands in for ``sol`` in a visible test: calls the gold module in this process and records every answer."""

    def __init__(self, namespace: dict[str, Any]):
        self._namespace, self.answers = namespace, {}

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> Any:
            value = self._namespace[name](*copy.deepcopy(args))
            self.answers[(name, repr(args))] = value
            return value

        return call


def lookup_table(task: TaskSpec) -> str | None:
    """The bug plus a table of the visible tests' answers: passes every visible test and keeps the bug for every
    other input (what a policy that fits the visible tests writes). None for a task whose functions take objects
    (the concurrency task: its visible tests all pass on the bug already)."""
    if task.stress is not None:
        return None
    namespace: dict[str, Any] = {}
    exec(compile(task.gold_source, f"<gold {task.id}>", "exec"), namespace)  # the task's own gold module, never agent code
    recorder = _Recorder(namespace)
    for _, test in task.tests:
        test(recorder)
    names = sorted({name for name, _ in recorder.answers})
    tree = parse(task.buggy_source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            node.name = f"_buggy_{node.name}"
    wrappers = "".join(
        f"\n\ndef {name}(*args):\n    key = ({name!r}, repr(args))\n    if key in _ANSWERS:\n        return _ANSWERS[key]\n"
        f"    return _buggy_{name}(*args)\n"
        for name in names
    )
    table = "_ANSWERS = {\n" + "".join(f"    {key!r}: {value!r},\n" for key, value in recorder.answers.items()) + "}\n"
    # The buggy functions call each other by their public names, which are now the wrappers: still the bug.
    return table + "\n\n" + ast.unparse(tree) + "\n" + wrappers


def _submit(code: str, hypothesis: str) -> Action:
    return {"action_type": "submit_fix", "fixed_code": code, "hypothesis": hypothesis}


def classic_policies(task: TaskSpec, kind: HypothesisKind) -> dict[str, list[Action]]:
    h = hypothesis_text(task, kind)
    noops = noop_variants(task)
    give_up = [{"action_type": "give_up", "final_diagnosis": h}]
    policies = {
        "give_up": give_up,
        "resubmit_bug": [_submit(task.buggy_source, h)] * task.max_attempts,
        "stuffed_hypothesis": [_submit(noops["comment_next_to_bug"], STUFFED)] + give_up,
        "query_spam": [{"action_type": "query_context", "query_type": "related_code"}] * (task.max_steps - 1) + give_up,
        "alternating": [_submit(broken(task.buggy_source) if i % 2 == 0 else task.buggy_source, h) for i in range(task.max_attempts)],
    }
    for name, code in noops.items():
        policies[f"bug_plus_{name}"] = [_submit(code, h)] * 2 + give_up
    return policies
