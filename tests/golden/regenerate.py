"""Rewrite the golden files of tests/golden/ from the code as it is now.

    .venv/bin/python -m tests.golden.regenerate            # both files
    .venv/bin/python -m tests.golden.regenerate --check    # compare only; exit 1 and list what differs

Only for a change of behaviour that is meant (a new task, a new reward term, another generator):
review the diff of tests/golden/*.json and commit it with the change. A refactoring must leave both
files as they are. Runs with the test suite's secret and seeds, in the sandbox this host gives, as
the tests do; takes about two and a half minutes on 2 cores (the sandbox runs of ~220 episodes).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from env.authoring.degenerate import degenerate_policies
from env.authoring.oracle import oracle_actions
from env.families.catalog import TaskCatalog
from env.runtime import Runtime
from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from tests.golden import pins

KINDS = ("wrong", "stuffed", "correct")  # the hypothesis kinds the red-team suite plays on classic tasks


def test_runtime() -> Runtime:
    """The runtime tests/conftest.py builds: the same sandbox limits and the suite's fixed secret."""
    from tests.conftest import TEST_SECRET

    isolation = probe_isolation(disabled=set(), allow_unsafe=False)
    if not isolation.can_execute:
        sys.exit(f"this host cannot run sandboxed code: {isolation.reason}")
    return Runtime(TaskCatalog.builtin(), Sandbox(Limits(), isolation), workers=16, secret=TEST_SECRET)


def procedural(runtime: Runtime) -> dict[str, Any]:
    return {
        "ids": {task_id: pins.procedural_record(runtime, task_id) for task_id in pins.PROCEDURAL_IDS},
        "generated": {pins.generated_key(p): pins.generated_record(p) for p in pins.GENERATED},
    }


def rewards(runtime: Runtime) -> dict[str, Any]:
    from tests import test_reward_integrity as integrity  # the tasks the red-team suite plays

    catalog = runtime.catalog
    oracle = {task_id: pins.played(pins.play(runtime, task_id, oracle_actions(catalog.get(task_id)))[1]) for task_id in pins.oracle_ids(catalog)}
    degenerate: dict[str, dict[str, Any]] = {}
    for task_id in integrity.CLASSIC_IDS:
        degenerate[task_id] = {kind: {name: pins.played(pins.play(runtime, task_id, actions)[1])
                                      for name, actions in degenerate_policies(catalog.get(task_id), kind).items()} for kind in KINDS}
    for task_id in integrity.REPO_IDS + integrity.PROCEDURAL_SAMPLE:
        degenerate[task_id] = {"wrong": {name: pins.played(pins.play(runtime, task_id, actions)[1])
                                         for name, actions in degenerate_policies(catalog.get(task_id)).items()}}
    return {"ids": catalog.ids(), "seed": pins.SEED, "oracle": oracle, "degenerate": degenerate}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the golden files; write nothing")
    args = parser.parse_args(argv)
    runtime = test_runtime()
    failed = False
    for name, build in (("procedural.json", procedural), ("rewards.json", rewards)):
        started = time.monotonic()
        text = pins.dump(build(runtime))
        path = pins.HERE / name
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        took = f"{time.monotonic() - started:.1f} s"
        if args.check:
            failed |= text != old
            print(f"{'unchanged' if text == old else 'DIFFERS'}  tests/golden/{name}  ({took})")
        else:
            path.write_text(text, encoding="utf-8")
            print(f"{'unchanged' if text == old else 'rewritten'}  tests/golden/{name}  ({took})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
