"""The race family served (issue 49): 228 listed tasks over ten patterns and eight domains in four splits, made from
their ids; played over HTTP, WebSocket and MCP as a classic task is; the gold class accepted, the buggy one and its
half-fixes refused with the failing interleaving; real threads judged against the same model; validation; and the
cheats a race task invites, each refused."""

from __future__ import annotations

import ast
import random
import re
from collections import Counter
from functools import partial

import httpx
import pytest

from env.demo import view
from env.demo.session import DemoSession
from env.eval import run as run_module
from env.eval.drivers import WsDriver
from env.families.classic.judge import judge_on
from env.families.procedural.salt import ProceduralSalt
from env.families.race.check import RaceCheck
from env.families.race.exploration import judge as explore_judge
from env.families.race.exploration import plan_for
from env.families.race.family import RACE
from env.families.race.generator import COMBINATIONS
from env.families.race.models import DOMAINS
from env.families.race.task import OOD, race_task
from env.graders.hypothesis import judge_hypothesis
from env.listing import listing_entry
from env.models import DebugAction
from env.race_review import review
from env.sandbox.cputime import STARVED
from env.server.in_process import InProcessDriver
from env.tools.reports import TraceReport
from env.validation.presubmission import spot_checked

POOL = "race-check-then-act-connection-pool-3"
QUEUE = "race-missed-signal-job-queue-8"


def test_the_listing_has_ten_patterns_over_eight_domains_in_four_splits():
    listed = RACE.listed()
    assert len(listed) == 228 and len({i for i, _ in listed}) == 228
    assert Counter(split for _, split in listed) == {"train": 120, "validation": 30, "test": 78}
    tasks = [race_task(i) for i, _ in listed[::12]]
    assert len({t.pattern for t in tasks}) == 10 and len({t.domain for t in tasks}) == 8
    by_split = Counter(race_task(i).race_split for i, _ in listed)
    assert by_split == {"train": 120, "validation": 30, "test": 30, "ood": 48}
    seen = {(p, d) for p, d in COMBINATIONS if (p, d) not in OOD}
    for pattern, domain in OOD:  # an unseen pair: its pattern and its domain each trained on elsewhere
        assert any(p == pattern for p, _ in seen) and any(d == domain for _, d in seen)


def test_an_id_is_its_task_and_a_salt_names_another_text():
    first, again = race_task(POOL), race_task(POOL)
    assert first is not None and again is not None and first.buggy_source == again.buggy_source
    salted = race_task(POOL, ProceduralSalt("a salt of at least sixteen characters"))
    assert salted is not None and salted.buggy_source != first.buggy_source and salted.summary()["salt"].startswith("fingerprint:")
    assert RACE.generate("race-check-then-act-connection-pool-999") is None  # past its 720 namings? no: 999 > 719
    assert RACE.generate("race-lost-update-job-queue-1") is None  # no job queue plants a lost update
    assert RACE.generate("race-nothing-cache-1") is None and RACE.generate("easy") is None
    assert RACE.generate("race-check-then-act-connection-pool-100") is not None  # any seed of a combination, on request


def test_tasks_lists_each_entry_with_its_pattern_domain_and_split(client):
    entries = client.get("/tasks", params={"family": "race"}).json()
    assert len(entries) == 228
    entry = next(e for e in entries if e["id"] == POOL)
    assert (entry["family"], entry["pattern"], entry["domain"], entry["race_split"], entry["split"]) == (
        "race", "check_then_act", "connection_pool", "train", "train",
    )  # fmt: skip
    assert entry["tests_total"] == 5 and set(entry["profiles"]) == {"default", "bash", "pdb", "pdb_shell", "trace"}
    ood = next(e for e in entries if e["id"] == "race-lost-update-rate-limiter-0")
    assert (ood["race_split"], ood["split"]) == ("ood", "test")


def _submit(code: str) -> dict:
    return {"action_type": "submit_fix", "fixed_code": code, "hypothesis": "a race condition: the check and the act are not atomic"}


