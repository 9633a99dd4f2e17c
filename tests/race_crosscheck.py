"""An independent cross-check of the hard task's race verdict: frontrun's DPOR explorer on every variant.

    frontrun python -m tests.race_crosscheck [--only NAME ...] [--budget 3.0]    # one JSON document on stdout

``frontrun`` (PyPI, a dev dependency) enumerates the thread interleavings of each scenario below with
dynamic partial-order reduction, and checks the final state against every sequential order of the
same calls (this module's own model of the specification, not the project's). A variant is

* ``racy``: some interleaving of some scenario gives results no sequential order gives (frontrun's
  counterexample comes with it);
* ``correct``: every scenario was explored to the end (no preemption bound, no budget hit) and held;
* ``inconclusive``: frontrun could not finish a scenario (a run timed out, the budget ran out, the
  variant could not be loaded) and nothing was violated.

frontrun refuses to explore outside its CLI environment (``frontrun.cli.require_active``): this module
runs under the ``frontrun`` wrapper in .venv/bin, which tests/test_race_frontrun.py and
bench/bench_race_crosscheck.py start as a subprocess, so the suite itself never patches threading.
Each variant is explored in a forked child, and the scenarios after a timed-out run in a fresh one:
frontrun cannot kill a timed-out worker thread, and a leftover thread must not disturb what follows.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import multiprocessing
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, TypedDict

Kind = Literal["racy", "correct"]
Verdict = Literal["racy", "correct", "inconclusive"]
ScenarioOutcome = Literal["violated", "held", "inconclusive"]

# The dicts of tests/race_variants.py this compares, by kind. EVASIVE is left out on purpose: frontrun is a
# cooperative tool (its tracer is sys.settrace, visible to the code it explores), not an adversarial judge.
KIND_OF_DICT: dict[str, Kind] = {"RACY": "racy", "CORRECT": "correct"}


def variants() -> list[tuple[str, Kind, str]]:
    """(name, kind, source) of every racy and correct variant of tests/race_variants.py.

    The file may declare its grouping as ``KINDS = {"RACY": "racy", "C_LEVEL": "racy", "EVASIVE": "evasive",
    ...}`` (dict name -> kind); besides, every upper-case dict whose name ends in ``RACY`` or ``CORRECT``
    (``C_LEVEL_RACY``, ...) is taken with that kind. Dicts marked ``evasive`` (EVASIVE, when there is no KINDS)
    are skipped; any other dict of ConnectionCounter modules is an error, so none is left out unnoticed.
    """
    from tests import race_variants

    declared = getattr(race_variants, "KINDS", None)
    groups: dict[str, str] = dict(declared) if isinstance(declared, dict) else {"EVASIVE": "evasive"}
    for attr, value in vars(race_variants).items():
        if attr.isupper() and isinstance(value, dict) and attr not in groups:
            for suffix, kind in KIND_OF_DICT.items():
                if attr.endswith(suffix):
                    groups[attr] = kind
            if attr not in groups and any("class ConnectionCounter" in str(source) for source in value.values()):
                # a new dict of variants must not drop out of the cross-check unnoticed
                raise ValueError(f"tests/race_variants.py's {attr} has no kind: name it {attr}_RACY or {attr}_CORRECT, or list it in KINDS")
    found: list[tuple[str, Kind, str]] = []
    for attr, marked in groups.items():
        if marked not in ("racy", "correct"):
            continue
        table = getattr(race_variants, attr)
        for name, source in table.items():
            found.append((name, "racy" if marked == "racy" else "correct", source))
    names = [name for name, _, _ in found]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:  # the JSON and the test key results by name
        raise ValueError(f"variant names must be unique across the dicts of tests/race_variants.py: {duplicates}")
    return found


# -- the scenarios and the sequential model ------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    setup: tuple[str, ...]  # calls made on the fresh counter before the threads start
    threads: tuple[str, str]  # one call per thread


# Two threads, one call each, at the boundaries the project's check sweeps too: lost updates (counts 0, 1, 2),
# exactly one ValueError when two decrements race at count 1 and never a negative count, decrements and an
# increment at zero, the peak above a lowered count, and reset racing each update.
SCENARIOS: tuple[Scenario, ...] = (
    Scenario("two increments from count 0", (), ("increment", "increment")),
    Scenario("two decrements from count 2", ("increment", "increment"), ("decrement", "decrement")),
    Scenario("two decrements from count 1", ("increment",), ("decrement", "decrement")),
    Scenario("an increment and a decrement from count 1", ("increment",), ("increment", "decrement")),
    Scenario("reset and an increment from count 1", ("increment",), ("reset", "increment")),
    Scenario("two decrements from count 0", (), ("decrement", "decrement")),
    Scenario("an increment and a decrement from count 0", (), ("increment", "decrement")),
    Scenario("two increments from count 1 with peak 2", ("increment", "increment", "decrement"), ("increment", "increment")),
    Scenario("reset and a decrement from count 1", ("increment",), ("reset", "decrement")),
)

# What one call gave: ("value", n) or ("raised", exception type name); reset's return value is unspecified.
Result = tuple[str, int | str | None]
# (each thread's result, final count, final peak)
Observation = tuple[tuple[Result, ...], int, int]


def _model(op: str, count: int, peak: int) -> tuple[int, int, Result]:
    """The specification of one call on (count, peak)."""
    if op == "increment":
        return count + 1, max(peak, count + 1), ("value", count + 1)
    if op == "decrement":
        if count == 0:
            return count, peak, ("raised", "ValueError")
        return count - 1, peak, ("value", count - 1)
    if op == "reset":
        return 0, peak, ("value", None)
    raise ValueError(f"unknown operation {op!r}")


def allowed(scenario: Scenario) -> frozenset[Observation]:
    """The observations of every sequential order of the scenario's calls."""
    count, peak = 0, 0
    for op in scenario.setup:
        count, peak, _ = _model(op, count, peak)
    found: set[Observation] = set()
    for order in itertools.permutations(range(len(scenario.threads))):
        c, p = count, peak
        results: list[Result] = [("value", None)] * len(scenario.threads)
        for index in order:
            c, p, results[index] = _model(scenario.threads[index], c, p)
        found.add((tuple(results), c, p))
    return frozenset(found)


