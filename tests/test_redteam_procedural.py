"""Red team of the procedural family (issue 47), played through real episodes:

- contamination: the public generator rebuilds any id offline, gold included. On a server with a salt, the leaked
  gold (the public task's oracle, played without debugging) and the public task's lookup table earn nothing; without
  one, the leaked gold is the oracle (the documented default: public ids are comparable, and solvable offline);
- lookup tables of the visible arguments: the recorded overfit of stochastic tasks whose held-out tests used to call
  the function as the visible ones did (0.36 before) grades exactly 0.0, and so does every family's own canary.
"""

from __future__ import annotations

import pytest

from env.families.procedural.family import PROCEDURAL
from env.families.procedural.salt import ProceduralSalt
from env.families.procedural.task import ProceduralTask, TaskCache
from env.models import DebugAction
from env.runtime import Runtime

SALT = "a red team's view of an operator's salt: unknown to the attacker"


def play(runtime: Runtime, task: ProceduralTask, actions: list[dict]) -> float:
    episode = PROCEDURAL.episode(runtime, task, seed=5, episode_id=f"redteam-{task.id}")
    try:
        obs = episode.observe(0.0, {})
        for action in actions:
            if episode.done:
                break
            obs = episode.step(DebugAction(**action))
        if not episode.done:
            obs = episode.step(DebugAction(action_type="submit"))
    finally:
        episode.close()
    assert obs.done and obs.grader_score is not None
    return obs.grader_score


@pytest.fixture(scope="module")
def caches():
    return TaskCache(8)


@pytest.mark.parametrize("task_id", ["proc-easy-test-1", "proc-easy-ood-2"])
def test_the_leaked_public_gold_earns_nothing_on_a_salted_server(runtime, caches, task_id):
    leaked = caches.get(task_id, ProceduralSalt.public())  # what anyone rebuilds offline with the public code
    served = caches.get(task_id, ProceduralSalt(SALT))
    assert served.fault != leaked.fault
    assert play(runtime, served, PROCEDURAL.oracle_actions(leaked)) == 0.0
    if leaked.overfit_patch:  # the public task's table of its visible calls, too
        assert play(runtime, served, PROCEDURAL.overfit_actions(leaked) or []) == 0.0


def test_without_a_salt_the_leaked_gold_is_the_oracle(runtime, caches):
    """The default's documented limit: a public id is solvable offline (so its results are comparable, not secret)."""
    public = caches.get("proc-easy-test-1", ProceduralSalt.public())
    assert play(runtime, public, PROCEDURAL.oracle_actions(public)) > 0.9


@pytest.mark.parametrize("task_id", ["proc-easy-ood-1", "proc-medium-ood-2"])
def test_a_lookup_table_of_the_visible_arguments_earns_nothing(runtime, caches, task_id):
    task = caches.get(task_id, ProceduralSalt.public())
    actions = PROCEDURAL.overfit_actions(task)
    assert task.bug == "stochastic_bug" and actions is not None  # a table of the visible calls exists and is played
    assert play(runtime, task, actions) == 0.0
    assert PROCEDURAL.overfit_ceiling(0.93) == 0.0  # what the evaluation's canary check now holds every table to
