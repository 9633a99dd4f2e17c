"""The interface ablation (``python -m env.eval ablate``): the same tasks and seeds under each profile, with pass@k,
passX@2, tool calls per verb and cost per solve; resumable; unknown or unusable profiles refused with exit status 2."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from env.agents import AGENTS
from env.agents.oracle import OracleAgent
from env.eval import __main__ as main_module
from env.eval import ablate as ablate_module
from env.eval import run as run_module
from env.eval.__main__ import main
from env.eval.metrics import pass_at_k, passx_at_k
from env.eval.run import seed_for
from env.server.in_process import InProcessDriver

TASKS = ["easy", "medium"]  # classic tasks: a verdict takes milliseconds
# Which (profile, task, run) the scripted agent solves: under bash 2 of easy's runs and 1 of medium's, under pdb 1 and 0.
SOLVES = {("bash", "easy", 0), ("bash", "easy", 1), ("bash", "medium", 0), ("pdb", "easy", 1)}
RUN_OF = {(t, random.Random(seed_for(t, r)).random()): r for t in TASKS for r in range(2)}  # the harness seeds the agent's generator


class Scripted(OracleAgent):
    """Deterministic: one look with the profile's own tool (run_bash, or the debug_start that opens pdb's edit gate), then the gold fix where
    ``SOLVES`` says so, else give_up; reports 10 + 5 tokens a step."""

    def begin(self, task: dict[str, Any], observation: dict[str, Any], rng: random.Random) -> None:
        super().begin(task, observation, rng)  # the oracle's plan: the gold fix (after a debug_start under the edit gate)
        profile = "bash" if "run_bash" in {t["function"]["name"] for t in task["tools"]} else "pdb"
        run = RUN_OF[(task["id"], rng.random())]  # agents are not told the seed: the generator seeded with it tells
        look = {"action_type": "run_bash", "command": "ls"} if profile == "bash" else self.plan[0]  # the oracle's debug_start
        fix = [a for a in self.plan if a["action_type"] == "submit_fix"]
        self.plan = [look, *(fix if (profile, task["id"], run) in SOLVES else [{"action_type": "give_up"}])]

    def usage(self) -> dict[str, int]:
        return {"prompt": 10, "completion": 5}


class BashOnly(Scripted):
    profiles = ("bash",)


@pytest.fixture()
def agents(runtime, monkeypatch):
    """The scripted agents registered for the test, and the command playing on the suite's runtime (and secret)."""
    from env.runtime import Runtime

    scripted = {**AGENTS, "scripted": Scripted, "bash-only": BashOnly}
    for module in (run_module, ablate_module, main_module):
        monkeypatch.setattr(module, "AGENTS", scripted)
    monkeypatch.setattr(Runtime, "from_env", classmethod(lambda cls, *args, **kwargs: runtime))


