"""The catalog on a small slice (docs/catalog.md): a tiny library's sdist, made here and pinned by its sha256, is
synthesized into a manifest; the manifest builds task folders identical to synthesis's (in this process, in two
processes and on a local Ray instance), they verify valid, and stats counts them. Bad input is recorded and skipped:
an sdist whose hash differs, a mutation whose digest no longer regenerates, a suite that needs the network."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from env.authoring.__main__ import main as authoring
from env.authoring.catalog.intake import admit, slug
from env.authoring.catalog.manifest import (
    CatalogTask,
    LibraryEntry,
    ReleasePair,
    ValidationRecord,
    read_libraries,
    read_tasks,
    share_cap,
    write_tasks,
)
from env.authoring.cost import Meter
from env.authoring.difficulty import Difficulty
from env.families.catalog_dir import load_catalog_dir
from env.project import load_repo_task, read_tree

ROOT = Path(__file__).resolve().parents[1]

TINY = '''"""Small helpers: numbers kept in a range, lists cut in chunks, titles made slugs."""


def clamp(value, low, high):
    if low > high:
        raise ValueError("low is above high")
    if value < low:
        return low
    if value > high:
        return high
    return value


def chunks(items, size):
    if size <= 0:
        raise ValueError("size must be positive")
    return [items[i : i + size] for i in range(0, len(items), size)]


def slug(text):
    words = text.lower().split()
    return "-".join(words)
'''
TINY_TESTS = """import pytest

from tinylib import chunks, clamp, slug


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_low():
    assert clamp(-1, 0, 10) == 0


def test_clamp_high():
    assert clamp(11, 0, 10) == 10


def test_clamp_refuses_a_bad_range():
    with pytest.raises(ValueError):
        clamp(1, 2, 0)


def test_chunks():
    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_chunks_refuses_zero():
    with pytest.raises(ValueError):
        chunks([1], 0)


def test_slug():
    assert slug("Hello World") == "hello-world"
"""
NET = "import urllib.request\n\n\ndef title(url):\n    with urllib.request.urlopen(url, timeout=5) as page:\n        return page.read(100).decode()\n"
NET_TESTS = 'from netlib import title\n\n\ndef test_title():\n    assert "html" in title("https://pypi.org/").lower()\n'
PAIR = {  # a release with a bug (1.0) and the next, which fixed it and added the tests that catch it (1.1)
    "1.0": 'def words(text):\n    return text.split(" ")\n\n\ndef count(text):\n    return len(words(text))\n',
    "1.1": "def words(text):\n    return text.split()\n\n\ndef count(text):\n    return len(words(text))\n",
}
PAIR_TESTS = {
    "1.0": "from pairlib import count, words\n\n\ndef test_words():\n    assert words('a b') == ['a', 'b']\n\n\ndef test_count():\n    assert count('a b c') == 3\n",
    "1.1": "from pairlib import count, words\n\n\ndef test_words():\n    assert words('a b') == ['a', 'b']\n\n\ndef test_count():\n    assert count('a b c') == 3\n\n\n"
    "def test_words_collapse_spaces():\n    assert words('a  b') == ['a', 'b']\n\n\ndef test_count_ignores_edges():\n    assert count(' a b ') == 2\n",
}


def sdist(cache: Path, name: str, version: str, files: dict[str, str]) -> str:
    """An sdist archive where env.authoring.sdist finds it (no download), and its sha256."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for rel, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-{version}/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (cache / "archives").mkdir(parents=True, exist_ok=True)
    (cache / "archives" / f"{name}-{version}.tar.gz").write_bytes(buffer.getvalue())
    return hashlib.sha256(buffer.getvalue()).hexdigest()


def entry(name: str, sdists: dict[str, str], split: str = "train") -> dict[str, object]:
    return {"name": name, "version": max(sdists), "sdists": sdists, "topic": "text", "split": split}


