"""Small helpers shared by the tests."""

from __future__ import annotations

from env.contract import TaskFilter
from env.families.catalog import TaskCatalog

CATALOG = TaskCatalog.builtin()
CLASSIC = CATALOG.select(TaskFilter(family="classic"))  # select: no procedural task is generated for it
GOLD = {t.id: t.gold_source for t in CLASSIC}
# what an unknown task_id's error offers after "available: " (env.server.environment: the first 60 ids, then the generated ids' forms)
UNKNOWN_TASK_TAIL = (
    ", ".join(CATALOG.ids()[:60]) + f" and {len(CATALOG.ids()) - 60} more (GET /tasks lists them), or any "
    "proc-<easy|medium|hard|extreme>-<train|test|ood>-<index 0-99999>, or any race-<pattern>-<domain>-<seed> (patterns: lost-update, "
    "check-then-act, get-then-set, double-checked-init, two-field-invariant, mutation-during-iteration, publish-before-init, "
    "lock-order-deadlock, atomicity-across-calls, missed-signal; seeds 0-11 listed)"
)
BUGGY = {t.id: t.buggy_source for t in CLASSIC}

GOOD_HYPOTHESIS = {
    "easy": "The while loop condition left < right is off by one: the loop exits when left == right without checking that last element; it must be left <= right.",
    "medium": "authenticate_user is fine: hash_password wraps the hex digest in str(bytes(...)), so every hash gets a b'...' prefix and never equals the stored digest.",
    "hard": "Race condition: increment and decrement read the count under one lock acquisition and write it under another, so the read-modify-write is not atomic and concurrent updates are lost.",
}


def submit(code: str, hypothesis: str = "a hypothesis") -> dict:
    return {"action_type": "submit_fix", "fixed_code": code, "hypothesis": hypothesis}