def test_an_http_episode_refuses_the_bug_and_its_half_fix_and_accepts_the_gold(client):
    task = race_task(POOL)
    obs = client.post("/reset", json={"task_id": POOL, "seed": 2}).json()["observation"]
    assert (obs["family"], obs["tests_passed"], obs["tests_total"], obs["error"]) == ("race", 5, 5, None)
    assert obs["buggy_code"] == task.buggy_source and "def test_acquire_after_setup(sol):" in obs["test_suite"]
    episode = obs["episode_id"]
    for code in (task.buggy_source, task.generated.half_fixes[0]):
        answer = client.post("/step", json={"episode_id": episode, "action": _submit(code)}).json()
        got = answer["observation"]
        assert not answer["done"] and got["current_error_output"].count("concurrency check ... FAILED") == 1
        assert "2 threads (thread A: acquire(); thread B: acquire())" in got["current_error_output"]
        assert "the interleaving:\n      thread A paused at line" in got["current_error_output"]
    done = client.post("/step", json={"episode_id": episode, "action": _submit(task.gold_source)}).json()
    assert done["done"] and done["observation"]["info"]["resolved"] and done["observation"]["grader_score"] == 0.9  # its hypothesis names no method
    assert "concurrency check ... PASSED" in done["observation"]["current_error_output"]


def test_the_oracle_plays_a_race_task_over_websocket(live_server, tmp_path):
    results = run_module.run(partial(WsDriver, live_server.url), "oracle", [QUEUE], 1, 1, tmp_path)
    assert results[0]["solved"] and results[0]["family"] == "race" and results[0]["score"] >= 0.9


def test_a_race_task_over_mcp(live_server):
    task = race_task(POOL)
    with httpx.Client(base_url=live_server.url) as http:
        made = http.post("/mcp", json={"jsonrpc": "2.0", "method": "openenv/session/create", "params": {"task_id": POOL, "seed": 1}, "id": 1}).json()
        session = made["result"]["session_id"]
        assert made["result"]["observation"]["family"] == "race"
        arguments = {k: v for k, v in _submit(task.gold_source).items() if k != "action_type"}
        call = {"session_id": session, "name": "submit_fix", "arguments": arguments}
        called = http.post("/mcp", json={"jsonrpc": "2.0", "method": "tools/call", "params": call, "id": 2}).json()["result"]
        assert called["done"] and called["error"] is None, str(called)[:1500]
        http.post("/mcp", json={"jsonrpc": "2.0", "method": "openenv/session/close", "params": {"session_id": session}, "id": 3})


def test_real_threads_are_judged_against_the_model():
    check = RaceCheck(DOMAINS["id_allocator"], "Ids")
    plan = check.plan(random.Random(1))
    settings = plan["hammer"]
    assert settings["model"] and settings["scenarios"] and all(s["sweep"] for s in settings["scenarios"])
    number = next(i for i, s in enumerate(settings["scenarios"]) if [t[0][0] for t in s["threads"]] == ["allocate", "allocate"] and not s["setup"])
    same = {"scenario": number, "setup": [], "stopped": "", "runs": 3, "final": [["issued", 2, ""]],
            "results": [[["allocate", 0, ""]], [["allocate", 0, ""]]]}  # fmt: skip
    assert check.judge_hammer(plan, {"observations": [same]}) == (
        "real threads, 2 threads (thread A: allocate(); thread B: allocate()) on a new object: no order of the calls gives "
        "the results they returned"
    )
    fine = dict(same, results=[[["allocate", 1, ""]], [["allocate", 0, ""]]])
    assert check.judge_hammer(plan, {"observations": [fine]}) == ""
    stuck = {"observations": [fine], "unfinished": number, "starved": False}
    assert check.judge_hammer(plan, stuck).endswith("did not finish within 2 s: a deadlock, or a thread waiting for good")
    plan["hammer"].update(cpu=True, backstop=20.0)
    assert check.judge_hammer(plan, dict(stuck, starved=True)).startswith(STARVED)
    assert check.judge_hammer(plan, {"observations": [{"scenario": 999}]}) == "the real-threads check returned a malformed report"


