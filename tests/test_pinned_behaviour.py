"""Pinned behaviour: generated procedural tasks byte for byte and the oracle's exact rewards on every task.

Step 0 of moving and splitting code: whatever moves (task families, the episode loop, the procedural
building blocks, task data), these stay exactly as tests/golden/ pins them. The degenerate policies'
exact rewards are pinned where tests/test_reward_integrity.py already plays them. A failure names the
task and the part that changed; `.venv/bin/python -m tests.golden.regenerate` rewrites the golden
files, and is only for a change of behaviour that is meant.
"""

from __future__ import annotations

import pytest

from env.authoring.oracle import oracle_actions
from env.families.procedural.blocks import KINDS
from env.families.procedural.model import PRESETS, SPLITS
from tests.golden import pins
from tests.helpers import CATALOG


def test_the_golden_files_are_as_the_regeneration_writes_them():
    for name in ("procedural.json", "rewards.json"):
        text = (pins.HERE / name).read_text(encoding="utf-8")
        assert text == pins.dump(pins.golden(name)), f"tests/golden/{name} was edited by hand; run `{pins.REGENERATE}`"


def test_the_pinned_ids_span_every_difficulty_split_bug_type_and_building_block():
    procedural = pins.golden("procedural.json")
    assert sorted(procedural["ids"]) == sorted(pins.PROCEDURAL_IDS)
    assert sorted(procedural["generated"]) == sorted(pins.generated_key(p) for p in pins.GENERATED)
    assert {tuple(t.split("-")[1:3]) for t in pins.PROCEDURAL_IDS} == {(level, split) for level in PRESETS for split in SPLITS}
    tasks = [CATALOG.get(t) for t in pins.PROCEDURAL_IDS]
    assert {t.bug for t in tasks} == {bug for bugs in SPLITS.values() for bug in bugs}
    kinds = {path.rsplit("/", 1)[-1].removesuffix(".py") for t in tasks for path in t.source_files}
    assert set(KINDS) <= kinds


@pytest.mark.parametrize("task_id", pins.PROCEDURAL_IDS)
def test_a_generated_task_and_its_logs_are_as_pinned(runtime, task_id):
    pins.assert_pinned("procedural.json", ["ids", task_id], pins.procedural_record(runtime, task_id))


@pytest.mark.parametrize("params", pins.GENERATED, ids=pins.generated_key)
def test_a_task_made_by_generate_is_as_pinned(params):
    pins.assert_pinned("procedural.json", ["generated", pins.generated_key(params)], pins.generated_record(params))


def test_the_registry_lists_the_pinned_tasks_in_order():
    assert CATALOG.ids() == pins.pinned("rewards.json", ["ids"]), f"the listed tasks changed; run `{pins.REGENERATE}` only if that is meant"
    assert sorted(pins.pinned("rewards.json", ["oracle"])) == sorted(pins.oracle_ids(CATALOG))


@pytest.mark.parametrize("task_id", pins.oracle_ids(CATALOG))
def test_the_oracle_earns_exactly_the_pinned_rewards(runtime, task_id):
    observations = pins.play(runtime, task_id, oracle_actions(CATALOG.get(task_id)))[1]
    assert [o.error for o in observations if o.error] == []
    pins.assert_pinned("rewards.json", ["oracle", task_id], pins.played(observations))