# -- one exploration -----------------------------------------------------------------------------


class _Slot:
    """One thread's result: each thread writes only its own slot, so DPOR sees no conflict between the writes."""

    def __init__(self) -> None:
        self.result: Result | None = None


class _State:
    """What frontrun's ``setup`` builds for each interleaving: a fresh counter after the scenario's setup calls."""

    def __init__(self, cls: type, scenario: Scenario) -> None:
        self.counter = cls()
        for op in scenario.setup:
            getattr(self.counter, op)()
        self.slots = tuple(_Slot() for _ in scenario.threads)


def _worker(index: int, op: str) -> Callable[[_State], None]:
    def run(state: _State) -> None:
        # frontrun re-raises a worker's exception out of explore(): record it as the call's result instead
        try:
            value = getattr(state.counter, op)()
        except Exception as exc:
            state.slots[index].result = ("raised", type(exc).__name__)
            return
        state.slots[index].result = ("value", None if op == "reset" else value)

    return run


def _invariant(scenario: Scenario, expected: frozenset[Observation]) -> Callable[[_State], bool]:
    def holds(state: _State) -> bool:
        try:
            observed: Observation = (tuple(slot.result or ("missing", None) for slot in state.slots), state.counter.get_count(), state.counter.get_peak())
        except Exception as exc:  # check_invariant lets anything but AssertionError escape explore()
            raise AssertionError(f"reading the final state raised {type(exc).__name__}: {exc}") from exc
        if observed not in expected:
            # AssertionError's text becomes the head of frontrun's explanation
            raise AssertionError(f"{scenario.name}: observed {_describe(scenario, observed)}; a sequential order gives one of "
                                 + " | ".join(sorted(_describe(scenario, e) for e in expected)))
        return True

    return holds


def _describe(scenario: Scenario, observation: Observation) -> str:
    results, count, peak = observation
    calls = ", ".join(f"{op} -> {'raised ' + str(r[1]) if r[0] == 'raised' else r[1]}" for op, r in zip(scenario.threads, results, strict=True))
    return f"{calls}; count {count}, peak {peak}"


class ScenarioResult(TypedDict):
    scenario: str
    outcome: ScenarioOutcome
    interleavings: int
    seconds: float
    detail: str  # the counterexample (frontrun's interleaved trace), or why it is inconclusive
    schedule: list[int]  # the counterexample's thread per scheduling step


class VariantResult(TypedDict):
    name: str
    kind: Kind
    verdict: Verdict
    interleavings: int
    seconds: float
    scenarios: list[ScenarioResult]
    error: str


@dataclass(frozen=True)
class Subject:
    """What one cross-check explores: the module and class a variant defines, its scenarios (each with a ``name``), and
    how frontrun explores one scenario on the class (``explore(cls, scenario, budget)``)."""

    module: str
    cls: str
    scenarios: tuple[Any, ...]
    explore: Callable[[type, Any, float], ScenarioResult]


