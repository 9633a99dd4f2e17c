"""The heuristic baseline's repository play: the wider edits it tries, and how it finds the file and the function when
the failing test's traceback names no project line (an assertion on a returned value), the search for definitions is
cut short, and the bug sits past the first view of a long file."""

from __future__ import annotations

import json

from env.agents.mutations import mutations
from env.eval.run import play
from env.families.catalog import TaskCatalog
from env.listing import listing_entry
from env.project import load_repo_task
from env.runtime import Runtime
from env.server.in_process import InProcessDriver
from tests import repo_fixture

SNIPPET = """def f(a, b, items):
    if not a:
        return 1
    if a is None and b in items:
        return g(a, b)
    while x > 0:
        flag = True
    split = len(b) % 2
    total = a + b
"""


def test_the_wider_edits_keep_the_line_count_and_the_first_set_is_unchanged():
    first = mutations(SNIPPET)
    wider = mutations(SNIPPET, extended=True)
    assert wider[: len(first)] == first  # the classic play and the random agent see the same list as before
    added = [(m.kind, m.line, m.description) for m in wider[len(first) :]]
    assert added == [
        (4, 2, "the condition `not a` is negated: drop the `not`"),
        (4, 4, "the condition `a is None and b in items` is the wrong way round"),
        (4, 4, "`and` should be `or`"),
        (4, 4, "`is` should be `is not`"),
        (4, 4, "`in` should be `not in`"),
        (4, 6, "the condition `x > 0` is the wrong way round"),
        (4, 8, "`%` should be `//`"),
        (5, 5, "the arguments `a` and `b` are swapped"),
        (5, 7, "the flag True should be False"),
        (6, 9, "f computes total but never returns it"),
    ]
    assert all(m.source.count("\n") == SNIPPET.count("\n") for m in wider)
    assert wider[-1].source.splitlines()[-1] == "    total = a + b; return total"
    assert "split = len(b) // 2" in next(m.source for m in wider if m.description == "`%` should be `//`")
    assert mutations("def f(:\n", extended=True) == []


# A package whose definitions outnumber one search's 200 results, the bug in a file the cut search does not show, past
# line 400 of it, in a function the failing test calls and whose wrong result its assertion reports.
_MANY = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n\n" for i in range(230))
_PAD = "".join(f"# ledger rule {i}: amounts are whole cents\n" for i in range(420))
_BUGGY = (
    _PAD
    + """def credited(balance, amount):
    if not (amount > 0):
        balance = balance + amount
    return balance
"""
)
_FILES = {
    "ledger/__init__.py": "",
    "ledger/core.py": _MANY,
    "ledger/zmath.py": _BUGGY,
    "tests/test_zmath.py": "from ledger.zmath import credited\n\n\ndef test_credit():\n    assert credited(10, 5) == 15\n\n\n"
    "def test_no_debit():\n    assert credited(10, -5) == 10\n",
}


def test_the_heuristic_lists_the_package_reads_on_and_tries_the_tested_function(runtime, tmp_path):
    gold = {**_FILES, "ledger/zmath.py": _BUGGY.replace("if not (amount > 0):", "if amount > 0:")}
    folder = repo_fixture.write_task(
        tmp_path / "ledger",
        _FILES,
        gold,
        id="ledger-credit",
        FAIL_TO_PASS=["tests/test_zmath.py::test_credit", "tests/test_zmath.py::test_no_debit"],
        PASS_TO_PASS=[],
        max_steps=30,
    )
    task = load_repo_task(folder)
    served = Runtime(TaskCatalog([task]), runtime.sandbox, workers=2, secret=runtime.secret)
    steps = tmp_path / "steps.jsonl"
    result = play(InProcessDriver(served), "heuristic", listing_entry(task.summary()), 0, steps)
    actions = [json.loads(line)["action"] for line in steps.read_text().splitlines()]
    assert {"action_type": "list_dir", "path": "ledger"} in actions  # the cut search did not show ledger/zmath.py
    assert {"action_type": "view_file", "path": "ledger/zmath.py", "start_line": 401} in actions  # read on past the first view
    assert result["solved"] is True and actions[-1] == {"action_type": "submit"}
