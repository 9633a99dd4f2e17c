"""The lock-discipline review (issue 46, env/race_review): sound where no dynamic check reaches, complete on ordinary
designs, right on both corpora of tests/race_corpus.py (written apart from the review) and in the hard task's verdict.

- every correct design passes the review, and every correct ConnectionCounter the whole verdict;
- every racy design is refused by the review alone, at the line of the race, and for ConnectionCounter the whole
  verdict fails too; where a trigger hides the race, the same module with the trigger always on is caught by the
  controlled interleavings (so the corpus's racy designs are racy);
- a trigger hides nothing: the same racy path behind any condition is refused the same way;
- each kind of refusal says what it found, where, and names the construct (exact messages).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from env.families.classic.concurrency import explore_plan, judge_exploration
from env.families.classic.judge import judge
from env.race_review import review, review_finding
from env.secret import ServerSecret
from tests import race_redteam
from tests.helpers import CATALOG
from tests.race_corpus import CORRECT, RACY, Design

ROOT = Path(__file__).resolve().parents[1]
HARD = CATALOG.get("hard")
SECRET = ServerSecret("the race review tests' own secret, 32+ characters")

# Where the review reports a racy design when that is not the corpus's `line` (the corpus marks the call that runs a
# closure or a helper; the review reports the access inside it and names that call; an escape is reported where the
# state leaves; a lock let go and taken again inside a region, where it is taken again):
OWN_LINE = {
    "an exception raised in the region carries the state out of it": 13,  # the exception made with the state in it
    "a public state() method returns the internal dict; increment changes it after the region": 9,  # the return
    "a module-level factory returns a nested function over the state, called after the region": 8,
    "a nested function over self, called after the region": 12,
    "the state passed to a module-level function called after the region": 6,
    "the state passed to a private method after the region once 20,000 increments were made": 13,
    "a private helper releases and re-takes the lock inside the region at counts of 10,000 and more": 13,
    "decrement releases and re-takes the lock through a local after 20,000 calls": 20,
    "a one-permit semaphore given back twice on decrement's error path": 33,  # the second release
    "rate limiter: after a day of uptime the bucket is refilled and taken outside the lock": 8,
    "job queue: a helper releases the lock between reading the head and popping it": 16,
    "account: a functools.partial over the balances, called after the region after 10,000 transfers": 23,  # cannot follow
    # cannot follow: the __eq__ @dataclass writes (at its line) compares another instance's state
    "session store: dataclass with a lock field, expiry by time, __contains__ and __len__": 7,
}


# The racy designs refused because the review cannot follow a construct in them (said by name), not for the race:
CANNOT_FOLLOW = {
    "account: a functools.partial over the balances, called after the region after 10,000 transfers",  # functools.partial
    "session store: dataclass with a lock field, expiry by time, __contains__ and __len__",  # dataclass __eq__
}


def _id(design: Design) -> str:
    return design.name[:80]


def _counter_seed(design: Design, designs: list[Design]) -> int:
    return designs.index(design) % 5


# -- the corpora ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("design", CORRECT, ids=_id)
def test_the_review_accepts_every_correct_design(design):
    assert review(design.source, design.cls) == ""


@pytest.mark.parametrize("design", RACY, ids=_id)
def test_the_review_alone_refuses_every_racy_design_at_its_race(design):
    found = review_finding(design.source, design.cls)
    assert found is not None, f"{design.name}: {design.why}"
    assert found.line == OWN_LINE.get(design.name, design.line), found.message()
    assert (found.kind == "cannot-follow") == (design.name in CANNOT_FOLLOW), found.message()


CORRECT_COUNTERS = [d for d in CORRECT if d.cls == "ConnectionCounter"]
RACY_COUNTERS = [d for d in RACY if d.cls == "ConnectionCounter"]


@pytest.mark.parametrize("design", CORRECT_COUNTERS, ids=_id)
def test_every_correct_counter_is_solved_by_the_whole_verdict(runtime, design):
    verdict = judge(HARD, design.source, runtime.sandbox, SECRET.rng("classic", "hard", _counter_seed(design, CORRECT_COUNTERS), "verdict"))
    assert verdict.solved, verdict.report()


def _explored(runtime, source: str, seed: int):
    plan = explore_plan(HARD.stress, SECRET.rng("classic", "hard", seed, "verdict"))
    with runtime.sandbox.start(source, HARD.filename, HARD.module) as run:
        assert run.load_error is None
        return judge_exploration(plan, run.explore(plan), source)


@pytest.mark.parametrize("design", RACY_COUNTERS, ids=_id)
def test_every_racy_counter_fails_the_whole_verdict_and_its_hidden_path_is_racy(runtime, design):
    seed = _counter_seed(design, RACY_COUNTERS)
    verdict = judge(HARD, design.source, runtime.sandbox, SECRET.rng("classic", "hard", seed, "verdict"), policy_enabled=False)
    assert verdict.tests_passed == 8 and not verdict.solved and verdict.stress is not None, verdict.report()
    if design.forced:  # the trigger always on: the controlled interleavings show the path it hid is a race
        outcome = _explored(runtime, design.forced, seed)
        assert not outcome.passed and "interleaved by a controlled scheduler" in outcome.message, outcome.message


# -- a review of the review ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("design", race_redteam.RACY, ids=_id)
def test_the_review_refuses_every_racy_design_of_the_red_team(design):
    found = review_finding(design.source, design.cls)
    assert found is not None, f"{design.name}: {design.why}"


# what each limitation's refusal is: the kind of finding and what its message says
_LIMITATIONS = {
    "cannot follow": ("cannot-follow", "the review cannot follow"),
    "second acquisition": ("atomicity", "so the call is two steps, not one"),
}


@pytest.mark.parametrize("design", race_redteam.CORRECT, ids=_id)
def test_the_review_accepts_every_correct_design_of_the_red_team_or_refuses_it_for_a_documented_limitation(design):
    found = review_finding(design.source, design.cls)
    if design.name not in race_redteam.REFUSED_BY_NAME:
        assert found is None, found.message()
        return
    limitation, start = race_redteam.REFUSED_BY_NAME[design.name]
    kind, says = _LIMITATIONS[limitation]
    assert found is not None and found.message().startswith(start), found and found.message()
    assert found.kind == kind and says in found.message(), found.message()


@pytest.mark.parametrize("design", race_redteam.AS_GIVEN_DESIGNS, ids=_id)
def test_racy_designs_outside_the_reviews_assumptions_are_named_in_the_docs(design):
    # the review accepts them (a caller keeping its assumptions cannot make them race); each assumption they break is
    # one the task's docs list as taken as given, so a user reading the docs knows what the proof does not cover
    assert review_finding(design.source, design.cls) is None
    given = (ROOT / "docs" / "tasks.md").read_text().split("What it takes as given", 1)[1].split("\n\n", 1)[0]
    assert race_redteam.AS_GIVEN[design.name] in " ".join(given.split())


# -- a trigger hides nothing ------------------------------------------------------------------------------------------

_TRIGGERED = '''import threading
{imports}

class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self._state = {{"count": 0, "peak": 0}}
        self._calls = 0

    def increment(self):
        with self._lock:
            self._calls += 1
            state = self._state
            fast = {trigger}
            if not fast:
                self._state["count"] += 1
                self._state["peak"] = max(self._state["peak"], self._state["count"])
                return self._state["count"]
{fast_path}

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]

    def get_count(self):
        with self._lock:
            return self._state["count"]

    def get_peak(self):
        with self._lock:
            return self._state["peak"]

    def reset(self):
        with self._lock:
            self._state["count"] = 0
'''
_FAST_PATH = '''state["count"] += 1
state["peak"] = max(state["peak"], state["count"])
return state["count"]'''
TRIGGERS = {
    "a count": ("", 'state["count"] >= 10_000'),
    "a count of a billion": ("", 'state["count"] > 10 ** 9'),
    "a call count": ("", "self._calls > 20_000"),
    "every 65,536th call": ("", "self._calls % 65_536 == 0"),
    "a thread's name": ("", 'threading.current_thread().name == "worker-7"'),
    "a thread's identity": ("", "threading.get_ident() % 97 == 13"),
    "the number of live threads": ("", "threading.active_count() >= 16"),
    "the time": ("import time\n", "time.time() > 1_900_000_000"),
    "a random draw": ("import random\n", "random.random() < 1e-9"),
    "a module constant a caller can change": ("\nFAST = False\n", "FAST"),
}


def _triggered(name: str, indent: int) -> str:
    imports, trigger = TRIGGERS[name]
    fast_path = "\n".join(" " * indent + line for line in _FAST_PATH.splitlines())
    return _TRIGGERED.format(imports=imports, trigger=trigger, fast_path=fast_path)


@pytest.mark.parametrize("name", list(TRIGGERS))
def test_a_race_behind_any_trigger_is_refused_the_same_way(name):
    source = _triggered(name, 8)  # the fast path after the `with` block: no lock held
    line = source.splitlines().index('        state["count"] += 1') + 1
    assert review(source, "ConnectionCounter") == (
        f"line {line}: `increment` reads `state` (which holds `self._state`) without holding a lock "
        f"(the `with` block of line {line - 8} let go of `self._lock` at line {line - 1})"
    )
    assert review(_triggered(name, 12), "ConnectionCounter") == ""  # the same path inside the block: correct


# -- objects that pass from thread to thread ---------------------------------------------------------------------------

_JOBS = "import threading\n\n\nclass JobQueue:\n    def __init__(self):\n        self._lock = threading.Lock()\n        self._jobs = []\n\n    def submit(self, job):\n        with self._lock:\n            self._jobs.append(job)\n"


@pytest.mark.parametrize(
    "drain",
    [
        "        with self._lock:\n            jobs, self._jobs = self._jobs, []\n        return jobs\n",
        "        with self._lock:\n            self._jobs, jobs = [], self._jobs\n        jobs.sort()\n        return jobs\n",
        "        with self._lock:\n            jobs = self._jobs\n            self._jobs = []\n        for job in jobs:\n            print(job)\n        return len(jobs)\n",
    ],
)
def test_a_list_swapped_out_under_the_lock_is_the_callers(drain):
    assert review(_JOBS + "\n    def drain(self):\n" + drain, "JobQueue") == ""


@pytest.mark.parametrize(
    ("drain", "message"),
    [
        # read in one acquisition, rebound in another: a job submitted in between lands in the list handed out
        (
            "        with self._lock:\n            jobs = self._jobs\n        with self._lock:\n            self._jobs = []\n        return jobs\n",
            "line 13: `drain` returns `self._jobs`, shared state, to its caller, who can then change it without the lock",
        ),
        # the field rebound to the list it held: the list handed out is still the field's
        (
            "        with self._lock:\n            jobs = self._jobs\n            self._jobs = jobs\n        jobs.append(None)\n        return jobs\n",
            "line 13: `drain` returns `self._jobs`, shared state, to its caller, who can then change it without the lock",
        ),
    ],
)
def test_a_swap_that_leaves_the_list_shared_is_refused(drain, message):
    assert review(_JOBS + "\n    def drain(self):\n" + drain, "JobQueue") == message


def test_a_list_kept_anywhere_else_is_not_swapped_out():
    source = _JOBS.replace("self._jobs = []\n", "self._jobs = []\n        self._all = self._jobs\n", 1)
    source += "\n    def drain(self):\n        with self._lock:\n            jobs, self._jobs = self._jobs, []\n        return jobs\n"
    source += "\n    def add_all(self, job):\n        with self._lock:\n            self._all.append(job)\n"
    assert review(source, "JobQueue") == "line 14: `drain` returns `self._jobs`, shared state, to its caller, who can then change it without the lock"


_POOL = "import queue\nimport threading\n\n\nclass Pool:\n    def __init__(self):\n        self._q = queue.Queue()\n        self._lock = threading.Lock()\n        self._done = 0\n"
_WORK = "\n    def work_one(self):\n        job = self._q.get()\n        job['state'] = 'done'\n        with self._lock:\n            self._done += 1\n        return job\n"


@pytest.mark.parametrize(
    ("submit", "message"),
    [
        ("        job = {'name': name}\n        self._q.put(job)\n", ""),
        ("        self._q.put((1, {'name': name}))\n", ""),
        (
            "        job = {'name': name}\n        self._q.put(job)\n        job['state'] = 'queued'\n",
            "line 14: `submit` writes `job` after putting it into a queue at line 13: the thread that gets it may be using it",
        ),
        (
            "        job = {'name': name}\n        self._q.put(job)\n        return job\n",
            "line 11: `submit` returns an object it put into a queue at line 13: the thread that gets it may be using it",
        ),
        (
            "        job = {'name': name}\n        self._q.put(job)\n        self._q.put(job)\n",
            "line 14: `self._q.put(job)` keeps an object this call put into a queue at line 13: the thread that gets it may be using it",
        ),
        (
            "        tags = []\n        self._q.put({'name': name, 'tags': tags})\n        tags.append(name)\n",
            "line 14: `submit` writes `tags` after putting it into a queue at line 13: the thread that gets it may be using it",
        ),
    ],
)
def test_an_object_put_into_a_queue_is_the_getters_alone(submit, message):
    work = _WORK
    if "(1, " in submit:
        work = _WORK.replace("job = self._q.get()", "_, job = self._q.get()")
    assert review(_POOL + "\n    def submit(self, name):\n" + submit + work, "Pool") == message


def test_a_queue_given_shared_state_hands_out_shared_state():
    source = _POOL + "        self._state = {'name': 'x'}\n\n    def submit(self):\n        self._q.put(self._state)\n" + _WORK
    assert review(source, "Pool") == "line 15: `work_one` returns `self._state`, shared state, to its caller, who can then change it without the lock"


# -- constructs the review follows since the red team's third round --------------------------------------------------


def test_a_dataclass_is_read_with_the_methods_its_decorator_writes():
    source = (
        "import threading\nfrom dataclasses import dataclass, field\n\n\n@dataclass(eq=False)\nclass ConnectionCounter:\n"
        "    count: int = 0\n    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)\n\n"
        "    def increment(self):\n        with self._lock:\n            self.count += 1\n            return self.count\n"
    )
    # the __repr__ the decorator writes reads the count with no lock, reported at the decorator's line
    assert review(source, "ConnectionCounter") == "line 5: `__repr__` reads `self.count` without holding a lock (no lock is taken on this path)"
    assert review(source.replace("@dataclass(eq=False)", "@dataclass(eq=False, repr=False)"), "ConnectionCounter") == ""
    # a lock field __init__ takes as a parameter is a lock a caller can replace
    replaceable = source.replace("@dataclass(eq=False)", "@dataclass(eq=False, repr=False)").replace(", init=False", "")
    assert review(replaceable, "ConnectionCounter").startswith("line 5: `self._lock` may not be a lock: on some path it holds a plain value, the argument `_lock`")


def test_match_cases_read_their_subject_where_they_run():
    head = "import threading\n\n\nclass C:\n    def __init__(self):\n        self._lock = threading.Lock()\n        self.count = 0\n\n"
    inside = head + "    def dec(self):\n        with self._lock:\n            match self.count:\n                case 0:\n                    raise ValueError\n                case _:\n                    self.count -= 1\n"
    assert review(inside, "C") == ""
    outside = inside + "\n    def busy(self):\n        match self.count:\n            case 0 | 1:\n                return False\n        return True\n"
    assert review(outside, "C") == "line 18: `busy` reads `self.count` without holding a lock (no lock is taken on this path)"


def test_nonlocal_rebinding_is_followed_into_the_maker():
    head = "import threading\n\n\nclass C:\n    def __init__(self):\n        self._lock = threading.Lock()\n        self._items = []\n\n"
    leak = head + "    def items(self):\n        out = None\n\n        def take():\n            nonlocal out\n            out = self._items\n\n        with self._lock:\n            take()\n        return out\n"
    assert review(leak, "C") == "line 9: `items` returns `self._items`, shared state, to its caller, who can then change it without the lock"
    copy = leak.replace("out = self._items", "out = list(self._items)")
    assert review(copy, "C") == ""