MAX_EXECUTIONS = 20_000
RUN_TIMEOUT = 1.0  # seconds one interleaving may take (frontrun's default is 5; these take 2-50 ms)


def explore_scenario(cls: type, scenario: Scenario, budget: float) -> ScenarioResult:
    """frontrun's DPOR over every interleaving of ``scenario`` on ``cls``, within ``budget`` seconds."""
    expected = allowed(scenario)
    workers = [_worker(i, op) for i, op in enumerate(scenario.threads)]
    return explore_with(scenario.name, lambda: _State(cls, scenario), workers, _invariant(scenario, expected), budget)


def explore_with(name: str, setup: Callable[[], Any], workers: list[Callable[[Any], None]], invariant: Callable[[Any], bool], budget: float) -> ScenarioResult:
    """frontrun's DPOR over every interleaving of ``workers`` on what ``setup`` builds, the ``invariant`` checked at the
    end of each, within ``budget`` seconds: held, violated (with the counterexample) or inconclusive (and why)."""
    import frontrun

    started = time.monotonic()
    result = frontrun.explore(
        setup=setup,
        workers=workers,
        invariant=invariant,
        preemption_bound=None,  # the default (2) bounds the search: a pass would not cover every interleaving
        max_executions=MAX_EXECUTIONS,
        total_timeout=budget,
        timeout_per_run=RUN_TIMEOUT,
        deadlock_timeout=RUN_TIMEOUT,
        reproduce_on_failure=0,  # replays are only a diagnostic here, and a replay that times out poisons the process
        detect_io=False,  # the classes do no I/O; the detector's reader thread and SQL parser warm-up cost time
    )
    seconds = time.monotonic() - started
    base: ScenarioResult = {"scenario": name, "outcome": "inconclusive", "interleavings": result.num_explored,
                            "seconds": round(seconds, 3), "detail": "", "schedule": []}
    if result.property_holds is False:
        schedule = result.counterexample if isinstance(result.counterexample, list) else []
        return base | {"outcome": "violated", "detail": result.explanation or "", "schedule": [int(s) for s in schedule]}
    if result.property_holds is None:
        return base | {"detail": result.inconclusive_reason or "frontrun gave no reason"}
    # explore() certifies a pass when total_timeout or max_executions stops the search early as well (thread
    # execution never reports exhaustion), so a pass that reached either limit is only "nothing found".
    if seconds >= budget:
        return base | {"detail": f"the {budget:g} s budget ran out after {result.num_explored} interleavings"}
    if result.num_explored >= MAX_EXECUTIONS:
        return base | {"detail": f"stopped at max_executions={MAX_EXECUTIONS}"}
    return base | {"outcome": "held"}


def load(source: str, directory: Path, subject: Subject | None = None) -> type:
    """The variant's class (the counter's: ConnectionCounter), its module executed from a real file with threading patched.

    A real file because frontrun traces only code whose file name is not ``<string>``-like; patched because
    frontrun swaps threading's primitives for its cooperative ones only while it explores, so a lock made
    at import time (a module-level lock) would be a real lock it cannot schedule around. ``frontrun pytest``
    patches for the whole session for the same reason.
    """
    from frontrun._cooperative import patch_locks, unpatch_locks

    subject = subject or COUNTER
    path = directory / f"{subject.module}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(subject.module, path)
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    patch_locks()
    try:
        spec.loader.exec_module(module)
    finally:
        unpatch_locks()
    cls = getattr(module, subject.cls)
    assert isinstance(cls, type)
    return cls


def _explore_in_child(connection: Connection, source: str, first: int, budget: float, subject: Subject) -> None:
    """In a forked child: load the variant, send each scenario's result from ``first`` on as it finishes (or the
    load error, as a string), and stop after a run that timed out: frontrun cannot kill the threads it left."""
    with tempfile.TemporaryDirectory(prefix="race-crosscheck-") as directory:
        try:
            cls = load(source, Path(directory), subject)
        except Exception as exc:
            connection.send(f"the variant failed to load: {type(exc).__name__}: {exc}")
            return
        for scenario in subject.scenarios[first:]:
            try:
                result = subject.explore(cls, scenario, budget)
            except Exception as exc:
                result = {"scenario": scenario.name, "outcome": "inconclusive", "interleavings": 0, "seconds": 0.0,
                          "detail": f"frontrun raised {type(exc).__name__}: {exc}", "schedule": []}
            connection.send(result)
            if result["outcome"] == "inconclusive" and "timed out" in result["detail"]:
                return
    connection.close()


