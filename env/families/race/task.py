"""A race-family task as the classic verdict serves it: a generated module, its tests and its concurrency check.

    task = race_task("race-check-then-act-connection-pool-3")     # or None for an id that names no race task
    task.buggy_source, task.test_source, task.tests              # what the agent sees, and the tests run on it
    task.concurrency                                             # the check (env.families.race.check.RaceCheck)
    task.summary()["pattern"], task.summary()["race_split"]      # check_then_act, train

An id is ``race-<pattern>-<domain>-<seed>`` (dashes for underscores): the same id, under the same salt
(``ENV_PROCEDURAL_SALT``, unset: the public tasks), is the same task. The splits: every seed of the combinations in
``OOD`` (pattern x domain pairs no other split has, each pattern and each domain seen elsewhere) is ``ood``; the
others by seed (``seed % 12``: 0-7 train, 8-9 validation, 10-11 test). ``LISTED`` seeds of each combination are
listed; any other seed of a combination is made on request.
"""

from __future__ import annotations

import linecache
import random
import re
from collections.abc import Callable
from functools import cached_property
from typing import Any, Literal

from env.families.base import TASKS_DIR
from env.families.classic.concurrency import ConcurrencyCheck, StressSpec
from env.families.classic.task import TaskSpec
from env.families.procedural.salt import ProceduralSalt
from env.families.race import cases
from env.families.race.check import RaceCheck
from env.families.race.generator import COMBINATIONS, RaceTask, generate
from env.graders.hypothesis import ClaimPhrases, HypothesisRules

RaceSplit = Literal["train", "validation", "test", "ood"]
LISTED = 12  # seeds listed per combination: 19 combinations, 228 tasks
OOD: frozenset[tuple[str, str]] = frozenset({
    ("lost_update", "rate_limiter"), ("check_then_act", "inventory"), ("get_then_set", "session_store"),
    ("atomicity_across_calls", "id_allocator"),
})  # fmt: skip
ID = re.compile(r"^race-(?P<pattern>[a-z-]+?)-(?P<domain>accounts|inventory|rate-limiter|connection-pool|cache|id-allocator|job-queue|session-store)-(?P<seed>\d{1,5})$")


class PatternInfo:
    def __init__(self, difficulty: Literal["easy", "medium", "hard"], mechanism: list[str], symptom: str, words: list[str], phrase: str):
        self.difficulty, self.mechanism, self.symptom, self.words, self.phrase = difficulty, mechanism, symptom, words, phrase


WRONG_RESULTS = "it sometimes gives results that no one-at-a-time use of it could give"
PATTERNS: dict[str, PatternInfo] = {
    "lost_update": PatternInfo("easy", ["race_condition"], WRONG_RESULTS, ["lost update", "read[- ]modify[- ]write", "not atomic"], "loses updates: the read-modify-write is not atomic"),
    "check_then_act": PatternInfo("easy", ["race_condition"], WRONG_RESULTS, ["check[- ]then[- ]act", "toctou", "check(ed)? (is )?outside", "stale check", "the check and the act"], "checks outside the lock, then acts on a stale check"),
    "get_then_set": PatternInfo("easy", ["race_condition"], WRONG_RESULTS, ["get[- ]then[- ]set", "check[- ]then[- ]act", "not atomic", "toctou"], "reads then writes the dict in two steps that are not atomic"),
    "double_checked_init": PatternInfo("medium", ["race_condition"], WRONG_RESULTS, ["double[- ]checked", "lazy", "load(ed|s)? twice", "not atomic"], "double-checked lazy loading lets two threads load the same key"),
    "two_field_invariant": PatternInfo("medium", ["race_condition"], WRONG_RESULTS, ["invariant", "two steps", "not atomic", "intermediate"], "updates two fields in two steps, so others see the invariant broken"),
    "mutation_during_iteration": PatternInfo("medium", ["race_condition"], WRONG_RESULTS, ["iterat", "changed size", "mutat", "not atomic"], "iterates while another thread mutates the dict"),
    "publish_before_init": PatternInfo("medium", ["race_condition", "wrong_order"], WRONG_RESULTS, ["publish", "before (it is )?(initiali[sz]ed|ready|complete)", "half[- ]built", "not atomic"], "publishes the job before it is fully initialised"),
    "lock_order_deadlock": PatternInfo("hard", ["wrong_order"], "it sometimes stops answering for good", ["deadlock", "lock order", "opposite order", "different order"], "takes the two locks in the opposite order, a deadlock"),
    "atomicity_across_calls": PatternInfo("easy", ["race_condition"], WRONG_RESULTS, ["two calls", "separate calls", "not atomic", "check[- ]then[- ]act", "between the calls"], "checks in one call and acts in another, not atomic"),
    "missed_signal": PatternInfo("hard", ["race_condition", "wrong_condition"], "it sometimes hands out nothing, or waits for good", ["missed (signal|wake|notif)", "spurious", "predicate", "while loop", "wait(s|ed)? (only )?once", r"\bif\b.*\bwait"], "waits once instead of re-checking the predicate in a loop"),
}
# What names any race (every pattern but the deadlock), and the claims that name the other kind of bug.
RACE_WORDS = [r"\brace\b", "race condition", "atomic", "interleav", "not (held|locked)", "without (the |a )?lock"]
RACE_CLAIMS = [r"\brace\b", "race condition", "lost update", "read[- ]modify[- ]write", "check[- ]then[- ]act", "toctou"]
DEADLOCK_CLAIMS = [r"\bdeadlock", "lock order"]
DOMAIN_STORY = {
    "accounts": "keeps a bank's account balances",
    "inventory": "tracks stock and reservations of a shop's items",
    "rate_limiter": "limits how many requests a service accepts",
    "connection_pool": "hands out a service's database connections",
    "cache": "caches values a service loads slowly",
    "id_allocator": "hands out unique ids",
    "job_queue": "queues jobs between a service's producers and workers",
    "session_store": "keeps users' login sessions",
}


