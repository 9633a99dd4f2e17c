"""The mutation classes of task synthesis (issue 48 item 3), each on a small source with its exact output, then all
of them on one real-looking module: every operator fires, none gives a no-op, the mechanism read back from each fix
is the planted one, and the same file gives the same mutants in the same order in any process."""

from __future__ import annotations

import ast
import difflib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from env.authoring.mechanism import infer_mechanisms
from env.authoring.mutate import OPERATORS, changes_code, mutants

ROOT = Path(__file__).resolve().parents[1]


def _diff(before: str, after: str) -> list[str]:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in lines if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _found(source: str, operator: str) -> list[tuple[list[str], int, int, tuple[int, ...], tuple[str, ...]]]:
    """Each mutant of one operator as (diff, start, end, reach, mechanisms), by line then diff."""
    found = [(_diff(source, m.source), m.start, m.end, m.reach, m.mechanisms) for m in mutants(source, "m.py", operators=(operator,))]
    return sorted(found, key=lambda f: (f[1], f[0]))


GUARDS = """def first(items, default):
    if not items:
        return default
    for item in items:
        if item is None:
            continue
        return item
    if len(items) > 3:
        log(items)
    raise ValueError("all None")
"""


def test_drop_guard_removes_a_whole_guard_clause_and_nothing_that_does_not_leave():
    assert _found(GUARDS, "drop_guard") == [
        (["-    if not items:", "-        return default"], 2, 3, (), ("wrong_condition", "missing_statement")),
        (["-        if item is None:", "-            continue"], 5, 6, (), ("wrong_condition", "missing_statement")),
    ]  # `if len(items) > 3: log(items)` does not leave the function: no guard


BRANCHES = """def sign(n):
    if n < 0:
        return -1
    elif n == 0:
        return 0
    else:  # positive
        return 1


def unit(n):
    if n == 1:
        s = "one"
    elif n == 2:
        s = "two"
    elif n == 3:
        s = "three"
    return s
"""


def test_drop_branch_removes_an_elif_clause_or_an_else_branch():
    mechanisms = ("missing_statement", "wrong_condition")
    assert _found(BRANCHES, "drop_branch") == [
        (["-    elif n == 0:", "-        return 0"], 4, 5, (), mechanisms),
        (["-    else:  # positive", "-        return 1"], 6, 7, (7,), mechanisms),  # no test runs an `else:` line: its body's screens it
        (["-    elif n == 2:", '-        s = "two"'], 13, 14, (), mechanisms),
        (["-    elif n == 3:", '-        s = "three"'], 15, 16, (), mechanisms),
    ]
    assert all(changes_code(m.source, ast.dump(ast.parse(BRANCHES))) for m in mutants(BRANCHES, "m.py", operators=("drop_branch",)))


DEFAULTS = '''def pad(text, width=8, fill=" ", strict=False, limit: int | None = None, *, sep=", ", step=-1, key=len, other=None):
    return text


def join(items, sep=None):
    """Join with sep."""
    if sep is None:
        sep = "; "
    return sep.join(items)
'''


def test_wrong_default_moves_a_number_by_one_flips_a_flag_edits_a_string_and_gives_none_a_plausible_value():
    value, off = ("wrong_value",), ("wrong_value", "off_by_one")
    head = '-def pad(text, width=8, fill=" ", strict=False, limit: int | None = None, *, sep=", ", step=-1, key=len, other=None):'
    pad = [
        '+def pad(text, width=9, fill=" ", strict=False, limit: int | None = None, *, sep=", ", step=-1, key=len, other=None):',
        '+def pad(text, width=7, fill=" ", strict=False, limit: int | None = None, *, sep=", ", step=-1, key=len, other=None):',
        '+def pad(text, width=8, fill="", strict=False, limit: int | None = None, *, sep=", ", step=-1, key=len, other=None):',
        '+def pad(text, width=8, fill=" ", strict=True, limit: int | None = None, *, sep=", ", step=-1, key=len, other=None):',
        '+def pad(text, width=8, fill=" ", strict=False, limit: int | None = 0, *, sep=", ", step=-1, key=len, other=None):',
        '+def pad(text, width=8, fill=" ", strict=False, limit: int | None = None, *, sep=",", step=-1, key=len, other=None):',
        '+def pad(text, width=8, fill=" ", strict=False, limit: int | None = None, *, sep=", ", step=0, key=len, other=None):',
        '+def pad(text, width=8, fill=" ", strict=False, limit: int | None = None, *, sep=", ", step=-2, key=len, other=None):',
    ]
    kinds = [off, off, value, value, value, value, off, off]  # `key=len` and an unannotated `other=None`: no plausible value
    expected = [([head, line], 1, 1, (2,), kind) for line, kind in zip(pad, kinds, strict=True)]
    expected.append((["-def join(items, sep=None):", '+def join(items, sep=";"):'], 5, 5, (7,), value))  # its guard's value, edited
    assert _found(DEFAULTS, "wrong_default") == sorted(expected, key=lambda f: (f[1], f[0]))