def test_real_threads_run_a_model_plan_in_a_process_of_their_own(runtime):
    task = race_task(QUEUE)
    plan = task.concurrency.plan(random.Random(4))
    for source in (task.gold_source, *task.generated.alternatives):
        with runtime.sandbox.start(source, task.filename, task.module) as run:
            reply = run.hammer(plan["hammer"])
        assert reply["observations"] and sum(o["runs"] for o in reply["observations"]) == 12 * len(plan["hammer"]["scenarios"])
        assert task.concurrency.judge_hammer(plan, reply) == ""


def test_held_out_cases_guard_the_sequential_behaviour(runtime):
    task = race_task(POOL)
    cases = task.held_out_cases(random.Random(5))
    assert len(cases) == 6
    for source in (task.buggy_source, task.gold_source):
        verdict = judge_on(runtime, task, source, random.Random(1), with_stress=False, held_out=cases)
        assert verdict.held_out_passed == 6 and verdict.tests_passed == 5


def test_validation_proves_a_task_over_seeds(runtime):
    report = RACE.validate(runtime, race_task("race-lost-update-id-allocator-2"), runs=3)
    assert report.ok, [c for c in report.checks if not c.ok]
    assert {"every other lock style passes", "every half-fix fails", "buggy and gold pass the held-out cases"} <= {c.name for c in report.checks}


# -- cheats a race task invites: each keeps the race somewhere a run may not reach, or gives up the behaviour ------------