def race_split(pattern: str, domain: str, seed: int) -> RaceSplit:
    if (pattern, domain) in OOD:
        return "ood"
    slot = seed % LISTED
    return "train" if slot < 8 else "validation" if slot < 10 else "test"


def task_id(pattern: str, domain: str, seed: int) -> str:
    return f"race-{pattern.replace('_', '-')}-{domain.replace('_', '-')}-{seed}"


def listed_ids() -> list[tuple[str, RaceSplit]]:
    return [(task_id(p, d, seed), race_split(p, d, seed)) for p, d in COMBINATIONS for seed in range(LISTED)]


class RaceTaskSpec(TaskSpec):
    """A generated task: its texts come from the generator, not a folder (``folder`` names where it would be written)."""

    pattern: str
    domain: str
    seed: int
    race_split: RaceSplit
    salt: str = "public"
    generated: RaceTask

    @cached_property
    def buggy_source(self) -> str:
        return self.generated.buggy

    @cached_property
    def gold_source(self) -> str:
        return self.generated.gold

    @cached_property
    def test_source(self) -> str:
        return cases.visible_tests(self.generated.model, self.generated.cls)

    def check_folder(self) -> None:
        return None  # nothing is read from a folder

    @property
    def concurrency(self) -> ConcurrencyCheck | None:
        return RaceCheck(self.generated.model, self.generated.cls)

    @cached_property
    def tests(self) -> list[tuple[str, Callable[[Any], None]]]:
        """The visible tests, compiled from their text under the name a classic task's tests.py has, so a failed
        assert shows its own line (``judge`` reads it through linecache, primed here: the file is not on disk)."""
        filename = str(self.folder / "tests.py")
        linecache.cache[filename] = (len(self.test_source), None, self.test_source.splitlines(True), filename)
        namespace: dict[str, Any] = {"__name__": f"adbg_race_tests_{self.id.replace('-', '_')}"}
        exec(compile(self.test_source, filename, "exec"), namespace)  # our own generated tests, never agent code
        found = [(name, fn) for name, fn in namespace.items() if name.startswith("test_") and callable(fn)]
        return sorted(found, key=lambda item: item[1].__code__.co_firstlineno)

    def held_out_cases(self, rng: random.Random) -> list[tuple[str, Callable[[Any], None]]]:
        return cases.held_out(self.generated.model, self.generated.cls, rng)

    def summary(self) -> dict[str, Any]:
        return {
            **super().summary(), "tags": ["race", self.pattern, self.domain], "pattern": self.pattern, "domain": self.domain,
            "race_split": self.race_split, "salt": self.salt,
        }  # fmt: skip


def _parse(match: re.Match[str]) -> tuple[str, str, int] | None:
    domain = match["domain"].replace("-", "_")
    pattern = match["pattern"].replace("-", "_")
    return (pattern, domain, int(match["seed"])) if (pattern, domain) in COMBINATIONS else None


def race_task(task_id_: str, salt: ProceduralSalt | None = None) -> RaceTaskSpec | None:
    """The task an id names (None: no race task has it; GeneratorError: a seed past the combination's namings)."""
    match = ID.match(task_id_)
    parsed = _parse(match) if match else None
    if parsed is None:
        return None
    pattern, domain, seed = parsed
    salt = salt or ProceduralSalt.public()
    generated = generate(pattern, domain, seed, salt.seed_text(f"race:{pattern}:{domain}") if salt.salted else "")
    info = PATTERNS[pattern]
    cls = generated.cls
    methods = " and ".join(generated.methods)
    deadlock = pattern == "lock_order_deadlock"
    rules = HypothesisRules(
        location=[*generated.methods, r"\block"],
        mechanism=info.words + ([] if deadlock else RACE_WORDS),
        symptom=["concurrency check", "stress"],
        # the other kind of bug: a race named for a deadlock, a deadlock for a race
        wrong=[r"\bgil\b", "off[- ]?by[- ]?one", "overflow", r"\brlock\b", "reentran", *(RACE_CLAIMS if deadlock else DEADLOCK_CLAIMS)],
        phrases=ClaimPhrases(location=[methods, f"the {methods} method"], mechanism=[info.phrase], wrong=["is safe under the GIL", "should use an RLock", "is off by one"]),
    )
    return RaceTaskSpec(
        id=task_id_, name=f"{pattern.replace('_', ' ').capitalize()} in a {domain.replace('_', ' ')}", difficulty=info.difficulty,
        family="race", order=0, max_attempts=10, max_steps=25, module=generated.module,
        description=(f"{cls} {DOMAIN_STORY[domain]}, shared by a service's worker threads. In production {info.symptom}, "
                     "although every unit test passes. Find the bug and submit the whole corrected module."),
        allowed_imports=frozenset({"threading", "typing", "collections", "functools", "contextlib"}),
        hypothesis=rules, stress=StressSpec(cls=cls), gold_hypothesis=f"{methods}: {info.phrase}.", mechanism=info.mechanism,
        FAIL_TO_PASS=[f"stress::{cls}"], PASS_TO_PASS=[f"tests.py::test_{name}" for name, _ in cases.scripts(generated.model)],
        folder=TASKS_DIR / "race" / task_id_, pattern=pattern, domain=domain, seed=seed, race_split=race_split(pattern, domain, seed),
        salt=salt.record, generated=generated,
    )  # fmt: skip