def test_a_default_is_screened_by_the_tests_that_call_its_function():
    called = mutants(DEFAULTS, "m.py", covered={2}, operators=("wrong_default",))
    assert len(called) == 8 and {(m.function, m.start, m.screened) for m in called} == {("pad", 1, (2,))}
    assert mutants(DEFAULTS, "m.py", covered={1, 5, 6}, operators=("wrong_default",)) == []  # def lines run at import, under no test


SHARED = '''def collect(item, into=None):
    """Add item to into."""
    if into is None:
        into = []
    into.append(item)
    return into


def copied(item, into=None):
    if into is None:
        into = []
    into = into + [item]
    return into


class Bag:
    items = []

    def __init__(self):
        self.items = []

    def put(self, item):
        self.items.append(item)
'''


def test_shared_mutable_default_puts_the_list_in_the_signature_only_where_the_function_changes_it():
    assert _found(SHARED, "shared_mutable_default") == [
        (
            ["-def collect(item, into=None):", "+def collect(item, into=[]):", "-    if into is None:", "-        into = []"],
            1,
            4,
            (3,),
            ("shared_mutable_state",),
        ),
        (["-        self.items = []", "+        pass"], 20, 20, (), ("shared_mutable_state",)),
    ]  # copied() builds a new list: a shared default would never change
    named = {m.operator for m in mutants(SHARED, "m.py") if _diff(SHARED, m.source) == ["-        self.items = []", "+        pass"]}
    assert named == {"shared_mutable_default"}  # the same file as drop_statement's: the specific operator names it
    read = [infer_mechanisms({"m.py": m.source}, {"m.py": SHARED}) for m in mutants(SHARED, "m.py", operators=("shared_mutable_default",))]
    # the fix gives the default back its None (shared state) and adds the `if` guard (a statement, a condition)
    assert read == [["shared_mutable_state", "missing_statement", "wrong_condition"], ["missing_statement", "shared_mutable_state"]]


EARLY = """def squares(n):
    result = []
    for i in range(n):
        result.append(i * i)
    result.sort()
    return result


def reset(state):
    state.clear()
    state["ready"] = True


def numbers(n):
    for i in range(n):
        yield i
"""


def test_early_return_returns_the_value_being_built_or_none_before_the_last_statements():
    mechanisms = ("missing_statement",)
    assert _found(EARLY, "early_return") == [
        (["+    return result"], 3, 3, (), mechanisms),
        (["+    return result"], 5, 5, (), mechanisms),
        (["+    return"], 11, 11, (), mechanisms),
    ]  # never before `result` is bound, nor in a generator


BREAKS = """def take_until(items, stop):
    taken = []
    for item in items:
        taken.append(item)
        if item == stop:
            break
    return taken


def find(items, wanted):
    found = None
    for item in items:
        if item == wanted:
            found = item
            break
    return found
"""


def test_early_break_moves_a_break_above_the_statement_before_it():
    found = mutants(BREAKS, "m.py", operators=("early_break",))
    assert [(m.start, m.end, m.reach, m.mechanisms) for m in found] == [(4, 6, (), ("wrong_order",)), (14, 15, (), ("wrong_order",))]
    assert [m.source.splitlines()[m.start - 1 : m.end] for m in found] == [
        ["        if item == stop:", "            break", "        taken.append(item)"],
        ["            break", "            found = item"],
    ]
    assert all(m.source.splitlines()[: m.start - 1] == BREAKS.splitlines()[: m.start - 1] for m in found)
    assert all(m.source.splitlines()[m.end :] == BREAKS.splitlines()[m.end :] for m in found)  # only those lines moved


STRINGS = """def render(row):
    text = ", ".join(row["cells"])
    if row.get("no such key"):
        raise ValueError("bad row: " + text)
    return "<%s>" % text
"""


def test_string_edit_changes_a_separator_a_key_or_a_format_never_a_message():
    value = ("wrong_value",)
    assert _found(STRINGS, "string_edit") == [
        (['-    text = ", ".join(row["cells"])', '+    text = ", ".join(row["Cells"])'], 2, 2, (), value),
        (['-    text = ", ".join(row["cells"])', '+    text = ",".join(row["cells"])'], 2, 2, (), value),
        (['-    return "<%s>" % text', '+    return "<%r>" % text'], 5, 5, (), value),
    ]


METHODS = """def clean(name, suffix):
    name = name.strip().lower()
    if name.endswith(suffix):
        name = name.rsplit(".", 1)[0]
    return name.split(".") + re.split(r"[-/]", name, 1) + name.split(sep, 1)
"""


def test_string_method_calls_the_twin_method():
    mechanisms = ("wrong_variable", "swapped_arguments")
    assert _found(METHODS, "string_method") == [
        (["-    name = name.strip().lower()", "+    name = name.rstrip().lower()"], 2, 2, (), mechanisms),
        (["-    name = name.strip().lower()", "+    name = name.strip().upper()"], 2, 2, (), mechanisms),
        (["-    if name.endswith(suffix):", "+    if name.startswith(suffix):"], 3, 3, (), mechanisms),
        (['-        name = name.rsplit(".", 1)[0]', '+        name = name.split(".", 1)[0]'], 4, 4, (), mechanisms),
    ]  # split(".") without a maxsplit is rsplit("."); the re module has no rsplit; split(sep, 1) may be a regex's


