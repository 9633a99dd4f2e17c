"""A race-family class under the explorer's model plans: racy classes of three domains refused with the scenario and
the interleaving in their own lines, correct ones in ordinary lock styles accepted, and what a class returns or
raises taken only as plain data and built-in exceptions."""

from __future__ import annotations

import random

import pytest

from env.families.race.exploration import judge, plan_for
from env.families.race.models import DOMAINS

ALLOCATOR = '''import threading


class Allocator:
    def __init__(self):
        self._lock = threading.Lock()
        self._next = 0

    def allocate(self):
        current = self._next
        self._next = current + 1
        return current

    def issued(self):
        with self._lock:
            return self._next
'''
LOCKED = """        with self._lock:
            current = self._next
            self._next = current + 1
            return current"""
UNLOCKED = """        current = self._next
        self._next = current + 1
        return current"""

POOL = '''import threading


class Pool:
    def __init__(self):
        self._lock = threading.Lock()
        self._free = [0, 1]
        self._used = set()

    def acquire(self):
        if not self._free:
            raise RuntimeError("exhausted")
        with self._lock:
            conn = min(self._free)
            self._free.remove(conn)
            self._used.add(conn)
        return conn

    def release(self, conn):
        with self._lock:
            if conn not in self._used:
                raise ValueError(conn)
            self._used.discard(conn)
            self._free.append(conn)

    def in_use(self):
        with self._lock:
            return len(self._used)
'''

ACCOUNTS = '''import threading


class Bank:
    def __init__(self):
        self._lock = threading.Lock()
        self._balances = [0, 0, 0]

    def deposit(self, account, amount):
        with self._lock:
            self._balances[account] += amount
            return self._balances[account]

    def withdraw(self, account, amount):
        with self._lock:
            if self._balances[account] < amount:
                raise ValueError("insufficient funds")
            self._balances[account] -= amount
            return self._balances[account]

    def transfer(self, source, target, amount):
        self.withdraw(source, amount)
        self.deposit(target, amount)

    def balance(self, account):
        with self._lock:
            return self._balances[account]

    def total(self):
        with self._lock:
            return sum(self._balances)
'''
ATOMIC_TRANSFER = """    def transfer(self, source, target, amount):
        with self._lock:
            if self._balances[source] < amount:
                raise ValueError("insufficient funds")
            self._balances[source] -= amount
            self._balances[target] += amount"""
SPLIT_TRANSFER = """    def transfer(self, source, target, amount):
        self.withdraw(source, amount)
        self.deposit(target, amount)"""

# (domain, class, module name, source, passes)
CASES = {
    "allocator-unlocked": ("id_allocator", "Allocator", ALLOCATOR, False),
    "allocator-lock": ("id_allocator", "Allocator", ALLOCATOR.replace(UNLOCKED, LOCKED), True),
    "allocator-rlock": ("id_allocator", "Allocator", ALLOCATOR.replace(UNLOCKED, LOCKED).replace("threading.Lock()", "threading.RLock()"), True),
    "allocator-acquire-release": (
        "id_allocator", "Allocator",
        ALLOCATOR.replace(UNLOCKED, "        self._lock.acquire()\n        try:\n            current = self._next\n            self._next = current + 1\n"
                                    "            return current\n        finally:\n            self._lock.release()"),
        True,
    ),
    "allocator-lock-per-call": (
        "id_allocator", "Allocator", ALLOCATOR.replace(UNLOCKED, LOCKED.replace("with self._lock:", "with threading.Lock():")), False,
    ),
    "pool-check-then-act": ("connection_pool", "Pool", POOL, False),
    "pool-checked-under-the-lock": (
        "connection_pool", "Pool",
        POOL.replace('''        if not self._free:
            raise RuntimeError("exhausted")
        with self._lock:
''', '''        with self._lock:
            if not self._free:
                raise RuntimeError("exhausted")
'''),
        True,
    ),
    "accounts-transfer-in-two-steps": ("accounts", "Bank", ACCOUNTS, False),
    "accounts-transfer-in-one-step": ("accounts", "Bank", ACCOUNTS.replace(SPLIT_TRANSFER, ATOMIC_TRANSFER), True),
}  # fmt: skip


def explore(runtime, domain: str, cls: str, source: str, seed: int = 1):
    model = DOMAINS[domain]
    plan = plan_for(model, cls, random.Random(seed))
    with runtime.sandbox.start(source, "race_case.py", "race_case") as run:
        reply = run.explore(plan)
    return judge(model, plan, reply, source)


@pytest.mark.parametrize("name", list(CASES))
def test_racy_classes_are_refused_and_correct_ones_accepted(runtime, name):
    domain, cls, source, passes = CASES[name]
    for seed in (1, 2):
        outcome = explore(runtime, domain, cls, source, seed)
        assert outcome.passed is passes, outcome.message
        assert outcome.schedules > 0


def test_a_failure_names_the_scenario_and_the_interleaving_in_the_code_s_lines(runtime):
    outcome = explore(runtime, *CASES["allocator-unlocked"][:3])
    assert outcome.message == (
        "2 threads (thread A: allocate(); thread B: allocate()) on a new object: no order of the calls gives the results they "
        "returned\nthe interleaving:\n"
        "  thread A paused at line 11 in allocate: `self._next = current + 1`; thread B runs\n"
        "  thread B finished; thread A runs"
    )
    transfer = explore(runtime, *CASES["accounts-transfer-in-two-steps"][:3])
    assert transfer.message == (
        "2 threads (thread A: transfer(0, 1, 20); thread B: total()) after deposit(0, 50), deposit(1, 5): no order of the "
        "calls gives the results they returned\nthe interleaving:\n"
        "  thread A paused at line 23 in transfer: `self.deposit(target, amount)`; thread B runs\n"
        "  thread B finished; thread A runs"
    )


def test_only_plain_values_and_built_in_exceptions_count(runtime):
    # An int subclass equal to everything, and an exception class named like a built-in one, are what they are.
    posing = ALLOCATOR.replace(LOCKED, LOCKED).replace(UNLOCKED, LOCKED.replace("return current", "return Same(current)"))
    posing += "\n\nclass Same(int):\n    def __eq__(self, other):\n        return True\n\n    __hash__ = int.__hash__\n"
    outcome = explore(runtime, "id_allocator", "Allocator", posing)
    assert not outcome.passed and "no order of the calls gives the results they returned" in outcome.message
    named = POOL.replace('raise RuntimeError("exhausted")', 'raise RuntimeError("exhausted")').replace(
        "import threading\n", "import threading\n\n\nclass RuntimeError(Exception):\n    pass\n"
    )
    named = named.replace('''        if not self._free:
            raise RuntimeError("exhausted")
        with self._lock:
''', '''        with self._lock:
            if not self._free:
                raise RuntimeError("exhausted")
''')
    outcome = explore(runtime, "connection_pool", "Pool", named)
    assert not outcome.passed and "worker threads raised: other: RuntimeError: exhausted" in outcome.message