def crosscheck(name: str, kind: Kind, source: str, budget: float, subject: Subject | None = None) -> VariantResult:
    """Every scenario on one variant, in forked children: one to start with, and a fresh one after any run that
    timed out or any child that overran its scenario's limit (then killed, and that scenario inconclusive)."""
    subject = subject or COUNTER
    scenarios = subject.scenarios
    started = time.monotonic()
    outcome: VariantResult = {"name": name, "kind": kind, "verdict": "inconclusive", "interleavings": 0, "seconds": 0.0, "scenarios": [], "error": ""}
    context = multiprocessing.get_context("fork")  # the parent has imported frontrun already: a fork is cheap
    limit = budget + 2 * RUN_TIMEOUT + 3.0  # a scenario's budget, its last run, the invariant and the load
    while len(outcome["scenarios"]) < len(scenarios) and not outcome["error"]:
        receiver, sender = context.Pipe(duplex=False)
        child = context.Process(target=_explore_in_child, args=(sender, source, len(outcome["scenarios"]), budget, subject), daemon=True)
        child.start()
        sender.close()
        try:
            while len(outcome["scenarios"]) < len(scenarios):
                if not receiver.poll(limit):
                    scenario = scenarios[len(outcome["scenarios"])].name
                    outcome["scenarios"].append({"scenario": scenario, "outcome": "inconclusive", "interleavings": 0, "seconds": limit,
                                                 "detail": f"the exploring process was killed after {limit:g} s", "schedule": []})
                    break
                message: ScenarioResult | str = receiver.recv()
                if isinstance(message, str):
                    outcome["error"] = message
                    break
                outcome["scenarios"].append(message)
        except EOFError:  # the child stopped after a timed-out run, or died: a fresh one goes on
            if not child.is_alive() and child.exitcode not in (0, None):
                outcome["error"] = f"the exploring process died (exit status {child.exitcode})"
        finally:
            child.join(timeout=RUN_TIMEOUT + 2.0)  # let it remove its temporary directory; a stuck one is killed
            if child.is_alive():
                child.kill()
                child.join()
            receiver.close()
    outcomes = {s["outcome"] for s in outcome["scenarios"]}
    complete = len(outcome["scenarios"]) == len(scenarios)
    outcome["verdict"] = "racy" if "violated" in outcomes else "correct" if complete and outcomes == {"held"} else "inconclusive"
    outcome["interleavings"] = sum(s["interleavings"] for s in outcome["scenarios"])
    outcome["seconds"] = round(time.monotonic() - started, 3)
    return outcome


COUNTER = Subject("connection_counter", "ConnectionCounter", SCENARIOS, explore_scenario)


def run_all(only: list[str] | None, budget: float) -> Iterator[VariantResult]:
    for name, kind, source in variants():
        if not only or name in only:
            yield crosscheck(name, kind, source, budget)


FRONTRUN = Path(sys.executable).parent / "frontrun"  # the console script pip installs beside the venv's python
ROOT = Path(__file__).resolve().parents[1]


def run_under_frontrun(only: list[str] | None = None, budget: float = 3.0, timeout: float = 180.0) -> list[VariantResult]:
    """``main``'s results, from a plain interpreter: this module run as a subprocess under frontrun's wrapper."""
    return frontrun_subprocess("tests.race_crosscheck", ["--budget", str(budget), *(["--only", *only] if only else [])], timeout)


def frontrun_subprocess(module: str, arguments: list[str], timeout: float) -> list[VariantResult]:
    """The results a cross-check module (this one, tests/race_family_crosscheck.py) prints, run under frontrun's wrapper."""
    if not FRONTRUN.exists():
        raise RuntimeError(f"{FRONTRUN} is missing: frontrun is a dev dependency (pip install -r requirements-dev.txt)")
    done = subprocess.run([str(FRONTRUN), sys.executable, "-m", module, *arguments], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"the frontrun cross-check exited with status {done.returncode}:\n{done.stderr[-3000:]}")
    results: list[VariantResult] = json.loads(done.stdout.strip().splitlines()[-1])["variants"]
    return results


def print_results(module: str, budget: float, results: Callable[[], Iterator[VariantResult]]) -> None:
    """What a cross-check module's ``main`` prints: one JSON document, under frontrun's wrapper only."""
    from frontrun.cli import is_active

    if not is_active():
        sys.exit(f"run this under frontrun's wrapper: {FRONTRUN} {sys.executable} -m {module}")
    import frontrun

    print(json.dumps({"frontrun": frontrun.__version__, "budget": budget, "variants": list(results())}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="variant names to explore (default: every racy and correct one)")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds of exploration per scenario at most")
    args = parser.parse_args()
    print_results("tests.race_crosscheck", args.budget, lambda: run_all(args.only, args.budget))


if __name__ == "__main__":
    main()
