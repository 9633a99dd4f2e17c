"""Every file tool and its error paths, through a repository episode (exact messages)."""

from __future__ import annotations

import pytest

from env.families.repo.family import REPO
from env.models import DebugAction
from env.project import load_repo_task
from tests import repo_fixture


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return load_repo_task(repo_fixture.write_task(tmp_path_factory.mktemp("tools"), max_steps=100))


@pytest.fixture()
def episode(runtime, task):
    ep = REPO.episode(runtime, task, seed=1, episode_id="tools")
    yield ep
    ep.close()


def act(episode, **fields):
    return episode.step(DebugAction(**fields))


def ok(episode, **fields) -> str:
    obs = act(episode, **fields)
    assert obs.error is None, obs.error
    return obs.tool_output or ""


def err(episode, **fields) -> str:
    obs = act(episode, **fields)
    assert obs.error is not None and obs.info == {"error": obs.error, "trust": "split"}
    assert obs.tool_output is None and not obs.done
    return obs.error


def test_list_dir(episode):
    assert ok(episode, action_type="list_dir") == "README.md\nshop/\ntests/"
    assert ok(episode, action_type="list_dir", path="shop") == "__init__.py\ncart.py\nerrors.py\nprices.py"
    assert err(episode, action_type="list_dir", path="shop/cart.py") == "'shop/cart.py' is not a directory (it is a file: use view_file)"
    assert err(episode, action_type="list_dir", path="nope") == "'nope' is not a directory"


def test_view_file_numbers_lines_and_ranges(episode):
    assert ok(episode, action_type="view_file", path="shop/prices.py") == (
        '1 | from decimal import Decimal\n2 | \n3 | PRICES = {"apple": Decimal("0.50"), "pear": Decimal("0.75")}\n4 | \n5 | \n6 | def price_of(sku):\n7 |     return PRICES[sku]'
    )
    assert ok(episode, action_type="view_file", path="shop/cart.py", start_line=10, end_line=12) == (
        "10 | class Cart:\n11 |     def __init__(self, owner, items=[]):\n12 |         self.owner = owner\n[lines 10-12 of 37]"
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "view_file: missing field 'path'"),
        ({"path": "shop"}, "'shop' is a directory; use list_dir to see its contents"),
        ({"path": "missing.py"}, "no file 'missing.py' in the repository (use list_dir or search to find files)"),
        ({"path": "/etc/passwd"}, "'/etc/passwd' is absolute; give a path relative to the repository root"),
        ({"path": "../../etc/passwd"}, "'../../etc/passwd' is outside the repository"),
        ({"path": ".git/config"}, "the .git directory is not part of the workspace's files"),
        ({"path": "shop/cart.py", "start_line": 99}, "start_line 99 is past the end of shop/cart.py (37 lines)"),
        ({"path": "shop/cart.py", "start_line": 5, "end_line": 2}, "end_line 2 is before start_line 5"),
        ({"path": "shop/cart.py", "start_line": 0}, "view_file: field 'start_line': Input should be greater than or equal to 1"),
        ({"path": "shop/cart.py", "bogus": 1}, "view_file: unknown field 'bogus'"),
        ({"path": "a\x00b"}, "the path is not valid (at most 255 characters, no NUL)"),
    ],
)
def test_view_file_errors(episode, fields, message):
    assert err(episode, action_type="view_file", **fields) == message


def test_binary_huge_and_non_utf8_files_are_refused(episode):
    (episode.workspace.root / "logo.bin").write_bytes(b"\x89PNG\x00\x01")
    assert err(episode, action_type="view_file", path="logo.bin") == "'logo.bin' is a binary file"
    (episode.workspace.root / "huge.txt").write_text("x" * (512 * 1024 + 1))
    assert err(episode, action_type="view_file", path="huge.txt") == "'huge.txt' is 524289 bytes; files over 524288 bytes cannot be opened"
    (episode.workspace.root / "latin.txt").write_bytes("café".encode("latin-1"))
    assert err(episode, action_type="view_file", path="latin.txt") == "'latin.txt' is not UTF-8 text"
    assert err(episode, action_type="replace_text", path="logo.bin", old_text="PNG", new_text="x") == "'logo.bin' is a binary file"


def test_search_literal_regex_path_and_cap(episode):
    assert ok(episode, action_type="search", pattern="price_of(") == (
        "shop/cart.py:22: return sum((price_of(sku) * qty for sku, qty in self.items), Decimal(\"0\"))\nshop/prices.py:6: def price_of(sku):"
    )
    assert ok(episode, action_type="search", pattern=r"def (add|total)\(", regex=True, path="shop") == (
        "shop/cart.py:15: def add(self, sku, qty=1):\nshop/cart.py:21: def total(self):"
    )
    capped = ok(episode, action_type="search", pattern="self", max_results=2)
    assert capped.splitlines()[-1].startswith("[") and capped.endswith("more matches not shown; narrow the path or the pattern]")
    assert ok(episode, action_type="search", pattern="zebra") == "no matches for 'zebra'"
    assert err(episode, action_type="search", pattern="(", regex=True).startswith("invalid regular expression: ")
    assert err(episode, action_type="search", pattern="x", path="nowhere") == "no file or directory 'nowhere' in the repository"
    assert err(episode, action_type="search", pattern="") == "search: field 'pattern': String should have at least 1 character"


