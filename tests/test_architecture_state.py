"""Where state lives, read from the code: a module of env/ keeps no state of its own between calls. What a server
keeps, its Runtime owns (``env/runtime.py``); what must be one per process is listed in ``env/process_state.py``.

Found: a module-level name that the module changes in place (``NAME[k] = v``, ``del NAME[k]``, ``NAME.append(...)``
and the other mutating methods), a name a function rebinds (``global NAME``), and a module-level instance of a
class that guards its own state with a lock (a cache: ``_TREES = _TestTrees()``), each from inside a function (what
runs at import builds a table once). Tables only read are no state, whatever their type; nor are a ``Registry``
(filled as its members' modules load, refusing duplicates) and what ``process_wide`` made.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Run in their own processes, loaded by path (never as part of env): their state is their process's.
ELSEWHERE = ("env/sandbox/inside/", "env/verdict/host/")
THE_ONE_MODULE = "env/process_state.py"
MUTATORS = {"append", "add", "update", "setdefault", "pop", "popitem", "clear", "extend", "insert", "remove", "discard", "__setitem__", "__delitem__"}
LOCKS = {"Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore"}
TABLES = {"Registry", "process_wide"}  # calls whose value, bound at module level, is no module's own state


def _holds_a_lock(cls: ast.ClassDef) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name)) and (n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id) in LOCKS
               for n in ast.walk(cls))  # fmt: skip


def state_in(source: str) -> list[str]:
    """What of a module's state ``source`` shows, as "line: what"."""
    tree = ast.parse(source)
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in TABLES:
            continue
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    stateful = {n.name for n in tree.body if isinstance(n, ast.ClassDef) and _holds_a_lock(n)}
    found = []
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in stateful:
            found.append(f"{node.lineno}: a module-level {value.func.id}, which keeps state behind a lock")
    in_functions = [n for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)]
    for node in dict.fromkeys(in_functions):  # once each, though nested functions walk them twice
        if isinstance(node, ast.Global):
            found += [f"{node.lineno}: global {name}" for name in node.names]
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            found += [f"{node.lineno}: {ast.unparse(t)} changed in place" for t in targets
                      if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in names]  # fmt: skip
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id in names:
                found.append(f"{node.lineno}: {owner.id}.{node.func.attr}(...)")
    return found


@functools.cache
def state_of_env() -> dict[str, list[str]]:
    """Read once per run: the two tests below ask the same question of the same files (neither changes the answer)."""
    found = {}
    for path in sorted((ROOT / "env").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(ELSEWHERE) or rel == THE_ONE_MODULE:
            continue
        if kept := state_in(path.read_text(encoding="utf-8")):
            found[rel] = kept
    return found


# Not moved yet, each with why it is still where it is; this list only shrinks (the test below keeps it exact).
LEFT = {
    # per worker process of the catalog build / verify commands (a Ray or multiprocessing worker's own sandbox)
    "env/authoring/catalog/build.py": "a build worker's sandbox and libraries, one per worker process",
    "env/authoring/catalog/verify.py": "a verify worker's runtime, one per worker process",
    # the demo's scratch directories, one set per demo process (not yet a Runtime's)
    "env/demo/scratch.py": "the demo's open scratch directories, removed at exit",
    # the children this process must kill when it dies, and its signal handling: one per process by nature
    "env/sandbox/lifetime.py": "the process's children and its signal watcher",
}


def test_no_module_of_env_keeps_state_of_its_own():
    assert sorted(set(state_of_env()) - set(LEFT)) == []


def test_each_module_left_still_keeps_state():
    assert sorted(set(LEFT) - set(state_of_env())) == []


def test_the_state_check_finds_a_cache_a_mutation_and_a_rebinding():
    planted = """
import threading

TABLE = {"a": 1}  # read only: no state
_SEEN = {}
_COUNT = 0


class _Trees:
    def __init__(self):
        self._lock = threading.Lock()


_TREES = _Trees()


def see(key):
    global _COUNT
    _COUNT += 1
    _SEEN[key] = TABLE["a"]
    _SEEN.setdefault(key, 0)
"""
    assert state_in(planted) == [
        "14: a module-level _Trees, which keeps state behind a lock",
        "18: global _COUNT",
        "20: _SEEN[key] changed in place",
        "21: _SEEN.setdefault(...)",
    ]


def test_the_state_check_finds_the_caches_this_project_had():
    # what the repository verdict kept at module level before the Runtime owned it (issue 52)
    before = {
        "_TREES = _TestTrees()": "class _TestTrees:\n    def __init__(self):\n        self._lock = threading.Lock()\n\n\n_TREES = _TestTrees()\n",
        "_TEST_SANDBOXES": "_TEST_SANDBOXES = weakref.WeakKeyDictionary()\n\n\ndef get(base):\n    return _TEST_SANDBOXES.setdefault(base, {})\n",
        "_OBSERVERS": "_OBSERVERS = []\n\n\ndef observe(m):\n    _OBSERVERS.append(m)\n",
    }
    assert {name: len(state_in(source)) for name, source in before.items()} == dict.fromkeys(before, 1)


def test_the_one_module_refuses_an_unlisted_name():
    import pytest

    from env.process_state import WHY, process_wide

    with pytest.raises(KeyError, match="not a process-wide object"):
        process_wide("my_cache", dict)
    assert set(WHY) == {"cpu_pairs", "run_observers", "verdict_hosts", "procedural_tasks", "held_out_records", "test_env_builds"}
