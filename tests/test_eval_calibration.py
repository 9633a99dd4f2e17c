"""Calibrating the catalog (docs/catalog.md): which tasks ``python -m env.eval run`` plays when it names none
(``--split``, ``--library``, ``--source``, ``--per-library``: a pure function of the server's listing, so a calibration
over a catalog split is the same sample on every run), and ``python -m env.eval calibrate``'s table and its check of
the difficulty estimates against the solve rates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from env.authoring.catalog.manifest import CatalogTask, Mutation, ReleasePair, ValidationRecord, write_tasks
from env.eval.calibrate import table
from env.eval.run import Selection, evaluated

LISTING = {
    "easy": {"id": "easy", "split": "test"},
    "proc-train-1": {"id": "proc-train-1", "split": "train"},
    **{f"attrs-{i}": {"id": f"attrs-{i}", "split": "train", "library": "attrs", "source": "synthesized"} for i in range(5)},
    **{f"parse-{i}": {"id": f"parse-{i}", "split": "test", "library": "parse", "source": "synthesized"} for i in range(4)},
    "parse-1_21_0-parse": {"id": "parse-1_21_0-parse", "split": "test", "library": "parse", "source": "mined"},
    "old": {"id": "old"},  # a server from before the splits lists the test split's tasks only
}


def test_the_default_is_the_test_split():
    assert evaluated(LISTING) == ["easy", "parse-0", "parse-1", "parse-2", "parse-3", "parse-1_21_0-parse", "old"]


def test_a_split_a_library_and_a_source():
    assert evaluated(LISTING, Selection(split="train")) == ["proc-train-1", *(f"attrs-{i}" for i in range(5))]
    assert evaluated(LISTING, Selection(split="train", libraries=("attrs",))) == [f"attrs-{i}" for i in range(5)]
    assert evaluated(LISTING, Selection(source="mined")) == ["parse-1_21_0-parse"]
    assert evaluated(LISTING, Selection(split="validation")) == []


def test_per_library_is_a_sample_drawn_by_the_seed_the_same_every_time():
    two = evaluated(LISTING, Selection(split="train", per_library=2))
    assert len([t for t in two if t.startswith("attrs-")]) == 2 and "proc-train-1" in two  # a built-in task: its own group
    assert two == evaluated(LISTING, Selection(split="train", per_library=2))
    draws = {tuple(evaluated(LISTING, Selection(split="train", per_library=2, seed=s))) for s in range(10)}
    assert len(draws) > 1  # another seed, another sample
    assert evaluated(LISTING, Selection(split="train", per_library=9)) == evaluated(LISTING, Selection(split="train"))


def test_a_library_not_served_is_named_with_those_that_are():
    with pytest.raises(SystemExit, match="no task of library atrs is served; libraries: attrs, parse"):
        evaluated(LISTING, Selection(libraries=("atrs",)))


# -- calibrate: the table per library and the check of the difficulty estimates ------------------------------------


def _task(task_id: str, library: str, level: str, score: float, cpu: float, source: str = "synthesized") -> CatalogTask:
    planted = {"mutation": Mutation(path="m.py", operator="negate", start=1, end=1, digest="0" * 16)} if source == "synthesized" else {
        "pair": ReleasePair(buggy="1.0", fixed="1.1", code=["m.py"], test_files=["t.py"])}  # fmt: skip
    return CatalogTask(id=task_id, library=library, source=source, fail_to_pass=["t.py::test_a"], pass_to_pass=[], difficulty=level,
                       difficulty_score=score, validation=ValidationRecord(runs=3, cpu_seconds=cpu, wall_seconds=cpu * 2), **planted)  # fmt: skip


@pytest.fixture()
def manifest(tmp_path: Path) -> Path:
    entries = [{"name": n, "version": "1.0", "sdists": {"1.0": "a" * 64}, "topic": "text", "split": s} for n, s in (("alib", "validation"), ("blib", "test"), ("clib", "train"))]
    entries[1]["synthesis"] = {"valid": 1, "tried": 4}  # recorded by catalog synthesize: no work folder needed
    entries[0]["synthesis"] = {"valid": 9, "tried": 10}  # an older record: the work folder's ledger given wins
    (tmp_path / "libraries.json").write_text(json.dumps(entries))
    write_tasks(tmp_path / "tasks.jsonl", [
        _task("a1", "alib", "easy", 0.1, 1.0), _task("a2", "alib", "medium", 0.5, 2.0), _task("a3", "alib", "hard", 0.9, 4.0),
        _task("b1", "blib", "easy", 0.2, 1.5, "mined"), _task("b2", "blib", "hard", 0.8, 3.0),
    ])  # fmt: skip
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "libraries.jsonl").write_text(
        '{"library": "alib", "identity": "x", "status": "synthesized", "valid": 3, "tried": 12}\n'
        '{"library": "clib", "identity": "y", "status": "failed"}\n{"library": "blib", "ident'  # a line a stop cut short
    )
    return tmp_path


def _episodes(solved: dict[str, list[bool]], agent: str = "heuristic@default") -> list[dict[str, object]]:
    return [{"agent": agent, "task_id": t, "run": i, "solved": s} for t, runs in solved.items() for i, s in enumerate(runs)]


def test_the_table_per_library_and_an_estimate_that_orders_the_outcomes(manifest):
    results = _episodes({"a1": [True, True], "a2": [True, False], "a3": [False, False], "b1": [True], "b2": [False]})
    assert table(manifest, results, manifest / "work").splitlines() == [
        "| library | split | mined | synthesized | valid share | validation CPU s (median) | solved / played | solve rate | mean difficulty score |",
        "|---|---|---|---|---|---|---|---|---|",
        "| alib | validation | 0 | 3 | 25% (3/12) | 2.0 | 1.5 / 3 | 50% | 0.50 |",
        "| blib | test | 1 | 1 | 25% (1/4) | 2.2 | 1 / 2 | 50% | 0.50 |",
        "",
        "solve rate by estimated difficulty: easy 100% of 2, medium 50% of 1, hard 0% of 2",
        "AUC of the difficulty score for an unsolved task: 1.00 over 5 task(s) (0.5: no information)",
    ]
    assert table(manifest, results).splitlines()[2] == "| alib | validation | 0 | 3 | 90% (9/10) | 2.0 | 1.5 / 3 | 50% | 0.50 |"  # the manifest's


def test_an_estimate_backwards_and_the_edges(manifest):
    backwards = _episodes({"a1": [False], "a3": [True]})
    assert table(manifest, backwards).splitlines()[-1] == "AUC of the difficulty score for an unsolved task: 0.00 over 2 task(s) (0.5: no information)"
    assert table(manifest, _episodes({"a1": [True], "a2": [True]})).splitlines()[-1] == "AUC: undefined, the agent solved every task played"
    assert table(manifest, _episodes({"elsewhere": [True]})).splitlines()[-1] == (
        "no episode of the results plays a task of the manifest: nothing to calibrate against"
    )
    two_arms = _episodes({"a1": [True]}) + _episodes({"a1": [False]}, "random@default")
    with pytest.raises(ValueError, match=r"the results hold several arms \(heuristic@default, random@default\): name one with --agent"):
        table(manifest, two_arms)
    assert "AUC: undefined, the agent solved no task played" in table(manifest, two_arms, agent="random@default")