def cli(*args: str, cache: Path, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "ENV_SDIST_CACHE": str(cache), "RAY_USAGE_STATS_ENABLED": "0", **(extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "env.authoring", *args], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def slice_(isolation, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """tinylib synthesized into a manifest (2 tasks); netlib, whose suite needs the network, recorded as failed."""
    root = tmp_path_factory.mktemp("catalog")
    cache, manifest, work = root / "sdists", root / "manifest", root / "work"
    digests = {"tinylib": sdist(cache, "tinylib", "1.0", {"tinylib.py": TINY, "tests/test_tinylib.py": TINY_TESTS}),
               "netlib": sdist(cache, "netlib", "1.0", {"netlib.py": NET, "tests/test_netlib.py": NET_TESTS})}  # fmt: skip
    manifest.mkdir()
    (manifest / "libraries.json").write_text(json.dumps([entry(name, {"1.0": d}) for name, d in digests.items()]))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ENV_SDIST_CACHE", str(cache))
        args = ["catalog", "synthesize", "--manifest", str(manifest), "--work", str(work), "--n", "2", "--max-share", "1"]
        assert authoring(args) == 1  # netlib failed
        yield {"root": root, "cache": cache, "manifest": manifest, "work": work}


def test_synthesize_adds_the_valid_tasks_with_what_regenerates_them_and_records_a_library_that_needs_the_network(slice_):
    tasks = read_tasks(slice_["manifest"] / "tasks.jsonl")
    assert len(tasks) == 2 and {t.library for t in tasks} == {"tinylib"} and len({frozenset(t.fail_to_pass) for t in tasks}) == 2
    for task in tasks:
        written = load_repo_task(slice_["work"] / "tinylib-1.0" / task.id)  # what synthesis wrote
        assert task.mutation is not None and task.pair is None and task.source == "synthesized"
        planted = written.synthesis
        assert (task.mutation.path, task.mutation.operator, str(task.mutation.start), str(task.mutation.end), task.mutation.digest) == (
            planted["path"], planted["operator"], planted["start"], planted["end"], planted["digest"])  # fmt: skip
        assert task.id == f"tinylib-1.0-{task.mutation.digest[:10]}"
        assert (task.fail_to_pass, task.pass_to_pass, task.held_out) == (written.fail_to_pass, written.pass_to_pass, written.held_out)
        assert task.validation.runs == 3 and 0 < task.validation.cpu_seconds and 0 < task.validation.wall_seconds
        basis = written.difficulty_basis
        assert task.difficulty == written.difficulty and task.problem_statement == written.problem_statement
        assert task.difficulty_score == Difficulty(int(basis["fail_to_pass"] or 0), int(basis["call_distance"] or 0), None).score
    records = [json.loads(line) for line in (slice_["work"] / "libraries.jsonl").read_text().splitlines()]
    assert [(r["library"], r["status"], r["valid"]) for r in records] == [("tinylib", "synthesized", 2), ("netlib", "failed", 0)]
    recorded = {e.name: e.synthesis for e in read_libraries(slice_["manifest"] / "libraries.json")}
    assert recorded["netlib"] is None and recorded["tinylib"] is not None  # the manifest keeps the yield: no work folder needed
    assert (recorded["tinylib"].valid, recorded["tinylib"].tried) == (2, records[0]["tried"])
    assert records[1]["detail"] == (
        "SynthesisError: netlib-1.0: its suite needs the network (1 of 1 test(s) failed reaching it), which no test run has; no test passes "
        "both sandboxed and under the split while reaching the project's code; of its 1 test(s) 1 failed sandboxed, 0 under the split and 0 "
        "did not reach the project's code; the first 1: tests/test_netlib.py::test_title: sandboxed: FAILED: socket.gaierror: [Errno -3] "
        "Temporary failure in name resolution"
    )
    # Again: nothing is synthesized twice, the failed library is skipped (its entry is unchanged), the manifest stays.
    before = (slice_["manifest"] / "tasks.jsonl").read_text()
    assert (
        authoring(
            ["catalog", "synthesize", "--manifest", str(slice_["manifest"]), "--work", str(slice_["work"]), "--n", "2", "--max-share", "1"]
        )
        == 1
    )
    assert (slice_["manifest"] / "tasks.jsonl").read_text() == before
    assert len((slice_["work"] / "libraries.jsonl").read_text().splitlines()) == 3  # tinylib's second run, netlib not tried


def test_the_build_writes_the_folders_synthesis_wrote_and_resumes(slice_, capsys):
    out = slice_["root"] / "built"
    args = ["catalog", "build", "--manifest", str(slice_["manifest"]), "--out", str(out)]
    assert authoring(args) == 0
    tasks = read_tasks(slice_["manifest"] / "tasks.jsonl")
    for task in tasks:  # every file: repo/, gold.patch, test_patch.diff where tests are held out, task.json with its lists
        assert read_tree(out / task.id) == read_tree(slice_["work"] / "tinylib-1.0" / task.id)
    assert json.loads((out / "catalog.json").read_text()) == {"format": 1, "tasks": [
        {"id": t.id, "library": "tinylib", "source": "synthesized", "split": "train", "difficulty": t.difficulty} for t in sorted(tasks, key=lambda t: t.id)]}  # fmt: skip
    assert "2 task(s) built, 0 unchanged, 0 not built, of 2" in capsys.readouterr().out
    served = load_catalog_dir(out)  # what ENV_CATALOG=DIR serves: the build's folders, placed by its index
    assert sorted((task.id, entry.split, entry.library, entry.source) for task, entry in served) == sorted(
        (t.id, "train", "tinylib", "synthesized") for t in tasks)  # fmt: skip
    assert authoring(args) == 0
    assert "0 task(s) built, 2 unchanged, 0 not built, of 2" in capsys.readouterr().out
    # Without the recorded statements, the build writes them from the failing tests' output: the same here (tinylib's
    # failures print no object address, which differs from one run to the next).
    bare = slice_["root"] / "bare"
    bare.mkdir()
    (bare / "libraries.json").write_text((slice_["manifest"] / "libraries.json").read_text())
    write_tasks(bare / "tasks.jsonl", [t.model_copy(update={"problem_statement": ""}) for t in tasks])
    assert authoring(["catalog", "build", "--manifest", str(bare), "--out", str(slice_["root"] / "bare-built")]) == 0
    for task in tasks:
        assert read_tree(slice_["root"] / "bare-built" / task.id) == read_tree(out / task.id)


def test_the_build_checks_what_synthesis_decided_under_synthesis_s_limits_not_a_served_run_s(slice_):
    # A server allowing 0.2 s of CPU per run: not even the sandboxed pytest of the failing-test check starts in that
    # (each task's own runs were proven under the served limits when it was made; the build re-checks them all at once).
    out = slice_["root"] / "tight"
    tight = {"SANDBOX_WALL_SECONDS": "0.2", "SANDBOX_CPU_SECONDS": "1"}
    done = cli("catalog", "build", "--manifest", str(slice_["manifest"]), "--out", str(out), "--jobs", "2", cache=slice_["cache"], extra=tight)
    assert done.returncode == 0 and "2 task(s) built, 0 unchanged, 0 not built, of 2" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    for task in read_tasks(slice_["manifest"] / "tasks.jsonl"):
        assert read_tree(out / task.id) == read_tree(slice_["work"] / "tinylib-1.0" / task.id)


def test_the_same_tasks_come_out_on_a_local_ray_instance(slice_):
    out = slice_["root"] / "on-ray"
    done = cli("catalog", "build", "--manifest", str(slice_["manifest"]), "--out", str(out), "--ray", "--jobs", "2", cache=slice_["cache"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2/2 [" in done.stderr  # the progress bar
    for task in read_tasks(slice_["manifest"] / "tasks.jsonl"):
        assert read_tree(out / task.id) == read_tree(slice_["work"] / "tinylib-1.0" / task.id)


@pytest.fixture(scope="module")
def mixed(slice_) -> Path:
    """The manifest with a mined task, a task of a library whose sdist's hash differs, and one whose mutation digest
    no longer regenerates; built in two processes."""
    cache, manifest = slice_["cache"], slice_["root"] / "mixed"
    manifest.mkdir()
    libraries = json.loads((slice_["manifest"] / "libraries.json").read_text())
    data = {"1.0": {}, "1.1": {"tests/files/edges.txt": " a b \n"}}  # test data the fix's release added: its tests may read it
    pair = {v: sdist(cache, "pairlib", v, {"pairlib.py": PAIR[v], "tests/test_pairlib.py": PAIR_TESTS[v], **data[v]}) for v in PAIR}
    sdist(cache, "badhash", "1.0", {"tinylib.py": TINY, "tests/test_tinylib.py": TINY_TESTS})
    libraries += [entry("pairlib", pair, "test"), entry("badhash", {"1.0": "ab" * 32})]
    (manifest / "libraries.json").write_text(json.dumps(libraries))
    tasks = read_tasks(slice_["manifest"] / "tasks.jsonl")
    first = tasks[0]
    assert first.mutation is not None
    tampered = first.model_copy(update={"id": "tinylib-1.0-tampered", "mutation": first.mutation.model_copy(update={"digest": "0" * 16})})
    foreign = first.model_copy(update={"id": "badhash-1.0-x", "library": "badhash"})
    ids = "tests/test_pairlib.py::test_"
    mined = CatalogTask(id="pairlib-1.0-1.1", library="pairlib", source="mined", pair=ReleasePair(buggy="1.0", fixed="1.1", code=["pairlib.py"],
                        test_files=["tests/test_pairlib.py"]), fail_to_pass=[ids + "count_ignores_edges", ids + "words_collapse_spaces"],
                        pass_to_pass=[ids + "count", ids + "words"], held_out=[ids + "count_ignores_edges"], sandboxed=[ids + "count"],
                        requirements=["pytest-timeout==2.3.1"],
                        validation=ValidationRecord(runs=3, cpu_seconds=1.0, wall_seconds=2.0), difficulty="easy", difficulty_score=0.2)  # fmt: skip
    write_tasks(manifest / "tasks.jsonl", [*tasks, tampered, foreign, mined])
    done = cli("catalog", "build", "--manifest", str(manifest), "--out", str(slice_["root"] / "mixed-built"), "--jobs", "2", cache=cache)
    assert done.returncode == 1, done.stderr[-3000:]
    (manifest / "build.out").write_text(done.stdout)
    return manifest


def test_bad_entries_are_recorded_with_their_reason_and_the_build_goes_on(slice_, mixed: Path):
    out = slice_["root"] / "mixed-built"
    ledger = {r["id"]: r for r in map(json.loads, (out / ".build" / "ledger.jsonl").read_text().splitlines())}
    tasks = read_tasks(slice_["manifest"] / "tasks.jsonl")
    assert {i: r["status"] for i, r in ledger.items()} == {**{t.id: "built" for t in tasks}, "pairlib-1.0-1.1": "built",
                                                          "tinylib-1.0-tampered": "error", "badhash-1.0-x": "error"}  # fmt: skip
    actual = hashlib.sha256((slice_["cache"] / "archives" / "badhash-1.0.tar.gz").read_bytes()).hexdigest()
    assert ledger["badhash-1.0-x"]["detail"] == (
        f"SdistError: the sdist of badhash==1.0 has sha256 {actual}, not {'ab' * 32} as pinned: another file than the one pinned "
        f"(a re-upload, a tampered mirror or a wrong pin; the file: {slice_['cache'] / 'archives' / 'badhash-1.0.tar.gz'}); nothing of it is used"
    )
    assert not (slice_["cache"] / "trees" / "badhash-1.0").exists()  # nothing of it extracted
    first = tasks[0].mutation
    assert first is not None
    detail = ledger["tinylib-1.0-tampered"]["detail"]
    assert detail.startswith(f"MaterialiseError: tinylib-1.0-tampered: no mutant of tinylib.py on line {first.start} has the digest {'0' * 16} "
                             "(env.authoring.mutate gives ")  # fmt: skip
    assert detail.endswith("); the release or the operators changed") and first.digest in detail
    said = (mixed / "build.out").read_text()
    assert "3 task(s) built, 0 unchanged, 2 not built, of 5" in said and "not built: badhash-1.0-x: SdistError: the sdist" in said
    assert {t["id"] for t in json.loads((out / "catalog.json").read_text())["tasks"]} == {*(t.id for t in tasks), "pairlib-1.0-1.1"}


def test_a_mined_task_is_the_earlier_release_with_the_later_tests_less_the_held_out(slice_, mixed: Path):
    task = load_repo_task(slice_["root"] / "mixed-built" / "pairlib-1.0-1.1")
    assert task.files["pairlib.py"] == PAIR["1.0"] and task.gold_files["pairlib.py"] == PAIR["1.1"]
    assert task.grading_tests["tests/test_pairlib.py"] == PAIR_TESTS["1.1"]
    visible = task.visible_tests["tests/test_pairlib.py"]
    assert "def test_words_collapse_spaces" in visible and "test_count_ignores_edges" not in visible
    assert (
        task.held_out == ["tests/test_pairlib.py::test_count_ignores_edges"] and task.version == "1.0" and task.tags == ["mined", "pairlib"]
    )
    assert task.problem_statement.startswith("1 test of pairlib fails:\n- tests/test_pairlib.py::test_words_collapse_spaces: ")
    assert "count_ignores_edges" not in task.problem_statement
    assert [w.file for w in task.suspect] == ["pairlib.py"]
    assert task.sandboxed == ["tests/test_pairlib.py::test_count"]  # as mining placed it: the split would fail it
    assert task.grading_tests["tests/files/edges.txt"] == " a b \n" and task.requirements == ["pytest-timeout==2.3.1"]


def test_verify_proves_the_built_tasks_valid_with_their_cpu_seconds(slice_, mixed: Path, capsys):
    out = slice_["root"] / "mixed-built"
    assert authoring(["catalog", "verify", "--out", str(out), "--runs", "2"]) == 0
    said = capsys.readouterr().out
    results = [json.loads(line) for line in (out / ".build" / "verify.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in results) == sorted(t["id"] for t in json.loads((out / "catalog.json").read_text())["tasks"])
    assert all(r["valid"] and r["problems"] == "" and r["cpu_seconds"] > 0 for r in results)
    assert "3 of 3 task(s) valid, 0 invalid, 0 not decided (machine busy); CPU seconds per task: median " in said
    assert authoring(["catalog", "verify", "--out", str(out), "--sample", "1", "--seed", "4", "--runs", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2  # one task, then the summary


def test_stats_counts_the_manifest(mixed: Path, capsys):
    assert authoring(["catalog", "stats", "--manifest", str(mixed), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "tasks": 5,
        "mined": 1,
        "synthesized": 4,
        "libraries": 3,
        "by_split": {"train": 4, "validation": 0, "test": 1},
        "by_library": {
            "badhash": {"tasks": 1, "mined": 0, "synthesized": 1, "split": "train"},
            "pairlib": {"tasks": 1, "mined": 1, "synthesized": 0, "split": "test"},
            "tinylib": {"tasks": 3, "mined": 0, "synthesized": 3, "split": "train"},
        },
    }
    assert authoring(["catalog", "stats", "--manifest", str(mixed)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("5 task(s) from 3 libraries: 1 mined, 4 synthesized\nby split: train 4, validation 0, test 1\n")
    assert "1 listed library without a task: netlib" in text


# -- parts, without running anything ---------------------------------------------------------------------------------


def _task(task_id: str, library: str, failing: list[str]) -> CatalogTask:
    return CatalogTask(id=task_id, library=library, source="synthesized", mutation={"path": "m.py", "operator": "boundary", "start": 1, "end": 1,
                       "digest": "0" * 16}, fail_to_pass=failing, pass_to_pass=[], validation={"runs": 3, "cpu_seconds": 1, "wall_seconds": 1},
                       difficulty="medium", difficulty_score=0.5)  # fmt: skip


def test_no_library_gives_more_than_its_share():
    assert share_cap({f"lib{i}": 5 for i in range(9)}) == 0  # nine libraries: none can be a tenth
    assert share_cap({f"lib{i}": 5 for i in range(10)}) == 5
    assert share_cap({"big": 100, **{f"lib{i}": 3 for i in range(20)}}) == 6  # 6 <= 0.1 * (6 + 60), 7 > 0.1 * (7 + 60)
    listed = [_task(f"lib{i}-{k}", f"lib{i}", [f"t{k}"]) for i in range(20) for k in range(3)]
    offered = [_task(f"big-{k:03}", "big", [f"t{k}"]) for k in range(100)] + [_task("big-dup", "big", ["t0"]), listed[0]]
    merged, report, cap = admit(listed, offered, 0.1)
    assert cap == 6 and len(merged) == 66 and [t.id for t in merged[60:]] == [f"big-{k:03}" for k in range(6)]
    assert report["big"].model_dump() == {"offered": 101, "added": 6, "listed": 0, "duplicates": 1, "over_cap": 94}
    assert report["lib0"].model_dump() == {"offered": 1, "added": 0, "listed": 1, "duplicates": 0, "over_cap": 0}
    assert max(sum(t.library == name for t in merged) for name in {t.library for t in merged}) / len(merged) <= 0.1


def test_the_manifest_pins_each_release_it_uses():
    with pytest.raises(ValueError, match="the release 2.0 has no sdist hash in 'sdists'"):
        LibraryEntry.model_validate({"name": "x", "version": "2.0", "sdists": {"1.0": "ab" * 32}, "topic": "t", "split": "train"})
    assert slug(LibraryEntry.model_validate(entry("a b", {"1.0+local": "ab" * 32}))) == "a-b-1.0-local"


def test_the_meter_counts_a_process_forked_and_reaped_by_a_server_of_ours():
    code = "import os, sys, time\nfor line in sys.stdin:\n    pid = os.fork()\n    if pid == 0:\n        t = time.process_time()\n" \
           "        while time.process_time() - t < 0.3: pass\n        os._exit(0)\n    os.waitpid(pid, 0)\n    print('done', flush=True)\n"  # fmt: skip
    server = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("warm\n")
        server.stdin.flush()
        server.stdout.readline()
        with Meter() as cost:
            server.stdin.write("go\n")
            server.stdin.flush()
            server.stdout.readline()
    finally:
        server.kill()
        server.wait()
    assert 0.25 <= cost.cpu_seconds <= 0.6 and cost.wall_seconds >= cost.cpu_seconds - 0.05