RANGES = """def pairs(items):
    out = []
    for i in range(1, len(items)):
        out.append((items[i - 1], items[i]))
    for n, item in enumerate(items, 1):
        out.append((n, item))
    return out


def upto(n, xs):
    return [i for i in range(n + 1)] + list(enumerate(xs))
"""


def test_range_off_by_one_moves_a_range_s_end_or_start_and_enumerate_s_count():
    off = ("off_by_one",)
    assert _found(RANGES, "range_off_by_one") == [
        (["-    for i in range(1, len(items)):", "+    for i in range(0, len(items)):"], 3, 3, (), off),
        (["-    for i in range(1, len(items)):", "+    for i in range(1, len(items) + 1):"], 3, 3, (), off),
        (["-    for i in range(1, len(items)):", "+    for i in range(1, len(items) - 1):"], 3, 3, (), off),
        (["-    for n, item in enumerate(items, 1):", "+    for n, item in enumerate(items):"], 5, 5, (), off),
        (
            [
                "-    return [i for i in range(n + 1)] + list(enumerate(xs))",
                "+    return [i for i in range(1, n + 1)] + list(enumerate(xs))",
            ],
            11,
            11,
            (),
            off,
        ),
        (
            [
                "-    return [i for i in range(n + 1)] + list(enumerate(xs))",
                "+    return [i for i in range(n + 1)] + list(enumerate(xs, 1))",
            ],
            11,
            11,
            (),
            off,
        ),
        (
            ["-    return [i for i in range(n + 1)] + list(enumerate(xs))", "+    return [i for i in range(n)] + list(enumerate(xs))"],
            11,
            11,
            (),
            off,
        ),
    ]
    named = {m.operator for m in mutants(RANGES, "m.py") if "range(0, len(items))" in m.source}
    assert named == {"range_off_by_one"}  # change_constant plants the same file: the specific operator names it


MODULE = '''"""Read ``key = value`` settings files into dictionaries."""

import re

COMMENT = "#"


class ParseError(ValueError):
    pass


class Settings:
    sections = []

    def __init__(self, name, strict=False):
        self.name = name
        self.sections = []
        self.strict = strict

    def add(self, section, keys=None):
        if keys is None:
            keys = {}
        keys.setdefault("name", section)
        self.sections.append(keys)
        return keys


def parse_line(line, sep="=", lineno=1):
    line = line.strip()
    if not line or line.startswith(COMMENT):
        return None
    if sep not in line:
        raise ParseError("line %d: no %r" % (lineno, sep))
    key, _, value = line.partition(sep)
    return key.strip().lower(), value.strip()


def parse(text, max_lines=100):
    values = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if lineno > max_lines:
            break
        try:
            pair = parse_line(line, lineno=lineno)
        except KeyError:
            continue
        if pair is None:
            continue
        values[pair[0]] = pair[1]
    return values


def dump(values, width=0):
    lines = []
    for key in sorted(values):
        value = values[key]
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif value is None:
            text = ""
        else:
            text = str(value)
        lines.append("%s = %s" % (key.ljust(width), text))
    return "\\n".join(lines[0:len(lines)])


def chunks(items, size):
    out = []
    for start in range(0, len(items), size):
        out.append(items[start:start + size])
        if len(out) >= size and size > 1:
            out.append(items[start + size:])
            break
    return out
'''


def test_every_operator_fires_on_a_real_looking_module_and_none_gives_a_no_op():
    found = mutants(MODULE, "settings.py", check=False)  # what synthesis takes: every mutant must be a real edit
    assert {m.operator for m in found} == set(OPERATORS)
    original = ast.dump(ast.parse(MODULE))
    assert [m.description for m in found if not changes_code(m.source, original)] == []
    assert len({m.key for m in found}) == len(found)
    for mutant in found:
        read = infer_mechanisms({"settings.py": mutant.source}, {"settings.py": MODULE})
        assert set(read) & set(mutant.mechanisms), (mutant.operator, mutant.description, read)
        patch = [line for line in _diff(MODULE, mutant.source)]
        assert 1 <= len(patch) <= 7, (mutant.operator, patch)  # one small edit: the gold patch is as small as the bug


_LIST = """
import json, sys
from env.authoring.mutate import mutants
print(json.dumps([[m.operator, m.start, m.end, m.digest] for m in mutants(sys.stdin.read(), "settings.py")]))
"""


@pytest.mark.parametrize("seed", ["0", "4242"])
def test_the_same_file_gives_the_same_mutants_in_the_same_order_in_any_process(seed: str):
    here = [[m.operator, m.start, m.end, m.digest] for m in mutants(MODULE, "settings.py")]
    env = {"PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", _LIST], input=MODULE, capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    assert json.loads(done.stdout) == here
    assert len(here) > 100
