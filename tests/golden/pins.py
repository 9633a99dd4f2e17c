"""Pinned behaviour: what the golden files in this folder hold, how it is computed, how it is compared.

    record = procedural_record(runtime, "proc-hard-ood-1")   # sha256 of each part of a generated task
    outcome = played(observations)                            # per-step rewards, final grade and breakdown
    assert_pinned("rewards.json", ["oracle", "easy"], outcome)

``procedural.json`` holds, for a spread of procedural ids (and two tasks made by ``generate`` with the
one bug type no split draws), a sha256 of each part of the task an agent or a grader sees: the
source files, the test files, the gold patch, the task's data, the facts the log model uses, the
first observation, and the logs that ``analyze_logs`` shows over an episode of seed ``LOG_SEED``.
``rewards.json`` holds the exact per-step rewards, final grade and final breakdown of the oracle on
every listed task and of every degenerate policy the red-team suite plays (seed 1, the suite's
``TEST_SECRET``). The test suite compares against them exactly; ``python -m tests.golden.regenerate``
rewrites them, and is for a change of behaviour that is meant, never to make a refactor pass.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from env.families.catalog import TaskCatalog
from env.families.registry import FAMILIES
from env.models import DebugAction
from env.project import source_only
from env.runtime import Runtime
from env.server.environment import DebugEnvironment

HERE = Path(__file__).resolve().parent
REGENERATE = ".venv/bin/python -m tests.golden.regenerate"

# Every difficulty x every split, several indices: both bug types of every split where the first
# indices hold them, every kind of building block (25 of 25), faults in 17 different functions.
PROCEDURAL_IDS = [
    "proc-easy-train-0", "proc-easy-train-3", "proc-easy-test-0", "proc-easy-test-3", "proc-easy-ood-0", "proc-easy-ood-1",
    "proc-medium-train-3", "proc-medium-test-0", "proc-medium-test-1", "proc-medium-ood-0",
    "proc-hard-train-2", "proc-hard-test-0", "proc-hard-test-2", "proc-hard-ood-1", "proc-hard-ood-3",
    "proc-extreme-train-1", "proc-extreme-test-0", "proc-extreme-test-1", "proc-extreme-ood-1", "proc-extreme-ood-3",
]
# dependency_error is in no split, so no id names it: two tasks made directly (n_files, bug, noise, drift, seed).
GENERATED = [(5, "dependency_error", 0.3, 0.15, 7), (12, "dependency_error", 0.5, 0.3, 8)]
LOG_SEED = 1
LOG_STEPS = 6  # analyze_logs steps: the logs drift between steps
SEED = 1  # every pinned episode's seed (tests/test_reward_integrity.py's play)


def oracle_ids(catalog: TaskCatalog) -> list[str]:
    """The listed tasks whose oracle rewards are pinned: every one, but of a family listing many seeds of one generated
    task only those a whole-server check plays (``Family.spot_checked``: the race family's one per pattern and domain)."""
    by_family: dict[str, list[str]] = {}
    for task_id, family, _ in catalog.listing():  # the listing's family: no task generated to learn it
        by_family.setdefault(family, []).append(task_id)
    kept = {t for family, ids in by_family.items() for t in FAMILIES[family].spot_checked(ids)}
    return [t for t in catalog.ids() if t in kept]


def sha(value: Any) -> str:
    """sha256 of a canonical JSON form (sorted keys, no whitespace, UTF-8)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- playing an episode -----------------------------------------------------------------------------


def play(runtime: Runtime, task_id: str, actions: list[dict], seed: int = SEED) -> tuple[DebugEnvironment, list]:
    """Every observation of an episode that plays ``actions`` (then gives up if it is still open)."""
    env = DebugEnvironment(runtime)
    observations = [env.reset(task_id=task_id, seed=seed)]
    for action in actions:
        observations.append(env.step(DebugAction(**action)))
        if observations[-1].done:
            break
    if not observations[-1].done:
        observations.append(env.step(DebugAction(action_type="give_up")))
    env.close()
    return env, observations


def played(observations: list) -> dict[str, Any]:
    """What is pinned of an episode: every step's reward, the final grade and the final breakdown."""
    last = observations[-1]
    return {"rewards": [o.reward for o in observations[1:]], "grade": last.grader_score, "breakdown": dict(last.breakdown)}


# -- generated tasks --------------------------------------------------------------------------------


def _first_observation(obs: Any) -> dict[str, Any]:
    return obs.model_dump(mode="json", exclude={"episode_id"})  # a fresh uuid per episode


def procedural_record(runtime: Runtime, task_id: str) -> dict[str, str]:
    """The pinned parts of a procedural task, each hashed on its own (a failure names the part)."""
    task = runtime.catalog.get(task_id)
    env = DebugEnvironment(runtime)
    first = env.reset(task_id=task_id, seed=LOG_SEED)
    logs = []
    for _ in range(LOG_STEPS):
        obs = env.step(DebugAction(action_type="analyze_logs"))
        logs.append({"logs": obs.logs, "tool_output": obs.tool_output, "error": obs.error, "reward": obs.reward})
    env.close()
    modules = len([p for p in task.files if p.startswith(task.fault.split("/")[0] + "/") and not p.endswith("__init__.py")])
    return {
        "about": f"{task.bug}, {modules} modules, noise {task.noise}, drift {task.drift}, fault {task.fault}",
        "files": sha(source_only(task.files)),
        "tests": sha(task.visible_tests),
        "gold_patch": sha(task.gold_patch),
        "task": sha(task.model_dump(mode="json", exclude={"folder", "functions", "fault"})),
        "summary": sha(task.summary()),
        "facts": sha({"fault": task.fault, "functions": [f.model_dump(mode="json") for f in task.functions],
                      "neighbours": task.neighbours(), "relevant_files": task.relevant_files()}),
        "first_observation": sha(_first_observation(first)),
        "logs": sha(logs),
    }


def generated_key(params: tuple) -> str:
    n_files, bug, noise, drift, seed = params
    return f"generate({n_files}, {bug!r}, noise={noise}, drift={drift}, seed={seed})"


def generated_record(params: tuple) -> dict[str, str]:
    from env.families.procedural.generator import generate

    task = generate(*params)
    return {
        "about": f"{task.bug}, {task.n_files} modules, fault {task.fault}",
        "files": sha(task.files),
        "gold_files": sha(task.gold_files),
        "task": sha(task.model_dump(mode="json", exclude={"files", "gold_files", "functions", "validation"})),
        "facts": sha([f.model_dump(mode="json") for f in task.functions]),
    }


# -- the golden files -------------------------------------------------------------------------------


@functools.cache
def golden(name: str) -> dict[str, Any]:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


def dump(data: dict[str, Any]) -> str:
    """The golden files' form: sorted keys, one item a line, so that a diff reads."""
    return json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def pinned(name: str, path: list[str]) -> Any:
    node: Any = golden(name)
    for key in path:
        if not isinstance(node, dict) or key not in node:
            raise AssertionError(f"tests/golden/{name} pins nothing at {' / '.join(path)} (stopped at {key!r}).\n{_advice()}")
        node = node[key]
    return node


def _advice() -> str:
    return (f"Run `{REGENERATE}` ONLY if this change of behaviour is intended (then review and commit the diff of tests/golden/); "
            "a refactoring (moving or splitting code) must change nothing here.")


def _differences(expected: Any, actual: Any, where: str = "") -> list[str]:
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key in sorted(set(expected) | set(actual)):
            here = f"{where}.{key}" if where else str(key)
            if key not in actual:
                out.append(f"{here}: pinned {expected[key]!r}, now missing")
            elif key not in expected:
                out.append(f"{here}: not pinned, now {actual[key]!r}")
            else:
                out += _differences(expected[key], actual[key], here)
        return out
    if expected != actual or type(expected) is not type(actual):
        return [f"{where or 'value'}: pinned {expected!r}, now {actual!r}"]
    return []


def assert_pinned(name: str, path: list[str], actual: Any) -> None:
    """``actual`` equals what ``tests/golden/<name>`` pins at ``path``, exactly; else every difference, named."""
    expected = pinned(name, path)
    differences = _differences(expected, actual)
    if differences:
        shown = "\n  ".join(d if len(d) < 400 else d[:400] + " ..." for d in differences[:20])
        more = f"\n  ... and {len(differences) - 20} more" if len(differences) > 20 else ""
        raise AssertionError(f"behaviour pinned in tests/golden/{name} at {' / '.join(path)} changed:\n  {shown}{more}\n{_advice()}")