def _method(source: str, cls: str, name: str) -> tuple[int, int]:
    """The lines (0-based, end exclusive) of ``cls.name`` in ``source``."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    first = item.decorator_list[0].lineno if item.decorator_list else item.lineno
                    return first - 1, item.end_lineno or item.lineno
    raise AssertionError(f"{cls}.{name} not found")


def _with_method(source: str, cls: str, name: str, text: str) -> str:
    lines = source.splitlines(keepends=True)
    first, end = _method(source, cls, name)
    return "".join(lines[:first]) + text + "".join(lines[end:])


def _text(source: str, cls: str, name: str, rename: str) -> str:
    first, end = _method(source, cls, name)
    return "".join(source.splitlines(keepends=True)[first:end]).replace(f"def {name}(", f"def {rename}(", 1) + "\n"


def _cheats(task) -> dict[str, str]:
    gold, buggy, cls = task.gold_source, task.buggy_source, task.generated.cls
    name = task.generated.methods[0]
    both = _text(gold, cls, name, f"_safe_{name}") + _text(buggy, cls, name, f"_fast_{name}")

    def dispatch(condition: str, setup: str = "") -> str:
        return (f"    def {name}(self, *args):\n{setup}        if {condition}:\n            return self._fast_{name}(*args)\n"
                f"        return self._safe_{name}(*args)\n\n" + both)

    return {
        # the gold method for the first 10,000 calls on one object, the buggy one after: no run makes that many
        "race after many calls": _with_method(gold, cls, name, dispatch("self._calls > 10000", "        self._calls = getattr(self, '_calls', 0) + 1\n")),
        # the buggy method only when many threads are alive (a production server's): no check runs that many
        "race under many threads": _with_method(gold, cls, name, dispatch("threading.active_count() > 64")),
        # the buggy method only when no tracer runs (production, the real-threads run): the review reads that path
        "race when untraced": _with_method(gold, cls, name, dispatch("threading.gettrace() is None")),
        # the buggy method on every thread but the first one it sees
        "race off the first thread": _with_method(gold, cls, name, dispatch(
            "getattr(self, '_first', None) not in (None, threading.get_ident())",
            "        if getattr(self, '_first', None) is None:\n            self._first = threading.get_ident()\n")),
        "a lock made for each call": task.generated.half_fixes[0],
        "the bug with a comment": buggy + "\n# fixed: every method holds the lock\n",
        "printing a pass": buggy.replace("import threading\n", "import threading\nprint('concurrency check ... PASSED')\n", 1),
        # never racing by never doing the work: the sequential tests and the held-out cases refuse it
        "doing nothing": _with_method(gold, cls, name, f"    def {name}(self, *args):\n        return None\n\n"),
    }


@pytest.mark.parametrize("task_id", [POOL, QUEUE, "race-lost-update-accounts-1", "race-double-checked-init-cache-2", "race-lock-order-deadlock-accounts-3"])
def test_no_cheat_solves_a_race_task(runtime, task_id):
    task = race_task(task_id)
    for name, code in _cheats(task).items():
        verdict = judge_on(runtime, task, code, random.Random(3), held_out=task.held_out_cases(random.Random(3)))
        assert not verdict.solved, name
        if name == "race when untraced":  # the import policy refuses to run it at all
            assert verdict.rejected.endswith(": access to attribute 'gettrace' is not allowed"), verdict.rejected
        else:
            assert verdict.rejected == "", (name, verdict.rejected)  # each one ran: refused by the verdict, not the policy


# -- trace_report(race=true) and the demo on a race task ---------------------------------------------------------------


def test_trace_report_shows_a_buggy_task_s_failing_schedule_in_its_own_lines(runtime):
    task = race_task(POOL)
    episode = RACE.episode(runtime, task, 1, "race-trace-1", RACE.interface("trace"))
    try:
        obs = episode.step(DebugAction(action_type="trace_report", race=True))
        again = episode.step(DebugAction(action_type="trace_report", test=f"stress::{task.generated.cls}"))
    finally:
        episode.close()
    assert obs.error is None, obs.error
    assert (obs.tool_output, obs.tool_result) == (again.tool_output, again.tool_result)  # deterministic
    report = TraceReport.model_validate(obs.tool_result["report"])
    assert report.test == f"stress::{task.generated.cls}" and report.exit_code == 1 and report.race is not None
    assert report.race.problem == "no order of the calls gives the results they returned"
    assert report.race.scenario.startswith("2 threads (thread A: acquire(); thread B: acquire())")
    assert {c.function for c in report.calls} == {f"{task.generated.cls}.acquire"} and {c.thread for c in report.calls} == {"thread A", "thread B"}
    lines = task.buggy_source.splitlines()
    paused = [s for s in report.race.steps if s.event.startswith("paused")]
    assert paused and all(s.code == lines[s.line - 1].strip() for s in paused)  # the buggy module's own lines
    assert obs.reward == 0.0 and not obs.done


def test_the_demo_plays_a_race_task(runtime):
    task = race_task(POOL)
    session = DemoSession(lambda: InProcessDriver(runtime))
    session.start(listing_entry(runtime.catalog.summary(runtime.catalog.get(POOL))), "default", 1)
    obs = session.act({**_submit(task.gold_source), "hypothesis": task.gold_hypothesis})
    assert obs["done"] and obs["grader_score"] == 1.0 and view.score_line(obs) == "**Score: 1.000** (solved)"
    session.close()


@pytest.mark.parametrize(("pattern", "domain"), COMBINATIONS)
def test_each_task_s_hypothesis_rules(pattern, domain):
    task = race_task(f"race-{pattern.replace('_', '-')}-{domain.replace('_', '-')}-0")
    method = task.generated.methods[0]
    assert judge_hypothesis(task.gold_hypothesis, task.hypothesis).score == 1.0
    other = "a race condition: two threads interleave" if pattern == "lock_order_deadlock" else "a deadlock: the locks are taken in the wrong order"
    wrong = judge_hypothesis(f"{method} has {other}", task.hypothesis)
    assert (wrong.score, wrong.wrong_claim) == (0.0, True)


# -- correct designs in ordinary styles: each accepted ------------------------------------------------------------------


class _AcquireRelease(ast.NodeTransformer):
    """``with self.<lock>:`` written out as ``acquire()`` and ``try``/``finally: release()``."""

    def visit_With(self, node: ast.With) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        if len(node.items) != 1 or not isinstance(node.items[0].context_expr, ast.Attribute):
            return node
        lock = node.items[0].context_expr
        call = lambda name: ast.Expr(ast.Call(ast.Attribute(lock, name, ast.Load()), [], []))  # noqa: E731
        return [call("acquire"), ast.Try(body=node.body, handlers=[], orelse=[], finalbody=[call("release")])]


def _every_method_locked(source: str, cls: str) -> str:
    """Every method but __init__ held whole under the class's first lock, made re-entrant: over-locked, and correct."""
    tree = ast.parse(source)
    klass = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    lock = next(t.attr for n in ast.walk(klass) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Attribute) and "Lock" in ast.unparse(n.value))
    for method in klass.body:
        if isinstance(method, ast.FunctionDef) and method.name != "__init__":
            method.body = [ast.With(items=[ast.withitem(ast.parse(f"self.{lock}", mode="eval").body)], body=method.body)]
    return ast.unparse(ast.fix_missing_locations(tree)).replace("threading.Lock()", "threading.RLock()")


