"""``catalog mined DIR``: the bugs ``python -m env.authoring mine --out DIR`` found join the manifest (docs/catalog.md).

Each pair's releases get pinned by the sha256 of their sdists (made here, in the cache ``env.authoring.sdist`` reads:
no download); a task whose library the manifest lacks, or whose release's sdist is not the one pinned, is recorded
with its reason and the others still join; the share cap holds; a second run adds nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from env.authoring.__main__ import main as authoring
from env.authoring.catalog.manifest import CatalogTask, ReleasePair, ValidationRecord, read_libraries, read_tasks, write_tasks
from tests.test_catalog import PAIR, PAIR_TESTS, entry, sdist

IDS = "tests/test_pairlib.py::test_"


def mined(task_id: str, library: str, buggy: str = "1.0", fixed: str = "1.1") -> CatalogTask:
    return CatalogTask(
        id=task_id, library=library, source="mined",
        pair=ReleasePair(buggy=buggy, fixed=fixed, code=["pairlib.py"], test_files=["tests/test_pairlib.py"]),
        fail_to_pass=[IDS + "count_ignores_edges", IDS + "words_collapse_spaces"], pass_to_pass=[IDS + "count", IDS + "words"],
        held_out=[IDS + "count_ignores_edges"], validation=ValidationRecord(runs=3, cpu_seconds=1.0, wall_seconds=2.0),
        difficulty="easy", difficulty_score=0.2,
    )  # fmt: skip


@pytest.fixture()
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    cache, manifest, found = tmp_path / "sdists", tmp_path / "manifest", tmp_path / "mined"
    monkeypatch.setenv("ENV_SDIST_CACHE", str(cache))
    digests = {v: sdist(cache, "pairlib", v, {"pairlib.py": PAIR[v], "tests/test_pairlib.py": PAIR_TESTS[v]}) for v in PAIR}
    other = {v: sdist(cache, "otherlib", v, {"pairlib.py": PAIR[v], "tests/test_pairlib.py": PAIR_TESTS[v]}) for v in PAIR}
    manifest.mkdir()
    libraries = [entry("pairlib", {"1.1": digests["1.1"]}, "test"), entry("otherlib", {"1.0": other["1.0"], "1.1": "0" * 64})]
    (manifest / "libraries.json").write_text(json.dumps(libraries))
    found.mkdir()
    # two bugs the same later test caught (two groups of one pair): two bugs, not a duplicate as two such mutants are
    write_tasks(found / "mined.jsonl", [mined("pairlib-1_1-pairlib", "pairlib"), mined("pairlib-1_1-words", "pairlib"),
                                        mined("otherlib-1_1-pairlib", "otherlib"), mined("gonelib-1_1-pairlib", "gonelib")])  # fmt: skip
    return {"manifest": manifest, "mined": found, "digests": digests}


def test_mined_tasks_join_with_their_releases_pinned_and_bad_ones_are_recorded(setup, capsys):
    manifest = setup["manifest"]
    args = ["catalog", "mined", str(setup["mined"]), "--manifest", str(manifest), "--max-share", "1"]
    assert authoring(args) == 1  # two tasks could not join
    said = capsys.readouterr().out.splitlines()
    assert said[0] == (
        "not offered: gonelib-1_1-pairlib: its library gonelib is not in libraries.json: survey it first "
        "(python -m env.authoring.catalog.survey gonelib==VERSION)"
    )
    assert said[1].startswith("not offered: otherlib-1_1-pairlib: the sdist of otherlib==1.1 has sha256 ") and f"not {'0' * 64} as pinned" in said[1]
    assert said[2:] == [
        f"pinned pairlib==1.0: sha256 {setup['digests']['1.0']}",
        "pairlib: 2 mined task(s): 2 added, 0 already listed, 0 duplicate(s), 0 over the cap",
        "the manifest lists 2 task(s); a library may give at most 2 (100% of the catalog)",
    ]
    assert [t.id for t in read_tasks(manifest / "tasks.jsonl")] == ["pairlib-1_1-pairlib", "pairlib-1_1-words"]
    pairlib = next(e for e in read_libraries(manifest / "libraries.json") if e.name == "pairlib")
    assert pairlib.sdists == {"1.0": setup["digests"]["1.0"], "1.1": setup["digests"]["1.1"]} and pairlib.split == "test"
    # Again: the task is listed already, nothing is pinned twice, the manifest is unchanged.
    before = (manifest / "tasks.jsonl").read_text(), (manifest / "libraries.json").read_text()
    assert authoring(args) == 1
    assert "pairlib: 2 mined task(s): 0 added, 2 already listed, 0 duplicate(s), 0 over the cap" in capsys.readouterr().out
    assert ((manifest / "tasks.jsonl").read_text(), (manifest / "libraries.json").read_text()) == before


def test_the_share_cap_holds_for_mined_tasks(setup, capsys):
    """Under the default 10% no library of a one-library catalog may give a task: the mined task waits in its folder."""
    assert authoring(["catalog", "mined", str(setup["mined"]), "--manifest", str(setup["manifest"])]) == 1
    assert "pairlib: 2 mined task(s): 0 added, 0 already listed, 0 duplicate(s), 2 over the cap" in capsys.readouterr().out
    assert read_tasks(setup["manifest"] / "tasks.jsonl") == []


def test_a_folder_without_mined_tasks_is_a_clear_error(setup, tmp_path, capsys):
    assert authoring(["catalog", "mined", str(tmp_path / "nowhere"), "--manifest", str(setup["manifest"])]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 'nowhere'} holds no mined.jsonl: it is not the --out folder of `python -m env.authoring mine`\n"
    )


def test_a_mutant_screened_by_other_lines_than_its_own_regenerates():
    """A wrong default is an edit of the signature, screened by the body lines that read the parameter: the build finds
    it by its line and digest all the same (9 of 630 synthesized tasks were 'no mutant ... on line N' before)."""
    from types import SimpleNamespace

    from env.authoring.catalog.manifest import Mutation
    from env.authoring.catalog.materialise import find_mutant
    from env.authoring.mutate import mutants

    source = "def pad(text, width=8, fill=' '):\n    if len(text) >= width:\n        return text\n    return text + fill * (width - len(text))\n"
    signature = [m for m in mutants(source, "m.py") if m.operator == "wrong_default"]
    assert signature and all(m.start == 1 for m in signature)
    for planted in signature:
        task = mined("m-1.0-x", "m").model_copy(update={"source": "synthesized", "pair": None, "mutation": Mutation(
            path="m.py", operator=planted.operator, start=planted.start, end=planted.end, digest=planted.digest)})  # fmt: skip
        assert find_mutant(task, SimpleNamespace(files={"m.py": source}, slug="m-1.0")).source == planted.source  # type: ignore[arg-type]
