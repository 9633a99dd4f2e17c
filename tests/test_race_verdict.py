"""The race verdict's guarantees (issue 31): a check the submitted code can neither see, reach nor slip past.

- Inside the check the code sees what a plain process shows (a list of observations, compared);
- nothing of the harness is reachable from the module's globals or the threads by public or single-underscore
  attributes (a walk, made while a schedule runs);
- read-modify-writes done by C calls and check-then-act races at zero are caught by the explorer itself;
- a spin lock passes, and a thread that never finishes is reported as such, not as tampering;
- the static lock-discipline review and the real-threads run, which need no secrecy, must agree;
- the interpreter is pinned.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from env.families.classic import judge as judge_module
from env.families.classic.concurrency import VALIDATED_PYTHON, explore_plan, judge_exploration, judge_hammer, python_refusal
from env.families.classic.judge import judge
from env.race_review import review
from env.secret import ServerSecret
from tests.helpers import CATALOG
from tests.race_variants import CORRECT, EVASIVE, HEAD, LOCKED_DECREMENT, LOCKED_INCREMENT, RACY, TAIL, module

HARD = CATALOG.get("hard")
GOLD = HARD.gold_source
SECRET = ServerSecret("the race verdict tests' own secret, 32+ characters")
EXPLORER = Path(__file__).resolve().parents[1] / "env" / "sandbox" / "inside" / "explorer.py"


def check(runtime, source: str, seed: int = 1, policy: bool = True):
    return judge(HARD, source, runtime.sandbox, SECRET.rng("classic", "hard", seed, "verdict"), policy_enabled=policy)


def explored(runtime, source: str, seed: int = 1):
    """The controlled-interleavings check alone (the probes below are correct counters, but no design the static
    review accepts can walk the process)."""
    plan = explore_plan(HARD.stress, SECRET.rng("classic", "hard", seed, "verdict"))
    with runtime.sandbox.start(source, HARD.filename, HARD.module) as run:
        assert run.load_error is None
        return judge_exploration(plan, run.explore(plan), source)


# -- 1. nothing the code can observe differs under the check ---------------------------------------

OBSERVE = '''
import re
import threading


def _mask(text):
    return re.sub(r"0x[0-9a-f]+|[0-9]+", "N", text)


def observe():
    """What a module can ask, through public and single-underscore names, about the process it runs in."""
    sys = threading._sys
    lock, rlock, cond = threading.Lock(), threading.RLock(), threading.Condition()
    me = threading.current_thread()
    frame = sys._getframe()
    threads = threading.enumerate()
    return [
        isinstance(threading.Lock, type), type(threading.Lock).__name__, type(lock).__name__, _mask(repr(lock)),
        threading.Lock is threading._allocate_lock, type(threading.RLock).__name__, type(rlock).__name__,
        _mask(repr(rlock)), threading.RLock().__class__ is threading._CRLock, type(cond).__name__,
        type(cond._lock).__name__, _mask(repr(cond)), type(threading.Semaphore()).__name__,
        type(threading.Event()).__name__, threading.Condition is threading._sys.modules["threading"].Condition,
        sys.gettrace() is None, sys.getprofile() is None, threading.gettrace() is None, threading.getprofile() is None,
        threading._trace_hook is None, threading._profile_hook is None,
        threading._time is sys.modules["time"].monotonic, type(threading._time).__name__,
        type(me).__name__, _mask(me.name), me.daemon, list(me._args), dict(me._kwargs), type(me._target).__name__, me._target.__name__, me is threading.main_thread(),
        sorted({type(t).__name__ for t in threads}), sorted({_mask(t.name) for t in threads}),
        sum(1 for t in threads if t is not threading.main_thread() and _mask(t.name) != _mask(me.name)),
        threading.main_thread().name, frame.f_trace is None, frame.f_trace_lines,
        "_adbg_explorer" in sys.modules,
    ]
'''


def _observing_counter(plain: list | None) -> str:
    """A correct counter that compares, in its first call from a worker thread, what it sees with ``plain``."""
    check_first = f'''
PLAIN = {plain!r}
SEEN = []


def _first_look():
    if threading.current_thread() is threading.main_thread() or SEEN:
        return
    SEEN.append(observe())
'''
    verdict = (
        "        if SEEN and PLAIN is not None and SEEN[0] != PLAIN:\n"
        "            raise RuntimeError('differs: ' + repr([(i, a, b) for i, (a, b) in enumerate(zip(SEEN[0], PLAIN)) if a != b]))\n"
    )
    return _probe_counter(OBSERVE + check_first, "_first_look()", verdict)


def _probe_counter(prelude: str, first: str, verdict: str) -> str:
    """The correct counter with ``prelude`` at the top of the module, ``first`` run at the start of each increment,
    and ``verdict`` at the start of get_count (which the explorer calls after every schedule)."""
    head = HEAD.replace("import threading\n", prelude)
    increment = LOCKED_INCREMENT.replace("    def increment(self):\n", f"    def increment(self):\n        {first}\n")
    tail = TAIL.replace("    def get_count(self):\n", "    def get_count(self):\n" + verdict)
    return head + increment + LOCKED_DECREMENT + tail


def _plain_observations(tmp_path: Path) -> list:
    """The same observation in a plain process: two daemon threads of a plain Thread(target=worker) pool."""
    source = tmp_path / "connection_counter.py"
    source.write_text(_observing_counter(None), encoding="utf-8")
    script = textwrap.dedent(f'''
        import importlib.util, json, threading
        spec = importlib.util.spec_from_file_location("connection_counter", {str(source)!r})
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        counter = mod.ConnectionCounter()
        def worker():
            counter.increment()
        threads = [threading.Thread(target=worker, daemon=True) for _ in range(2)]
        gate = threading.Lock()
        with gate:
            for t in threads:
                t.start()
        for t in threads:
            t.join()
        print(json.dumps(mod.SEEN[0]))
    ''')
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(out)


def test_inside_the_check_the_code_sees_what_a_plain_process_shows(runtime, tmp_path):
    plain = _plain_observations(tmp_path)
    # types, reprs and identities of the locks; the tracer and profiler hooks; the threads' class, names and args
    assert plain[:4] == [False, "builtin_function_or_method", "lock", "<unlocked _thread.lock object at N>"]
    assert plain[15:21] == [True] * 6
    outcome = explored(runtime, _observing_counter(plain))
    assert outcome.passed, outcome.message
    assert outcome.message.endswith("no update was lost")


def test_the_observation_test_can_fail(runtime, tmp_path):
    # the same probe against observations a plain process would not give fails with the difference named
    plain = _plain_observations(tmp_path)
    plain[0] = True  # what the last build's modelled locks answered to isinstance(threading.Lock, type)
    outcome = explored(runtime, _observing_counter(plain))
    assert not outcome.passed
    assert "RuntimeError: differs: [(0, False, True)]" in outcome.message


# -- 2. nothing of the harness is reachable -------------------------------------------------------

WALK = '''
import _thread
import threading
import time

FOUND = []
DONE = []


def _public(name):
    return isinstance(name, str) and not (name.startswith("__") and name.endswith("__"))


def _harness(obj):
    kind, harness = type(obj), ("_adbg_explorer", "_adbg_schedule", "_adbg_points")  # explorer.py and the files it loads
    if getattr(kind, "__module__", "") in harness or kind.__name__ in ("Schedule", "_Worker"):
        return True
    if kind is type(threading) and getattr(obj, "__name__", "") in harness:
        return True
    return callable(obj) and getattr(obj, "__module__", "") in harness


def _walk(roots):
    """Every object reachable from ``roots`` through public and single-underscore attributes and container items."""
    seen, todo = set(), [(root, name) for name, root in roots]
    while todo and len(seen) < 400_000:
        obj, path = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if _harness(obj):
            FOUND.append(path)
            continue
        kind = type(obj)
        if kind in (dict,):
            items = [(k, v) for k, v in list(obj.items()) if not isinstance(k, str) or _public(k)]
            todo += [(v, path + "[" + repr(k)[:40] + "]") for k, v in items] + [(k, path + ".key") for k, _ in items]
        elif kind in (list, tuple, set, frozenset):
            todo += [(v, path + "[]") for v in list(obj)]
        elif kind in (int, float, str, bytes, bool, type(None)):
            continue
        else:
            try:
                attrs = vars(obj)
            except TypeError:
                attrs = {}
            todo += [(v, path + "." + k) for k, v in list(attrs.items()) if _public(k)]
            for name in getattr(kind, "__slots__", ()) if not isinstance(obj, type) else ():
                if _public(name) and hasattr(obj, name):
                    todo.append((getattr(obj, name), path + "." + name))
    DONE.append(len(seen))


def _look_once():
    if threading.current_thread() is threading.main_thread() or DONE or FOUND or STARTED:
        return
    STARTED.append(1)
    roots = [("globals()", globals()), ("threading.enumerate()", threading.enumerate()), ("threading", threading)]
    _thread.start_new_thread(_walk, (roots,))  # a plain thread of its own: the schedule never pauses it
    while not DONE:
        time.sleep(0.002)


STARTED = []
'''


def _walking_counter() -> str:
    verdict = (
        "        if FOUND:\n            raise RuntimeError('reached the harness: ' + ', '.join(FOUND[:3]))\n"
        "        if DONE and DONE[0] < 1000:\n            raise RuntimeError('the walk saw only %d objects' % DONE[0])\n"
    )
    return _probe_counter(WALK, "_look_once()", verdict)


def test_no_harness_object_is_reachable_from_the_module_or_the_threads(runtime):
    outcome = explored(runtime, _walking_counter())
    assert outcome.passed, outcome.message


def test_the_walk_finds_a_harness_object_when_one_is_there(runtime):
    # the same walk, with the last build's mistake put back by hand: the scheduler handed to a thread
    leak = _walking_counter().replace(
        "    STARTED.append(1)\n",
        "    STARTED.append(1)\n    threading.current_thread()._args = (type('Schedule', (), {})(),)\n",
    )
    outcome = explored(runtime, leak)
    assert not outcome.passed
    assert "reached the harness: " in outcome.message and "._args[]" in outcome.message


# -- 3. the explorer itself catches C-level updates and check-then-act at zero ---------------------

EXPLORER_CATCHES = [
    "getattr/setattr bound as default arguments, no lock at all",
    "getattr/setattr bound as default arguments", "a dict's get and update", "a list's pop and append", "setattr through map",
    "decrement checks get_count() before taking the lock", "decrement checks self.count before taking the lock",
    "decrement checks under one acquisition and updates under another",
]


@pytest.mark.parametrize("name", EXPLORER_CATCHES)
def test_the_explorer_itself_catches_the_race(runtime, name):
    # with the policy off, so the explorer (not the lint) is what refuses it, and before the review has a say
    for seed in range(3):
        verdict = check(runtime, RACY[name], seed, policy=False)
        assert verdict.tests_passed == 8
        assert "interleaved by a controlled scheduler" in verdict.stress.message, verdict.stress.message
        assert "The interleaving, in your code's lines:" in verdict.stress.message


def test_a_decrement_racing_at_one_is_explained(runtime):
    message = check(runtime, RACY["decrement checks self.count before taking the lock"], policy=False).stress.message
    assert message.splitlines()[0] in (
        "2 threads (thread A: decrement; thread B: decrement) on one shared counter, interleaved by a controlled scheduler: "
        "the count went below zero: a decrement's check and its update are not one atomic step.",
        "2 threads (thread A: decrement; thread B: decrement) on one shared counter, interleaved by a controlled scheduler: "
        "the calls' results match no order of the calls: a decrement raised or returned what no order gives "
        "(its check and its update are not one atomic step, or an update was lost).",
    )
    assert "expected" not in message


def test_every_check_sweeps_the_boundaries_and_draws_the_rest_from_the_secret():
    spec = HARD.stress
    plans = [explore_plan(spec, SECRET.rng("classic", "hard", seed, "verdict")) for seed in range(20)]
    for plan in plans:
        sweeps = [(tuple(s["setup"]), tuple(tuple(t) for t in s["threads"])) for s in plan["scenarios"] if s.get("sweep")]
        assert ((), (("decrement",), ("decrement",))) in sweeps  # two decrements at zero
        assert (("increment",), (("decrement",), ("decrement",))) in sweeps  # two decrements at one
        assert any(t == (("reset",), ("increment",)) for _, t in sweeps) and any(t == (("reset",), ("decrement",)) for _, t in sweeps)
        pct = [s for s in plan["scenarios"] if not s.get("sweep")]
        assert len(pct) == spec.random_scenarios
    # decrements race below their own count in some PCT scenarios: no scenario is kept away from zero
    assert any(len(s["setup"]) < sum(t.count("decrement") for t in s["threads"]) for p in plans for s in p["scenarios"] if not s.get("sweep"))
    assert plans[0] != explore_plan(spec, ServerSecret("another server's secret, 32+ chars").rng("classic", "hard", 0, "verdict"))


# -- 4. honest outcomes for correct code and for code that never finishes --------------------------

def test_a_spin_lock_passes_at_submission_and_at_grading(runtime):
    assert check(runtime, CORRECT["a spin lock on try-acquire"], policy=False).solved
    assert judge_module.stress_check(HARD, CORRECT["a spin lock on try-acquire"], runtime.sandbox, random.Random(3)).passed


def _in_workers(before: str, code: str) -> str:
    """The correct counter with ``code`` run before the line ``before`` of increment, in worker threads only (in the
    main thread, where the sequential tests run, it would hang for real)."""
    indent = before[: len(before) - len(before.lstrip())]
    guarded = f"{indent}if threading.current_thread() is not threading.main_thread():\n{indent}    {code}\n"
    return module(LOCKED_INCREMENT.replace(before, guarded + before, 1), LOCKED_DECREMENT)


def test_a_thread_that_never_finishes_is_reported_as_such_not_as_tampering(runtime):
    message = check(runtime, _in_workers("        with self._lock:\n", "while self.count >= 0: pass"), policy=False).stress.message
    assert "its threads did not finish within 20000 scheduling points" in message
    assert "traced" not in message


# A correct counter whose work grows with the count: from the high starts (10^8 and more) a run cannot end within the
# explorer's budget. That is no race: the scenario runs again from the state its API reaches.
_GROWING = {
    "reset by one decrement at a time": GOLD.replace(
        "    def reset(self):\n        with self._lock:\n            self.count = 0\n",
        "    def reset(self):\n        with self._lock:\n            while self.count > 0:\n                self.decrement()\n",
    ).replace("threading.Lock()", "threading.RLock()"),
    "reset counting down in a loop": GOLD.replace(
        "            self.count = 0\n", "            while self.count:\n                self.count -= 1\n"
    ),
}


@pytest.mark.parametrize("name", sorted(_GROWING))
def test_work_that_grows_with_the_count_is_no_race(runtime, name):
    source = _GROWING[name]
    assert source != GOLD and review(source, "ConnectionCounter") == ""
    verdict = check(runtime, source, policy=False)
    assert verdict.solved, verdict.report()


def test_running_out_of_budget_at_a_high_start_hides_no_race(runtime):
    # a race only where the count is high, behind work that runs the budget out there: the explorer runs that scenario
    # again from its API's state (no race there), and the review refuses the path
    source = GOLD.replace(
        "    def reset(self):\n        with self._lock:\n            self.count = 0\n",
        "    def reset(self):\n        with self._lock:\n            n = self.count\n            while n > 10**6 and self.peak >= 0:\n"
        "                n = n - 1\n            if n != 10**6:\n                self.count = 0\n                return\n"
        "        self.count = 0\n",
    )
    assert explored(runtime, source).passed
    verdict = check(runtime, source, policy=False)
    assert not verdict.solved and verdict.stress is not None
    assert "the lock-discipline review refused the code: line 42: `reset` writes `self.count` without holding a lock (the `with` block of line 35 let go of `self._lock` at line 41)" in verdict.stress.message, verdict.stress.message


def test_a_budget_run_out_from_the_apis_own_state_is_still_a_failure(runtime):
    # the same spin as above at every count: it runs the budget out from the API's state too
    message = explored(runtime, GOLD.replace("            self.count = 0\n", "            while self.count >= 0:\n                self.peak = self.peak\n")).message
    assert "on one shared counter, interleaved by a controlled scheduler: its threads did not finish within 20000 scheduling points" in message, message


def test_a_replayed_run_starts_where_the_run_it_replays_started(runtime):
    # trace_report replays the failing run; one run again from its API's state is replayed from there too
    plan = explore_plan(HARD.stress, SECRET.rng("classic", "hard", 1, "verdict"))
    number, scenario = next((i, s) for i, s in enumerate(plan["scenarios"]) if s.get("sweep") and s["start_state"][0] > 1)
    starts = []
    with runtime.sandbox.start(GOLD, HARD.filename, HARD.module) as run:
        for from_api in (False, True):
            replay = {"scenario": number, "first": 0, "preempt_at": 0, "priorities": None, "changes": [], "from_api": from_api}
            (observation,) = run.explore({"cls": plan["cls"], "scenarios": plan["scenarios"], "replay": replay})["schedules"]
            starts.append(observation["start_used"])
    assert starts == [list(scenario["start_state"]), [scenario["warmup"] % 2, 1]] and scenario["warmup"] > 0


def test_a_lock_held_by_a_thread_that_waits_for_it_is_a_deadlock(runtime):
    message = check(runtime, _in_workers("            self.count += 1\n", "self._lock.acquire()"), policy=False).stress.message
    assert "deadlock: every thread waits for a lock another thread holds" in message


# -- 5. the checks that need no secrecy ------------------------------------------------------------

@pytest.mark.parametrize("name", list(CORRECT))
def test_the_review_accepts_every_correct_style(name):
    assert review(CORRECT[name], "ConnectionCounter") == ""


@pytest.mark.parametrize("name", list(RACY) + list(EVASIVE))
def test_the_review_refuses_every_racy_or_evasive_variant(name):
    source = (RACY | EVASIVE)[name]
    why = review(source, "ConnectionCounter")
    assert why.startswith("line "), why
    # (no refusal prescribes a lock shape any more: it says what it found, tests/test_race_review.py has the messages)
    assert "The concurrency review expects" not in why


REVIEW_REFUSES = {
    # a way past the review -> the start of the reason it gives
    "threading.Lock replaced at import": "line 2: the review cannot follow `threading.Lock = ...`: it changes the module `threading` for everyone",
    "the lock replaced in a method": "line 38: `self._lock` is rebound here after `__init__`: a thread holding the old lock and one holding the new one",
    "an attribute hook": "line 5: the review cannot follow `__getattr__`, which changes how the class's attributes or instances behave",
    "threading shadowed by a parameter": "line 3: the review cannot follow `import types`: the module is outside what it knows",
    "an RLock released inside its own region": "line 12: the review cannot follow `self._lock._release_save`: of a lock it follows only acquire",
    "__init__ run again from a method": "line 6: `self._lock` is rebound here after `__init__`",
    "the base's __init__ run again from a method": "line 6: `self._lock` is rebound here after `__init__`",
}
# Correct designs the third build's review refused (issue 46: "correct code scores 0.0"), which this one follows.
REVIEW_ACCEPTS = ("a lock kept in a dict", "self handed to a function", "a local named like the module")


def _hostile(name: str) -> str:
    source = module(LOCKED_INCREMENT, LOCKED_DECREMENT)
    changes = {
        "threading.Lock replaced at import": lambda: source.replace("import threading\n", "import threading\nthreading.Lock = threading.RLock\n"),
        "the lock replaced in a method": lambda: source + "\n    def rotate(self):\n        with self._lock:\n            self._lock = threading.Lock()\n",
        "a lock kept in a dict": lambda: source.replace("self._lock = threading.Lock()", "self._locks = {'c': threading.Lock()}").replace(
            "with self._lock:", "with self._locks['c']:"
        ),
        "self handed to a function": lambda: source.replace("            return self.count\n\n    def get_peak", "            return _read(self)\n\n    def get_peak")
        + "\n\ndef _read(counter):\n    return counter.count\n",
        "an attribute hook": lambda: source.replace("class ConnectionCounter:\n", "class ConnectionCounter:\n    def __getattr__(self, name):\n        return 0\n\n"),
        # the review must not take a look-alike for the threading module, nor let the lock be undone or replaced
        "threading shadowed by a parameter": lambda: source.replace(
            "import threading\n", "import threading\nimport contextlib\nimport types\n\nFAKE = types.SimpleNamespace(Lock=contextlib.nullcontext)\n"
        ).replace("def __init__(self):", "def __init__(self, threading=FAKE):"),
        "an RLock released inside its own region": lambda: source.replace("threading.Lock()", "threading.RLock()").replace(
            "            self.count += 1\n", "            state = self._lock._release_save()\n            self.count += 1\n            self._lock._acquire_restore(state)\n"
        ),
        "__init__ run again from a method": lambda: source + "\n    def rotate(self):\n        self.__init__()\n",
        "the base's __init__ run again from a method": lambda: source.replace(
            "class ConnectionCounter:", "class _Base:\n    def __init__(self):\n        self._lock = threading.Lock()\n\n\nclass ConnectionCounter(_Base):"
        ).replace("    def __init__(self):\n        self._lock = threading.Lock()\n        self.count", "    def __init__(self):\n        super().__init__()\n        self.count")
        + "\n    def rotate(self):\n        super().__init__()\n",
        "a local named like the module": lambda: source.replace("            self.count += 1\n", "            threading = 1\n            self.count += threading\n"),
    }
    return changes[name]()


@pytest.mark.parametrize("name", list(REVIEW_REFUSES))
def test_the_review_refuses_what_it_cannot_follow_or_a_replaced_lock_and_names_it(name):
    why = review(_hostile(name), "ConnectionCounter")
    assert why.startswith(REVIEW_REFUSES[name]), why


@pytest.mark.parametrize("name", REVIEW_ACCEPTS)
def test_the_review_accepts_what_the_last_build_refused_for_its_style(name):
    assert review(_hostile(name), "ConnectionCounter") == ""


def test_a_correct_design_the_review_cannot_follow_is_refused_by_name_not_judged_racy(runtime):
    # locks kept in a dict built by a comprehension, one chosen at run time: correct (the explorer passes it), but the
    # review cannot tell which lock guards what; the verdict fails and says so, blaming no race
    source = module(LOCKED_INCREMENT, LOCKED_DECREMENT).replace(
        "self._lock = threading.Lock()", "self._locks = {name: threading.Lock() for name in ('count',)}"
    ).replace("with self._lock:", "with self._locks['count']:")
    verdict = check(runtime, source, policy=False)
    assert verdict.tests_passed == 8 and not verdict.solved
    assert verdict.stress.message == (
        "the lock-discipline review refused the code: line 11: the review cannot follow the lock made at line 6: one of several "
        "locks made at line 6, chosen at run time"
    )


def test_the_real_threads_run_catches_what_only_shows_under_real_threads(runtime):
    # racy only when five threads are alive: never in the explorer's schedules (three workers at most), always
    # in the real-threads run (four workers); the read and the write are split by a real sleep there
    source = module(
        '''    def increment(self):
        if threading.active_count() >= 5:
            with self._lock:
                current = self.count
            _time.sleep(0.0002)
            with self._lock:
                self.count = current + 1
                self.peak = max(self.peak, self.count)
                return self.count
        with self._lock:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count
''',
        LOCKED_DECREMENT,
        head=HEAD.replace("import threading\n", "import threading\nimport time as _time\n"),
    )
    rng = SECRET.rng("classic", "hard", 1, "verdict")
    plan = explore_plan(HARD.stress, rng)
    assert judge_module.real_threads_check(HARD, source, runtime.sandbox, False, plan).startswith(
        f"4 real threads calling increment {plan['hammer']['ops']} times each, with preemption forced often: updates were lost"
    )
    assert judge_module.real_threads_check(HARD, HARD.gold_source, runtime.sandbox, True, plan) == ""


def test_the_real_threads_verdict():
    plan = {"hammer": {"threads": 4, "ops": 10, "seconds": 5.0}}
    good = {"increment": {"count": 40, "peak": 40, "errors": []}, "decrement": {"count": 0, "peak": 40, "errors": []}}
    assert judge_hammer(plan, good) == ""
    assert judge_hammer(plan, good | {"increment": {"count": 39, "peak": 40, "errors": []}}).endswith("updates were lost (the final count is wrong)")
    assert judge_hammer(plan, good | {"decrement": {"count": 0, "peak": 39, "errors": []}}).endswith("the peak lost an update (get_peak() is wrong)")
    assert judge_hammer(plan, good | {"decrement": {"count": 0, "peak": 40, "errors": ["ValueError: no active connections"]}}) == (
        "4 real threads calling decrement raised: ValueError: no active connections")
    assert judge_hammer(plan, {"increment": {"unfinished": True}}) == "4 real threads calling increment did not finish within 5 s"
    assert judge_hammer(plan, {"refused": "no"}) == "the real-threads check cannot run here: no"


def test_a_sweep_must_cover_every_preemption_or_say_which_are_equivalent():
    plan = {"scenarios": [{"setup": [], "threads": [["increment"], ["increment"]], "sweep": True}]}

    def run(first: int, k: int, **extra: object) -> dict:
        return {"scenario": 0, "first": first, "preempt_at": k, "first_steps": 3, "stopped": "", "count": 2, "peak": 2,
                "results": [[["increment", 1, ""]], [["increment", 2, ""]]], **extra}

    full = [run(f, k) for f in (0, 1) for k in range(4)]
    assert judge_exploration(plan, {"schedules": full}, "").passed
    reduced = [run(0, 0, equivalent=[2, 3]), run(0, 1), run(1, 0, equivalent=[1, 2, 3])]
    outcome = judge_exploration(plan, {"schedules": reduced}, "")
    assert outcome.passed and outcome.message == "3 interleavings (5 more shown equivalent to one of them): no update was lost"
    missing = [run(0, 0, equivalent=[2]), run(0, 1), run(1, 0, equivalent=[1, 2, 3])]
    assert judge_exploration(plan, {"schedules": missing}, "").message == "the concurrency check did not run every schedule it was asked to"


# -- 6. the interpreter is pinned ----------------------------------------------------------------

def test_the_check_is_refused_on_an_interpreter_it_is_not_validated_on(monkeypatch):
    assert python_refusal() == ""  # this one is validated
    assert python_refusal("cpython", (3, 12, 1)) == "the concurrency check is validated on CPython 3.11 only; this server runs cpython 3.12.1"
    assert python_refusal("pypy", (3, 11, 4)).endswith("this server runs pypy 3.11.4")
    # the explorer keeps the same list (it cannot import the server's code) and refuses on its own
    listed = re.search(r"^VALIDATED = (.*?)  #", EXPLORER.read_text(encoding="utf-8"), re.M)
    assert listed is not None and eval(listed.group(1)) == VALIDATED_PYTHON  # noqa: S307 - a literal of this repository
    spec = importlib.util.spec_from_file_location("_adbg_explorer_pin_test", EXPLORER)
    assert spec is not None and spec.loader is not None
    explorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(explorer)
    monkeypatch.setattr(explorer, "_LAYOUT_OK", False)
    reply = explorer.explore(None, "x.py", {"cls": "C", "scenarios": []})
    assert reply["refused"].startswith("the concurrency check is validated on CPython 3.11 only; this is cpython 3.11.")
    assert judge_exploration({"scenarios": []}, reply, "").message.startswith("the concurrency check cannot run here: ")


def test_the_server_refuses_the_concurrency_task_on_another_interpreter(monkeypatch):
    from env.families.classic import family
    from env.server.environment import DebugEnvironment

    monkeypatch.setattr(family, "python_refusal", lambda: "the concurrency check is validated on CPython 3.11 only; this server runs cpython 3.13.0")
    env = DebugEnvironment()
    observation = env.reset(task_id="hard", seed=1)
    assert observation.done
    assert observation.error == (
        "task 'hard' cannot be served here: the concurrency check is validated on CPython 3.11 only; this server runs cpython 3.13.0"
    )
    assert env.reset(task_id="easy", seed=1).error is None


# -- 7. the dynamic checks start where the triggers are (issue 46, item 3) ---------------------------
# Racy code that switched its race on only at counts of 10,000 and more, or after 20,000 calls on one object, scored
# 1.0: every scenario started at zero and made a few calls. Scenarios now start from counts, peaks and calls counted
# drawn from the secret (set through the object's API and its state); the high sweeps cross every threshold on the
# count up to 10**8 and on a counter of calls (of either method, or both) up to 10**6 in every check.

_TRIGGERED = '''import threading


class ConnectionCounter:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.peak = 0
        self._calls = 0
        self._increments = 0

    def increment(self):
        with self._lock:
            self._calls += 1
            self._increments += 1
            current = self.count
            if not ({increment}):
                self.count = current + 1
                if self.count > self.peak:
                    self.peak = self.count
                return self.count
        with self._lock:  # past the trigger: the write under a second acquisition
            self.count = current + 1
            if self.count > self.peak:
                self.peak = self.count
            return self.count

    def decrement(self):
        with self._lock:
            self._calls += 1
            current = self.count
            if current == 0:
                raise ValueError("no active connections")
            if not ({decrement}):
                self.count = current - 1
                return self.count
        with self._lock:
            self.count = current - 1
            return self.count

    def get_count(self):
        with self._lock:
            return self.count

    def get_peak(self):
        with self._lock:
            return self.peak

    def reset(self):
        with self._lock:
            self.count = 0
'''


def _triggered(increment: str, decrement: str) -> str:
    """A counter whose every access is under the lock, that splits a method's read and write into two acquisitions
    once its condition holds (``current`` is the count it read; ``self._calls`` and ``self._increments`` count calls)."""
    return _TRIGGERED.format(increment=increment, decrement=decrement)


# A peak raised under a second acquisition, decided under the first, once the peak is 10,000 or more.
_PEAK_TRIGGERED = module(
    '''    def increment(self):
        with self._lock:
            self.count += 1
            new = self.count
            if self.peak < 10_000:
                if new > self.peak:
                    self.peak = new
                return new
            higher = new > self.peak
        if higher:
            with self._lock:
                self.peak = new
        return new
''',
    LOCKED_DECREMENT,
)

TRIGGERS = {
    "races at counts of 10,000 and more": _triggered("current >= 10_000", "current >= 10_000"),
    "races at counts of 1,000,000 and more": _triggered("current >= 1_000_000", "current >= 1_000_000"),
    "races at counts of 99,000,000 and more": _triggered("current >= 99_000_000", "current >= 99_000_000"),
    "decrement races at counts of 5,000,000 and more": _triggered("False", "current >= 5_000_000"),
    "increment races at counts of 10,000 and more": _triggered("current >= 10_000", "False"),
    "races once the peak is 10,000 or more": _triggered("self.peak >= 10_000", "self.peak >= 10_000"),
    "the peak races once it is 10,000 or more": _PEAK_TRIGGERED,
    "races after 20,000 calls on one object": _triggered("self._calls > 20_000", "self._calls > 20_000"),
    "races after 20,000 increments on one object": _triggered("self._increments > 20_000", "self._increments > 20_000"),
}


@pytest.mark.parametrize("name", list(TRIGGERS))
def test_the_explorer_alone_catches_races_that_start_at_large_counts_or_after_many_calls(runtime, name):
    for seed in range(5):
        outcome = explored(runtime, TRIGGERS[name], seed)
        assert not outcome.passed, f"{name} passed the explorer with seed {seed}"
        assert "interleaved by a controlled scheduler" in outcome.message, outcome.message


def test_a_race_that_starts_after_20000_calls_fails_the_verdict(runtime):
    # the brief's own measured evasion, through the whole verdict (the review off: the dynamic checks catch it)
    source = TRIGGERS["races after 20,000 calls on one object"]
    for seed in range(5):
        verdict = check(runtime, source, seed, policy=False)
        assert verdict.tests_passed == 8 and not verdict.solved
        caught = not explored(runtime, source, seed).passed
        if not caught:  # the explorer or the real-threads run: either is enough
            plan = explore_plan(HARD.stress, SECRET.rng("classic", "hard", seed, "verdict"))
            caught = judge_module.real_threads_check(HARD, source, runtime.sandbox, False, plan) != ""
        assert caught, f"neither dynamic check caught it with seed {seed}"


def test_a_failure_from_a_start_the_check_set_says_so_and_names_no_count(runtime):
    message = explored(runtime, TRIGGERS["races at counts of 10,000 and more"], 1).message
    first = message.splitlines()[0]
    assert "on one shared counter whose count and peak the check set beforehand, interleaved by a controlled scheduler" in first
    assert not re.search(r"\d{3,}", first)  # no count in the report
    assert "The interleaving, in your code's lines:" in message


# Correct counters that keep their state in unusual ways: the start state is found and set in every one (or, where it
# cannot be, the scenario runs from the state the API reached), and none fails because of it.
_LOCKED = '''import threading


class ConnectionCounter:
{body}
    def get_count(self):
        with self._lock:
            return {count}

    def get_peak(self):
        with self._lock:
            return {peak}

    def reset(self):
        with self._lock:
            {count} = 0
'''


def _layout(body: str, count: str, peak: str) -> str:
    return _LOCKED.format(body=body, count=count, peak=peak)


LAYOUTS = {
    "a dict of count and peak": _layout('''    def __init__(self):
        self._lock = threading.Lock()
        self._state = {"count": 0, "peak": 0}

    def increment(self):
        with self._lock:
            self._state["count"] += 1
            self._state["peak"] = max(self._state["peak"], self._state["count"])
            return self._state["count"]

    def decrement(self):
        with self._lock:
            if self._state["count"] == 0:
                raise ValueError("no active connections")
            self._state["count"] -= 1
            return self._state["count"]
''', 'self._state["count"]', 'self._state["peak"]'),
    "a list of count and peak": _layout('''    def __init__(self):
        self._lock = threading.Lock()
        self._cells = [0, 0]

    def increment(self):
        with self._lock:
            self._cells[0] += 1
            if self._cells[0] > self._cells[1]:
                self._cells[1] = self._cells[0]
            return self._cells[0]

    def decrement(self):
        with self._lock:
            if self._cells[0] == 0:
                raise ValueError("no active connections")
            self._cells[0] -= 1
            return self._cells[0]
''', "self._cells[0]", "self._cells[1]"),
    "properties over other names, an RLock and counters of calls": _layout('''    def __init__(self):
        self._lock = threading.RLock()
        self._active = 0
        self._high_water = 0
        self._calls = 0
        self._opened = 0
        self._closed = 0

    @property
    def active(self):
        with self._lock:
            return self._active

    def increment(self):
        with self._lock:
            self._calls += 1
            self._opened += 1
            self._active += 1
            if self._active > self._high_water:
                self._high_water = self._active
            return self.active

    def decrement(self):
        with self._lock:
            self._calls += 1
            if self._active == 0:
                raise ValueError("no active connections")
            self._closed += 1
            self._active -= 1
            return self.active
''', "self._active", "self._high_water"),
    "__slots__": _layout('''    __slots__ = ("_lock", "_n", "_top")

    def __init__(self):
        self._lock = threading.Lock()
        self._n = 0
        self._top = 0

    def increment(self):
        with self._lock:
            self._n += 1
            self._top = max(self._top, self._n)
            return self._n

    def decrement(self):
        with self._lock:
            if not self._n:
                raise ValueError("no active connections")
            self._n -= 1
            return self._n
''', "self._n", "self._top"),
    "a stats object holding count and peak": _layout('''    class _Stats:
        count = 0  # a class default, shadowed on the first update
        peak = 0

    def __init__(self):
        self._lock = threading.Lock()
        self._stats = self._Stats()

    def increment(self):
        with self._lock:
            self._stats.count += 1
            if self._stats.count > self._stats.peak:
                self._stats.peak = self._stats.count
            return self._stats.count

    def decrement(self):
        with self._lock:
            if self._stats.count == 0:
                raise ValueError("no active connections")
            self._stats.count -= 1
            return self._stats.count
''', "self._stats.count", "self._stats.peak"),
}
# a count that is the length of a list: no plain int holds it, so scenarios run from the state the API reached
LIST_LENGTH = _layout('''    def __init__(self):
        self._lock = threading.Lock()
        self._open = []
        self.peak = 0

    def increment(self):
        with self._lock:
            self._open.append(len(self._open))
            self.peak = max(self.peak, len(self._open))
            return len(self._open)

    def decrement(self):
        with self._lock:
            if not self._open:
                raise ValueError("no active connections")
            self._open.pop()
            return len(self._open)
''', "len(self._open)", "self.peak").replace("            len(self._open) = 0\n", "            self._open.clear()\n")


def _starts_used(runtime, source: str, seed: int):
    """The explorer's and the real-threads run's verdicts on ``source``, and whether each scenario (and the real-threads
    run) ran from its planned start (True) or from the state the API reached (False)."""
    plan = explore_plan(HARD.stress, SECRET.rng("classic", "hard", seed, "verdict"))
    with runtime.sandbox.start(source, HARD.filename, HARD.module) as run:
        assert run.load_error is None
        reply = run.explore(plan)
    with runtime.sandbox.start(source, HARD.filename, HARD.module) as run:
        hammered = run.hammer(plan["hammer"])
    planned = {o["scenario"]: o["start_used"] == plan["scenarios"][o["scenario"]]["start_state"] for o in reply["schedules"]}
    above = {i for i, s in enumerate(plan["scenarios"]) if s["start_state"] != [0, 0]}
    return judge_exploration(plan, reply, source), judge_hammer(plan, hammered), planned, above, hammered["start_used"] == plan["hammer"]["start_state"]


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_correct_counters_with_unusual_state_layouts_start_where_planned_and_pass(runtime, name):
    for seed in range(5):
        outcome, real, planned, above, hammer_planned = _starts_used(runtime, LAYOUTS[name], seed)
        assert outcome.passed, f"{name}, seed {seed}: {outcome.message}"
        assert real == "", f"{name}, seed {seed}: {real}"
        assert all(planned.values()) and above <= set(planned) and hammer_planned, f"{name}, seed {seed}: a start was not set"


def test_a_counter_whose_state_cannot_be_set_runs_from_the_state_its_api_reached_and_passes(runtime):
    for seed in range(5):
        outcome, real, planned, above, hammer_planned = _starts_used(runtime, LIST_LENGTH, seed)
        assert outcome.passed and real == "", (outcome.message, real)
        assert not any(planned[i] for i in above) and not hammer_planned  # every start above zero fell back


def _starts_module():
    spec = importlib.util.spec_from_file_location("_adbg_hammer_test", EXPLORER.parent / "hammer.py")
    assert spec is not None and spec.loader is not None
    hammer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hammer)
    return hammer


def _counter_class(source: str):
    namespace: dict = {}
    exec(compile(source, "connection_counter.py", "exec"), namespace)  # noqa: S102 - a module of this test file
    return namespace["ConnectionCounter"]


def test_a_start_is_set_in_the_state_with_its_calls_counted_and_read_back_through_the_api():
    starts = _starts_module().Starts(_counter_class(LAYOUTS["properties over other names, an RLock and counters of calls"]))
    target, used = starts.prepare([123_456_789, 223_456_789], 11, 1_000_000_000)
    assert used == [123_456_789, 223_456_789]
    assert (target.get_count(), target.get_peak()) == (123_456_789, 223_456_789)
    # 11 warm-up calls made (6 increments, 5 decrements), then a billion more counted, half of each
    assert (target._calls, target._opened, target._closed) == (1_000_000_011, 500_000_006, 500_000_005)
    assert (target.increment(), target.get_peak(), target.decrement(), target.decrement()) == (123_456_790, 223_456_789, 123_456_789, 123_456_788)
    # no start needed: nothing is set, and a fresh object after its warm-up is returned as it is
    target, used = starts.prepare([1, 1], 3)
    assert used == [1, 1] and (target._calls, target._active, target._high_water) == (3, 1, 1)


def test_a_start_that_cannot_be_set_is_the_state_the_warm_up_reached():
    starts = _starts_module().Starts(_counter_class(LIST_LENGTH))
    target, used = starts.prepare([5_000, 9_000], 10, 10**6)
    assert used == [0, 1] and (target.get_count(), target.get_peak()) == (0, 1)
    target, used = starts.prepare([5_000, 9_000], 7)
    assert used == [1, 1] and (target.get_count(), target.get_peak()) == (1, 1)


def test_the_plan_draws_start_states_warm_ups_and_calls_over_a_wide_range_from_the_secret():
    spec = HARD.stress
    plans = [explore_plan(spec, SECRET.rng("classic", "hard", seed, "verdict")) for seed in range(20)]
    decades = set()
    for plan in plans:
        sweeps = [s for s in plan["scenarios"] if s.get("sweep")]
        # the boundary sweeps start at zero with no warm-up, as before
        for scenario in sweeps[:5]:
            assert (scenario["start_state"], scenario["warmup"], scenario["calls"]) == ([0, 0], 0, 0)
        # two sweeps start at a count of 10**8..10**9, with 2 * 10**6..10**9 calls counted: reset racing a decrement, and
        # increments racing on the peak at the count
        high = sweeps[5:]
        assert [tuple(map(tuple, s["threads"])) for s in high] == [(("reset",), ("decrement",)), (("increment",), ("increment",))]
        for scenario in high:
            count, peak = scenario["start_state"]
            assert 10**8 <= count <= peak and count <= 10**9 and 2 * 10**6 <= scenario["calls"] <= 10**9 and scenario["warmup"] >= 1
        assert high[1]["start_state"][0] == high[1]["start_state"][1]
        pct = [s for s in plan["scenarios"] if not s.get("sweep")]
        zero = [s for s in pct if s["start_state"] == [0, 0]]
        assert len(zero) == len(pct) // 2 and all(s["warmup"] == s["calls"] == 0 for s in zero)
        above = [s for s in pct if s["start_state"] != [0, 0]]
        assert all(1 <= s["start_state"][0] <= s["start_state"][1] and s["start_state"][0] <= 10**9 for s in above)
        assert all(1 <= s["warmup"] <= 256 and 1 <= s["calls"] <= 10**9 for s in above)
        decades |= {len(str(s["start_state"][0])) for s in above}
        hammer = plan["hammer"]
        assert 1 <= hammer["start_state"][0] <= hammer["start_state"][1] and hammer["warmup"] >= 1_000 and 1 <= hammer["calls"] <= 10**9
    assert decades == set(range(1, 10))  # PCT scenarios start in every decade from 1 to 10**9
    assert any(s["calls"] >= 10**8 for p in plans for s in p["scenarios"] if not s.get("sweep"))
    # from the secret: the same secret and seed give the same plan, another secret other starts
    again = explore_plan(spec, SECRET.rng("classic", "hard", 0, "verdict"))
    other = explore_plan(spec, ServerSecret("another server's secret, 32+ chars").rng("classic", "hard", 0, "verdict"))
    assert again == plans[0]
    assert [s["start_state"] for s in other["scenarios"]] != [s["start_state"] for s in plans[0]["scenarios"]]
    assert other["hammer"]["start_state"] != plans[0]["hammer"]["start_state"]


def test_the_trusted_side_judges_from_the_start_the_child_used_and_accepts_only_the_planned_one_or_the_apis():
    scenario = {"setup": ["increment"], "threads": [["increment"], ["decrement"]], "sweep": True, "start_state": [500, 700], "warmup": 3, "calls": 9}
    plan = {"scenarios": [scenario]}

    def run(first: int, k: int, start: list[int] | None, count: int, peak: int, results: list) -> dict:
        observation = {"scenario": 0, "first": first, "preempt_at": k, "first_steps": 1, "stopped": "", "count": count, "peak": peak,
                       "results": results, "equivalent": []}
        return observation if start is None else observation | {"start_used": start}

    def verdict(start: list[int] | None, count: int, peak: int, results: list) -> str:
        return judge_exploration(plan, {"schedules": [run(f, k, start, count, peak, results) for f in (0, 1) for k in (0, 1)]}, "").message

    # from the planned start: setup 501, then +1 -1
    planned = [[["increment", 502, ""]], [["decrement", 501, ""]]]
    assert verdict([500, 700], 501, 700, planned) == "4 interleavings: no update was lost"
    assert verdict(None, 501, 700, planned) == "4 interleavings: no update was lost"  # no report: the planned start
    # from the state three warm-up calls reach (count 1, peak 1): setup 2, then +1 -1
    assert verdict([1, 1], 2, 3, [[["increment", 3, ""]], [["decrement", 2, ""]]]) == "4 interleavings: no update was lost"
    # the same results judged from the other start are wrong; any other start is refused
    assert verdict([1, 1], 501, 700, planned).endswith("updates were lost under concurrency (the final count is wrong).")
    for start in ([0, 0], [True, 1], [501, 700], "planned"):
        assert verdict(start, 2, 3, [[["increment", 3, ""]], [["decrement", 2, ""]]]).endswith(": the concurrency check returned a malformed observation.")


def test_the_real_threads_verdict_counts_from_the_start_the_object_was_in():
    plan = {"hammer": {"threads": 4, "ops": 10, "seconds": 5.0, "start_state": [1000, 1500], "warmup": 5, "calls": 7}}
    planned = {"start_used": [1000, 1500], "increment": {"count": 1040, "peak": 1500, "errors": []},
               "decrement": {"count": 1000, "peak": 1500, "errors": []}}
    assert judge_hammer(plan, planned) == ""
    assert judge_hammer(plan, planned | {"increment": {"count": 1040, "peak": 1040, "errors": []}}).endswith("the peak lost an update (get_peak() is wrong)")
    # from the state five warm-up calls reach (count 1, peak 1)
    reached = {"start_used": [1, 1], "increment": {"count": 41, "peak": 41, "errors": []}, "decrement": {"count": 1, "peak": 41, "errors": []}}
    assert judge_hammer(plan, reached) == ""
    assert judge_hammer(plan, reached | {"start_used": [1000, 1500]}).endswith("updates were lost (the final count is wrong)")
    assert judge_hammer(plan, reached | {"start_used": [2, 2]}) == "the real-threads check returned a malformed report"