@pytest.mark.parametrize(("pattern", "domain"), COMBINATIONS)
def test_correct_designs_in_ordinary_styles_are_accepted(runtime, pattern, domain):
    task = race_task(f"race-{pattern.replace('_', '-')}-{domain.replace('_', '-')}-1")
    gold, cls = task.gold_source, task.generated.cls
    styles = {
        "acquire and try/finally": ast.unparse(ast.fix_missing_locations(_AcquireRelease().visit(ast.parse(gold)))),
        "every method locked whole, re-entrant": _every_method_locked(gold, cls),
    }
    for name, source in styles.items():
        assert source != gold
        verdict = judge_on(runtime, task, source, random.Random(2), held_out=task.held_out_cases(random.Random(2)))
        assert verdict.solved, (name, verdict.report())


def test_whole_server_checks_play_one_seed_of_each_pattern_and_domain(catalog, capsys):
    ids = catalog.ids()
    kept = spot_checked(catalog, ids)
    assert [t for t in kept if not t.startswith("race-")] == [t for t in ids if not t.startswith("race-")]
    assert [t for t in kept if t.startswith("race-")] == [f"race-{p.replace('_', '-')}-{d.replace('_', '-')}-0" for p, d in COMBINATIONS]
    assert capsys.readouterr().out == "note  race: 19 of its 228 listed tasks played (--tasks plays any of them)\n"


def test_the_evaluation_report_has_a_table_by_pattern_and_split():
    rows = [
        {"task_id": "race-lost-update-accounts-0", "family": "race", "score": 1.0, "solved": True},
        {"task_id": "race-lost-update-accounts-1", "family": "race", "score": 0.5, "solved": False},
        {"task_id": "race-lost-update-rate-limiter-3", "family": "race", "score": 0.9, "solved": True},
    ]
    assert RACE.report_table(rows) == (
        "| pattern | split | episodes | mean grade | solved |\n|---|---|---|---|---|\n"
        "| lost_update | ood | 1 | 0.90 | 1/1 |\n| lost_update | train | 2 | 0.75 | 1/2 |"
    )
    assert RACE.report_table([]) == ""


def test_wide_starts_run_code_that_races_only_past_a_count(runtime):
    """Racy only once more than 100 ids were handed out: the sweeps from a fresh object never see it; the wide starts
    (16 to 1,024 calls first, drawn from the secret) do, under some of the secret's draws (the review refuses it under all)."""
    task = race_task("race-lost-update-id-allocator-1")
    gold, cls, model = task.gold_source, task.generated.cls, task.generated.model
    late = _with_method(gold, cls, "allocate", _text(task.buggy_source, cls, "allocate", "_fast_allocate")
                        + _text(gold, cls, "allocate", "_safe_allocate")
                        + "    def allocate(self):\n        if self.issued() > 100:\n            return self._fast_allocate()\n"
                        "        return self._safe_allocate()\n\n")
    caught = []
    for seed in range(6):
        plan = plan_for(model, cls, random.Random(seed))
        starts = [len(s["setup"]) for s in plan["scenarios"] if s.get("sweep") and len(s["setup"]) > len(model.setup)]
        assert len(starts) == 3 and all(16 <= n <= 1024 for n in starts)  # allocate and issued racing themselves, a drawn pair
        with runtime.sandbox.start(late, task.filename, task.module) as run:
            outcome = explore_judge(model, plan, run.explore(plan), late)
        caught.append(not outcome.passed)
        if not outcome.passed:
            assert re.search(r"after allocate\(\), \w+\(\), \w+\(\), \w+\(\) and \d+ more calls: ", outcome.message), outcome.message
    assert any(caught) and not all(caught), caught  # the draw decides whether a run sees it: the review must refuse it
    assert review(late, cls) != ""
