"""Real historic bugs from PyPI release pairs, as SWE-bench instances built at run time (issue 34 item 2).

    bug = BUGS["pathspec-0_12_1"]
    instance = build_instance(bug, pass_to_pass(bug))   # the official SWE-bench fields; the test lists JSON-encoded
    python bench/real_bugs.py discover NAME OLD NEW [--tests DIR] [--requires PIN]   # candidates for a new entry
    python bench/real_bugs.py instance ID [--out FILE]      # one bug's instance as a JSON line (import-swebench reads it)

Each bug is a release that fixed a behaviour of the release before it: the buggy snapshot is the earlier release's
sdist, the gold ``patch`` the difference of the two releases' code in the files the fix touched, the ``test_patch``
the later release's tests for it (or, where the later release shipped none, a test written here that measures the
behaviour difference between the two releases: ``extra_tests``). PASS_TO_PASS is what SWE-bench's harness lists:
the named test files' tests that pass both without the fix and with it (plain pytest on both trees, in the task's own
test environment). Nothing third-party is committed: the sdists come from PyPI at run time (``env.authoring.sdist``, cached).

``discover`` finds the tests that fail on the earlier release's code and pass on the later one's, both run against the
later release's tests (``env.authoring.mine.compare``, what ``python -m env.authoring mine`` does for every pair of a
library's releases): how every FAIL_TO_PASS list below was measured before it was written down (then under plain pytest).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.compat_libraries import Library, run_plain
from env.authoring import mine, sdist
from env.patches import Files, apply_patch, make_patch
from env.project import is_test_path
from env.verdict.testenv import ensure

HYPOTHESIS = "hypothesis==6.112.2"


@dataclass(frozen=True)
class RealBug:
    """One historic bug: ``name==buggy`` has it, ``name==fixed`` fixed it."""

    name: str
    buggy: str
    fixed: str
    fail_to_pass: tuple[str, ...]  # measured with ``discover``: fail on ``buggy``'s code, pass on ``fixed``'s
    code: tuple[str, ...]  # the source files the fix changed (the gold patch is their diff between the releases)
    what: str  # the behaviour that was wrong: the problem statement
    requirements: tuple[str, ...] = ()  # what the tests import besides pytest (exact pins)
    extra_tests: tuple[tuple[str, str], ...] = ()  # (test file, code appended to it): a test written here, see the docstring
    kind: str = ""  # what makes the library hard for the verdict: "src", "conftest", "suite>500" (comma-separated)

    slug: str = ""  # tells apart bugs fixed by the same release

    @property
    def instance_id(self) -> str:
        return f"{self.name}-{self.fixed}".replace(".", "_") + (f"-{self.slug}" if self.slug else "")

    @property
    def test_files(self) -> list[str]:
        return sorted({t.split("::")[0] for t in self.fail_to_pass})


def _release(name: str, version: str) -> Files:
    return sdist.tree_files(sdist.fetch(name, version))


def _with_extra(files: Files, bug: RealBug) -> Files:
    out = dict(files)
    for path, code in bug.extra_tests:
        out[path] = out.get(path, "") + code
    return out


def gold_and_tests(bug: RealBug) -> tuple[Files, str, str]:
    """The buggy snapshot, the gold patch (the fix's files, buggy -> fixed release) and the test patch (the F2P files and
    the test data files, buggy release -> fixed release's, plus ``extra_tests``)."""
    old, new = _release(bug.name, bug.buggy), _release(bug.name, bug.fixed)
    missing = [p for p in bug.code if p not in old or p not in new]
    if missing:
        raise ValueError(f"{bug.instance_id}: the fix's files are not in both releases: {', '.join(missing)}")
    gold = make_patch({p: old[p] for p in bug.code}, {p: new[p] for p in bug.code})
    if not gold.strip():
        raise ValueError(f"{bug.instance_id}: the releases do not differ in {', '.join(bug.code)}")
    # The named test files, and the test data the later release added or changed (a test reads its input from
    # tests/files/...). Other test modules stay out: each one the patch touches is collected in every run.
    data = [p for p in new if is_test_path(p) and not p.endswith(".py") and old.get(p) != new[p]]
    touched = sorted(set(bug.test_files) | set(data))
    graded = _with_extra({p: new[p] for p in touched if p in new}, bug)
    tests = make_patch({p: old[p] for p in touched if p in old}, graded)
    return old, gold, tests


def build_instance(bug: RealBug, p2p: list[str]) -> dict[str, object]:
    """The SWE-bench instance (official format: the test lists JSON-encoded strings); ``p2p`` from ``pass_to_pass``."""
    _, gold, tests = gold_and_tests(bug)
    return {
        "instance_id": bug.instance_id,
        "repo": f"pypi/{bug.name}",
        "base_commit": "",  # an sdist is no commit: imported with --pypi NAME==VERSION
        "patch": gold,
        "test_patch": tests,
        "problem_statement": bug.what,
        "hints_text": "",
        "created_at": "",
        "version": bug.buggy,
        "environment_setup_commit": "",
        "FAIL_TO_PASS": json.dumps(list(bug.fail_to_pass)),
        "PASS_TO_PASS": json.dumps(sorted(p2p)),
        "requirements": list(bug.requirements),
    }


def _plain(files: Files, name: str, version: str, requirements: list[str], test_files: list[str]) -> dict[str, str]:
    """Plain pytest on ``test_files`` of the project ``files``: each test's status."""
    env = ensure(requirements)
    with tempfile.TemporaryDirectory(prefix="adbg-realbug-") as scratch:
        root = Path(scratch)
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        lib = Library(name, version, tuple(test_files), sdist.files_source_root(files), tuple(requirements))
        run = run_plain(lib, root, env, test_files)
        if not run.collected:
            raise RuntimeError(f"plain pytest collected nothing from {', '.join(test_files)}: {run.tail or run.collect_errors}")
        return dict(run.outcomes)


def pass_to_pass(bug: RealBug) -> list[str]:
    """SWE-bench's PASS_TO_PASS: the named files' tests (the graded ones) that pass under plain pytest both on the buggy
    tree and on the gold tree. Raises if a FAIL_TO_PASS test does not fail before and pass after: the entry is wrong."""
    old, gold, tests = gold_and_tests(bug)
    before = _plain(apply_patch(old, tests), bug.name, bug.buggy, list(bug.requirements), bug.test_files)
    after = _plain(apply_patch(apply_patch(old, gold), tests), bug.name, bug.fixed, list(bug.requirements), bug.test_files)
    wrong = [t for t in bug.fail_to_pass if after.get(t) != "PASSED" or before.get(t) == "PASSED"]
    if wrong:
        said = ", ".join(f"{t} ({before.get(t, 'missing')} before, {after.get(t, 'missing')} after)" for t in wrong)
        raise ValueError(f"{bug.instance_id}: not failing before and passing after under plain pytest: {said}")
    return sorted(t for t, s in after.items() if s == "PASSED" and before.get(t) == "PASSED")


def discover(name: str, old_version: str, new_version: str, tests: list[str], requirements: list[str]) -> None:
    """Print the code files that differ and the tests that fail on the old code and pass on the new (new tests both),
    measured as ``python -m env.authoring mine`` measures them (``env.authoring.mine.compare``: sandboxed, in the task's
    own test environment)."""
    pair = mine.load_releases(name, old_version, new_version)
    found = mine.compare(pair, mine.Runner(mine.suite_sandbox(), ensure(requirements)), tests or None)
    print(f"code files changed (version bumps aside): {', '.join(pair.changed) or 'none'}")
    for path, patch in pair.changed.items():
        print(f"  {path}: {mine.lines_changed(patch)} lines changed")
    print(f"{len(found.after.outcomes)} tests; fail on {old_version}'s code and pass on {new_version}'s: {len(found.flipped)}")
    for test in found.flipped:
        print(f"  {test} ({found.before.outcomes.get(test, 'missing')})")
    for path in found.uncollected:
        print(f"  not collected on {old_version}'s code (none of its tests can be FAIL_TO_PASS): {path}")


# -- the bugs ----------------------------------------------------------------------------------------

JINJA2 = ("markupsafe==2.1.5",)  # jinja2's own dependency: the tests import it beside the project
BUG_LIST: list[RealBug] = [
    RealBug("parse", "1.20.1", "1.20.2", ("tests/test_parse.py::test_hyphen_inside_field_name",
                                          "tests/test_parse.py::test_hyphen_inside_field_name_collision_handling"),
            ("parse.py",), "A template field named `{user-id}` is not recognised: parse('/local/sub/{user-id}/duration', ...) "
                           "finds no 'user-id' (a hyphen should be allowed in field names)."),  # fmt: skip
    RealBug("semver", "3.0.1", "3.0.2", ("tests/test_subclass.py::test_replace_from_subclass",), ("src/semver/version.py",),
            "Version.replace() on an instance of a subclass of Version returns a plain Version (or fails), so a subclass "
            "that adds a 'v' prefix loses it: SemVerWithVPrefix.parse('v1.1.0').replace(prerelease='dev.0') should print "
            "'v1.1.0-dev.0'.", kind="src"),  # fmt: skip
    RealBug("jinja2", "3.1.2", "3.1.3", ("tests/test_filters.py::TestFilter::test_xmlattr_key_with_spaces",), ("src/jinja2/filters.py",),
            "The xmlattr filter accepts keys containing spaces, so a key like 'class onclick=alert(1)' injects another "
            "attribute into the rendered markup; such keys must be refused with a ValueError.",
            JINJA2, kind="src,conftest,suite>500", slug="xmlattr"),  # fmt: skip
    RealBug("jinja2", "3.1.2", "3.1.3", ("tests/test_inheritance.py::TestInheritance::test_invalid_required",), ("src/jinja2/parser.py",),
            "A `{% block x required %}` whose body holds something other than whitespace or comments (for example a nested "
            "`{% if %}`) is accepted, though required blocks may only contain whitespace or comments: it must be a "
            "TemplateSyntaxError.", JINJA2, kind="src,conftest,suite>500", slug="required"),  # fmt: skip
    RealBug("jinja2", "3.1.2", "3.1.3", ("tests/test_ext.py::TestInternationalization::test_nested_trans_error",
                                         "tests/test_ext.py::TestInternationalization::test_trans_block_error"),
            ("src/jinja2/ext.py",), "A `{% trans %}` nested in another, or another block inside a trans block, fails with a "
            "vague 'control structures in translatable sections are not allowed': the error should say trans blocks can't "
            "be nested (did you mean `endtrans`?) and name the block it saw.", JINJA2, kind="src,conftest,suite>500", slug="trans"),  # fmt: skip
    RealBug("sqlparse", "0.4.3", "0.4.4", ("tests/test_regressions.py::test_comment_between_cte_clauses_issue632",), ("sqlparse/sql.py",),
            "Statement.get_type() returns 'UNKNOWN' for a WITH statement that has a comment between its CTE clauses "
            "(WITH foo AS (...), -- comment\n bar AS (...) SELECT ...) instead of 'SELECT'.", slug="cte"),  # fmt: skip
    RealBug("isodate", "0.6.0", "0.6.1", ("src/isodate/tests/test_duration.py::DurationTest::test_associative",
                                          "src/isodate/tests/test_duration.py::DurationTest::test_totimedelta"),
            ("src/isodate/duration.py",), "Adding a Duration with fractional years or months (Duration(years=1.5)) to a date, "
            "or subtracting it, fails with TypeError: integer argument expected, got float; the result should be the date "
            "moved by the whole years and months.", ("six==1.16.0",), kind="src"),  # fmt: skip
    RealBug("python-dotenv", "1.0.0", "1.0.1", ("tests/test_zip_imports.py::test_load_dotenv_gracefully_handles_zip_imports_when_no_env_file",
                                                "tests/test_zip_imports.py::test_load_dotenv_outside_zip_file_when_called_in_zipfile"),
            ("src/dotenv/main.py",), "load_dotenv() called from code imported out of a zip file fails (find_dotenv walks "
            "the call stack to a frame whose file does not exist on disk) instead of finding the .env file beside the "
            "caller or the working directory.", ("click==8.1.7", "sh==2.0.6"), kind="src,conftest"),  # fmt: skip
    RealBug("semver", "3.0.2", "3.0.3", ("tests/test_subclass.py::test_compare_with_subclass",), ("src/semver/version.py",),
            "Comparing an instance of a subclass of Version with a plain Version (or with another subclass instance) "
            "raises TypeError instead of comparing the versions: the comparison operators should accept any Version.",
            kind="src"),  # fmt: skip
    RealBug("jinja2", "3.1.3", "3.1.4", ("tests/test_filters.py::TestFilter::test_xmlattr_key_invalid[/]",
                                         "tests/test_filters.py::TestFilter::test_xmlattr_key_invalid[=]",
                                         "tests/test_filters.py::TestFilter::test_xmlattr_key_invalid[>]"),
            ("src/jinja2/filters.py",), "The xmlattr filter still accepts keys containing '/', '>' or '=', which can "
            "inject attributes or close the tag in the rendered markup; such keys must be refused with a ValueError.",
            JINJA2, kind="src,conftest,suite>500", slug="xmlattr"),  # fmt: skip
    RealBug("sqlparse", "0.5.0", "0.5.1", ("tests/test_split.py::test_split_multiple_case_in_begin",), ("sqlparse/engine/statement_splitter.py",),
            "sqlparse.split() cuts a BEGIN ... END block in two when the block holds more than one CASE expression: "
            "the statement splitter loses track of the nesting at the second CASE's END.", slug="split"),  # fmt: skip
    RealBug("sqlparse", "0.5.0", "0.5.1", ("tests/test_tokenize.py::test_parse_order[ASC NULLS FIRST]",
                                           "tests/test_tokenize.py::test_parse_order[DESC NULLS LAST]",
                                           "tests/test_tokenize.py::test_parse_order[NULLS FIRST]"),
            ("sqlparse/keywords.py",), "ORDER BY ... NULLS FIRST / NULLS LAST is not lexed as one ordering keyword: "
            "'NULLS FIRST' comes out as separate tokens instead of a single Keyword.Order token.", slug="nulls"),  # fmt: skip
    RealBug("sqlparse", "0.5.0", "0.5.1", ("tests/test_format.py::test_strip_ws_removes_trailing_ws_in_groups",),
            ("sqlparse/filters/others.py",), "format(sql, strip_whitespace=True) leaves the whitespace at the end of a "
            "group (a parenthesised sub-select ending in a newline) in place, so the formatted statement keeps a "
            "trailing space before the closing parenthesis.", slug="stripws"),  # fmt: skip
    RealBug("click", "8.1.7", "8.1.8", ("tests/test_types.py::test_invalid_path_with_esc_sequence",), ("src/click/types.py",),
            "A click.Path that must not be a directory reports 'Directory 'C:\\temp' is a directory.' with the file name "
            "unquoted, so escape sequences in it are printed as they are; the name should be shown as its repr.",
            kind="src,conftest,suite>500", slug="path"),  # fmt: skip
    RealBug("click", "8.1.7", "8.1.8", ("tests/test_options.py::test_show_default_with_empty_string",), ("src/click/core.py",),
            "An option with show_default=True whose default is the empty string shows no default in --help: the help "
            "line should end with [default: \"\"] rather than hide that there is one.", kind="src,conftest,suite>500",
            slug="core"),  # fmt: skip
    RealBug("xmltodict", "0.13.0", "0.14.0", ("tests/test_xmltodict.py::XMLToDictTestCase::test_streaming_attrs",
                                              "tests/test_dicttoxml.py::DictToXMLTestCase::test_pretty_print_with_int_indent"),
            ("xmltodict.py",), "Two faults of xmltodict: in streaming mode (item_depth, item_callback) the attributes of "
            "the streamed items are lost, and unparse(..., pretty=True, indent=2) fails because an integer indent is "
            "not turned into that many spaces."),  # fmt: skip
    RealBug("pathspec", "0.12.0", "0.12.1", ("tests/test_03_pathspec.py::PathSpecTest::test_01_match_file_3_unmatch",),
            ("pathspec/pathspec.py",), "PathSpec.match_file() returns None, not False, for a file no pattern matches "
            "(PathSpec.from_lines('gitwildmatch', ['*.txt', '!test/']).match_file('unmatch.bin')): it must return a bool."),  # fmt: skip
    RealBug("more-itertools", "10.3.0", "10.4.0", ("tests/test_more.py::DistinctPermutationsTests::test_unhashable",
                                                   "tests/test_more.py::DistinctPermutationsTests::test_unsortable",
                                                   "tests/test_more.py::DistinctPermutationsTests::test_unsortable_r",
                                                   "tests/test_more.py::DistinctPermutationsTests::test_unsorted_equivalent"),
            ("more_itertools/more.py", "more_itertools/recipes.py"), "distinct_permutations() fails on items that cannot be "
            "sorted or hashed (a mix of int and str, lists, sets): it sorts its input, so "
            "distinct_permutations([1, 'a', 1]) raises TypeError instead of yielding each distinct permutation once.",
            kind="suite>500"),  # fmt: skip
    RealBug("boltons", "23.0.0", "23.1.0", ("tests/test_cacheutils.py::test_lru_dict_replacement[LRI]",
                                            "tests/test_cacheutils.py::test_lru_dict_replacement[LRU]"),
            ("boltons/cacheutils.py",), "Setting a key that is already in an LRI or LRU cache updates the cache's own "
            "link but not the dict underneath, so cache[key] = new_value leaves cache[key] (and dict(cache)) at the old "
            "value.", slug="cache"),  # fmt: skip
    RealBug("boltons", "23.0.0", "23.1.0", ("tests/test_funcutils_fb_py3.py::test_copy_function_kw_defaults_py3",),
            ("boltons/funcutils.py",), "funcutils.copy_function() drops the defaults of keyword-only arguments: the copy "
            "of def f(a, *, b=2) raises TypeError when called without b.", slug="copy"),  # fmt: skip
    RealBug("boltons", "23.0.0", "23.1.0", ("tests/test_dictutils.py::test_omd_pickle",), ("boltons/dictutils.py",),
            "An OrderedMultiDict does not survive pickling: pickle.loads(pickle.dumps(omd)) fails or loses the values "
            "of repeated keys, since unpickling sets items before the linked list is set up.", slug="omd"),  # fmt: skip
    RealBug("boltons", "23.0.0", "23.1.0", ("tests/test_tbutils_parsed_exc.py::test_parsed_exc_with_anchor",), ("boltons/tbutils.py",),
            "ParsedException.from_string() misreads a Python 3.11 traceback whose frames carry anchor lines (~~~^^^ "
            "under the failing expression): the anchor line is taken as the next frame, so the frames come out wrong.",
            slug="anchor"),  # fmt: skip
    RealBug("wcwidth", "0.2.12", "0.2.13", ("tests/test_core.py::test_kr_jamo", "tests/test_core.py::test_kr_jamo_filler"),
            ("wcwidth/table_wide.py", "wcwidth/table_zero.py", "wcwidth/wcwidth.py"), "wcswidth() measures decomposed "
            "Korean Hangul wrongly: the medial vowel and final consonant jamo (U+1160..U+11FF) that combine with a "
            "leading consonant into one wide syllable are counted as wide instead of zero width, and so is the Hangul "
            "jungseong filler."),  # fmt: skip
    RealBug("toml", "0.10.1", "0.10.2", ("tests/test_api.py::test_deepcopy_timezone",), ("toml/tz.py",),
            "copy.deepcopy() of a document holding an offset datetime fails: toml.loads('dob = 1979-05-24T07:32:00-08:00') "
            "gives a datetime whose TomlTz tzinfo cannot be deep-copied (its __init__ needs the raw offset)."),  # fmt: skip
]
BUGS: dict[str, RealBug] = {b.instance_id: b for b in BUG_LIST}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("discover", help="tests that fail on OLD's code and pass on NEW's (NEW's tests, plain pytest)")
    p.add_argument("name")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--tests", action="append", default=[], help="test files to run (default: every test file of NEW)")
    p.add_argument("--requires", action="append", default=[], metavar="PIN")
    p = sub.add_parser("instance", help="one bug's SWE-bench instance, as a JSON line (ids: `instance list`)")
    p.add_argument("id", help="a bug's instance id, e.g. parse-1_20_2; `list` prints them")
    p.add_argument("--out", type=Path, help="the JSONL file to write (default: standard output)")
    args = parser.parse_args(argv)
    if args.command == "discover":
        discover(args.name, args.old, args.new, args.tests, args.requires)
        return 0
    if args.id == "list":
        print("\n".join(BUGS))
        return 0
    bug = BUGS.get(args.id)
    if bug is None:
        parser.error(f"no bug {args.id!r}; `instance list` prints the {len(BUGS)} ids")
    line = json.dumps(build_instance(bug, pass_to_pass(bug))) + "\n"
    if args.out is None:
        sys.stdout.write(line)
    else:
        args.out.write_text(line)
        print(f"wrote {bug.instance_id} into {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