def test_edit_replaces_a_range_and_returns_the_region(episode):
    out = ok(episode, action_type="edit", path="shop/cart.py", start_line=11, end_line=13, new_text="    def __init__(self, owner, items=None):\n        self.owner = owner\n        self.items = [] if items is None else items\n")
    assert out == (
        "Edited shop/cart.py: lines 11-13 now hold the new text (+0 lines). The file has 37 lines.\n"
        " 8 | \n 9 | \n10 | class Cart:\n11 |     def __init__(self, owner, items=None):\n12 |         self.owner = owner\n"
        "13 |         self.items = [] if items is None else items\n14 | \n15 |     def add(self, sku, qty=1):\n16 |         if STOCK.get(sku, 0) < qty:"
    )
    out = ok(episode, action_type="edit", path="shop/cart.py", start_line=10, end_line=9, new_text="# carts\n")
    assert out.startswith("Edited shop/cart.py: lines 10-10 now hold the new text (+1 lines). The file has 38 lines.")
    out = ok(episode, action_type="edit", path="shop/cart.py", start_line=10, end_line=10, new_text="")
    assert out.startswith("Edited shop/cart.py: lines removed (-1 lines). The file has 37 lines.")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"start_line": 39, "end_line": 39}, "start_line 39 is past the end of shop/cart.py (37 lines; 38 appends)"),
        ({"start_line": 3, "end_line": 38}, "end_line 38 is past the end of shop/cart.py (37 lines)"),
        ({"start_line": 5, "end_line": 3}, "end_line 3 is before start_line 5 (use end_line = start_line - 1 to insert)"),
        ({"start_line": 1}, "edit: missing field 'end_line'"),
    ],
)
def test_edit_errors(episode, fields, message):
    assert err(episode, action_type="edit", path="shop/cart.py", new_text="x\n", **fields) == message


def test_replace_text_exact_and_unique(episode):
    out = ok(episode, action_type="replace_text", path="shop/cart.py", old_text="items=[]", new_text="items=None")
    assert out.startswith("Edited shop/cart.py: lines 11-11 now hold the new text (+0 lines).")
    assert err(episode, action_type="replace_text", path="shop/cart.py", old_text="items=[]", new_text="x") == (
        "old_text was not found in shop/cart.py; view the file and copy the exact text (whitespace matters)"
    )
    assert err(episode, action_type="replace_text", path="shop/cart.py", old_text="return", new_text="x") == (
        "old_text occurs 7 times in shop/cart.py (lines 19, 22, 25, 28, 31, 34, 37); include more surrounding text to make it unique"
    )
    # Two on one line: the line is named once, with its count; overlapping matches are not counted.
    ok(episode, action_type="replace_text", path="shop/cart.py", old_text="items=None", new_text="items=None; aa = 'aaaa'")
    assert err(episode, action_type="replace_text", path="shop/cart.py", old_text="aa", new_text="x") == (
        "old_text occurs 3 times in shop/cart.py (lines 11 (x3)); include more surrounding text to make it unique"
    )


def test_create_file_and_its_errors(episode):
    assert ok(episode, action_type="create_file", path="shop/util/helpers.py", content="X = 1\n") == "Created shop/util/helpers.py (1 lines)"
    assert ok(episode, action_type="create_file", path="tests/test_extra.py", content="def test_x():\n    pass\n") == (
        "Created tests/test_extra.py (2 lines) (a test file: graded runs use the task's own tests, so it will not count)"
    )
    assert err(episode, action_type="create_file", path="shop/cart.py", content="") == "'shop/cart.py' already exists; use edit or replace_text to change it"
    assert err(episode, action_type="create_file", path="shop/cart.py/x.py", content="") == "'shop/cart.py' is a file, not a directory"
    assert err(episode, action_type="create_file", path="big.py", content="x" * (256 * 1024 + 1)) == "'content' is 262145 characters; the limit is 262144"


def test_diff_shows_the_patch(episode):
    assert ok(episode, action_type="diff") == "(no changes)"
    ok(episode, action_type="replace_text", path="shop/cart.py", old_text="items=[]", new_text="items=None")
    assert ok(episode, action_type="diff") == (
        "diff --git a/shop/cart.py b/shop/cart.py\n--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -8,7 +8,7 @@\n \n \n class Cart:\n"
        "-    def __init__(self, owner, items=[]):\n+    def __init__(self, owner, items=None):\n         self.owner = owner\n         self.items = items\n \n"
    )


def test_run_tests_all_and_selected(episode):
    out = ok(episode, action_type="run_tests")
    assert out.startswith("1 failed, 3 passed\n\nFAILED tests/test_cart.py::test_new_carts_start_empty\n")
    out = ok(episode, action_type="run_tests", test_ids=["tests/test_cart.py::test_total_and_contents"])
    assert out == "1 passed"
    assert ok(episode, action_type="run_tests", test_ids=["tests/test_cart.py"]).startswith("1 failed, 3 passed")
    assert err(episode, action_type="run_tests", test_ids=["tests/test_nope.py::test_x"]) == (
        "run_tests: unknown test id 'tests/test_nope.py::test_x'; the task's tests include: tests/test_cart.py::test_new_carts_start_empty, "
        "tests/test_cart.py::test_total_and_contents, tests/test_cart.py::test_out_of_stock_names_the_item, tests/test_cart.py::test_stock_can_be_patched"
    )
    assert err(episode, action_type="run_tests", test_ids=[]) == "run_tests: the selection holds no tests"


def test_every_tool_has_an_openai_schema(client):
    tasks = client.get("/tasks").json()
    repo = [t for t in tasks if t["family"] == "repo"]
    names = [tool["function"]["name"] for tool in repo[0]["tools"]] if repo else []
    from env.interface import PROFILES, tool_schemas

    REPO_TOOLS = PROFILES["default"].tools
    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == list(REPO_TOOLS)
    if repo:
        assert names == list(REPO_TOOLS)
    edit = next(s for s in schemas if s["function"]["name"] == "edit")["function"]["parameters"]
    assert edit["required"] == ["path", "start_line", "end_line", "new_text"] and edit["additionalProperties"] is False