def test_the_ablation_end_to_end_and_resumed(runtime, tmp_path, agents, capsys):
    summary = ablate_module.ablate(lambda: InProcessDriver(runtime), "scripted", ["bash", "pdb"], TASKS, 2, 2, tmp_path)
    assert "ablation: 0 already done, 8 to play (2 task(s) x 2 run(s) x 2 profiles)" in capsys.readouterr().err
    bash, pdb = summary["arms"]["bash"], summary["arms"]["pdb"]
    assert (summary["runs"], summary["tasks"], bash["arm"], pdb["arm"]) == (2, TASKS, "scripted@bash", "scripted@pdb")
    assert (bash["episodes"], bash["solved"], pdb["episodes"], pdb["solved"]) == (4, 3, 4, 1)
    assert {t: v["solved"] for t, v in bash["by_task"].items()} == {"easy": 2, "medium": 1}
    assert {t: v["solved"] for t, v in pdb["by_task"].items()} == {"easy": 1, "medium": 0}
    # pass@k: the mean over tasks of 1 - C(n-c, k) / C(n, k), n = 2
    assert bash["pass_at_k"] == {"1": 0.75, "2": 1.0} and pdb["pass_at_k"] == {"1": 0.25, "2": 0.5}
    assert bash["by_task"]["medium"]["pass_at_k"]["1"]["value"] == pass_at_k(2, 1, 1) == 0.5
    lo, hi = bash["by_task"]["medium"]["pass_at_k"]["1"]["ci95"]
    assert 0 < lo < 0.5 < hi < 1
    # passX@2: easy 1 - (0/2)(1/2) = 1, medium 1 - (1/2)(2/2) = 0.5; the study's comparison is against each one's pass@2
    assert summary["pairs"] == [{"profiles": ["bash", "pdb"], "passx_at_2": 0.75, "pass_at_2": {"bash": 1.0, "pdb": 0.5}}]
    assert passx_at_k([2, 1], 2) == 1.0 and passx_at_k([1, 0], 2) == 0.5
    # tool calls per episode, from the recorded steps: one look each, then the fix or give_up
    assert bash["calls_per_episode"] == {"give_up": 0.25, "run_bash": 1.0, "submit_fix": 0.75}
    assert pdb["calls_per_episode"] == {"debug_start": 1.0, "give_up": 0.75, "submit_fix": 0.25}
    assert (bash["steps_per_solve"], bash["tokens_per_solve"], pdb["steps_per_solve"]) == (2.0, 30.0, 2.0)
    results = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert sorted({(r["agent"], r["task_id"], r["run"], r["seed"]) for r in results}) == sorted(
        (f"scripted@{p}", t, r, seed_for(t, r)) for p in ("bash", "pdb") for t in TASKS for r in range(2))  # the same seeds

    # The command: resumed, it plays nothing and says so, and prints the same figures (as JSON, its schema here).
    assert main(["ablate", "--agent", "scripted", "--profiles", "bash,pdb", "--tasks", *TASKS, "--seeds", "2", "--out", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    assert "ablation: 8 already done, 0 to play" in captured.err
    assert "scripted@bash: 4 already done, 0 to play" in captured.err and "scripted@pdb: 4 already done, 0 to play" in captured.err
    printed = json.loads(captured.out)
    assert printed == json.loads((tmp_path / "ablation.json").read_text()) == json.loads(json.dumps(summary))
    assert set(printed) == {"agent", "profiles", "tasks", "runs", "arms", "pairs"}
    assert set(printed["arms"]["bash"]) == {"arm", "episodes", "solved", "solved_rate", "solved_ci95", "pass_at_k", "by_task",
                                           "calls_per_episode", "steps_per_solve", "tokens_per_solve"}
    assert set(printed["arms"]["bash"]["by_task"]["easy"]) == {"solved", "runs", "pass_at_k"}
    table = (tmp_path / "ablation.md").read_text()
    assert "| bash | 4 | 75 [30, 95] | 0.750 | 1.000 | 2.0 | 30 |" in table
    assert "| pdb | 4 | 25 [5, 70] | 0.250 | 0.500 | 2.0 | 30 |" in table
    assert "| bash + pdb | 0.750 | 1.000 | 0.500 |" in table
    assert "| run_bash | 1.00 | - |" in table and "| debug_start | - | 1.00 |" in table


def test_tokens_are_not_applicable_when_the_agent_reports_none(tmp_path):
    rows = [{"agent": f"a@{p}", "task_id": "t", "run": r, "solved": r == 0, "steps": 3, "tokens": 0} for p in ("bash", "pdb") for r in range(2)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = ablate_module.summarise(tmp_path, "a", ["bash", "pdb"], ["t"], 2)
    assert summary["arms"]["bash"]["tokens_per_solve"] is None and summary["arms"]["bash"]["steps_per_solve"] == 3.0
    assert summary["arms"]["bash"]["calls_per_episode"] == {}  # no steps recorded: no calls counted
    assert "| bash | 2 | 50 [9, 91] | 0.500 | 1.000 | 3.0 | n/a |" in ablate_module.table(summary, tmp_path)


def test_unknown_and_unusable_profiles_exit_2_naming_them(tmp_path, capsys, agents):
    assert main(["ablate", "--agent", "heuristic", "--profiles", "bash,no-such-profile", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "ablate: unknown profile(s): no-such-profile; registered: default, bash, pdb" in err
    with pytest.raises(ablate_module.Refused, match="agent 'bash-only' cannot use profile\\(s\\) pdb; it plays: bash"):
        ablate_module.check_profiles("bash-only", ["bash", "pdb"])
    with pytest.raises(ablate_module.Refused, match="at least two profiles"):
        ablate_module.check_profiles("heuristic", ["bash"])
    # minimal is registered, but no classic task serves it: refused before anything is played
    assert main(["ablate", "--agent", "oracle", "--profiles", "bash,minimal", "--tasks", "easy", "--out", str(tmp_path)]) == 2
    assert "ablate: no chosen task serves profile 'minimal': the agent cannot use it on these tasks" in capsys.readouterr().err
    assert not (tmp_path / "results.jsonl").exists()


def test_a_profile_registered_later_is_taken(monkeypatch):
    from env.interface import PROFILES, Profile

    with pytest.raises(ablate_module.Refused, match="unknown profile\\(s\\): later"):
        ablate_module.check_profiles("heuristic", ["bash", "later"])
    monkeypatch.setitem(PROFILES._items, "later", Profile(name="later", description="", tools=("submit",)))  # as a module would add it
    ablate_module.check_profiles("heuristic", ["bash", "later"])


def test_help_shows_the_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["ablate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for shown in ("(default: bash,pdb)", "runs of each task (default: 5)", "--runs RUNS, --seeds RUNS", "default: in threads of this process"):
        assert shown in text, shown
