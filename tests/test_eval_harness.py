"""The evaluation harness: baseline agents, resumable runs, the report's numbers, what the commands print, and /ws play."""

from __future__ import annotations

import argparse
import json
from functools import partial

import httpx
import openai
import pytest

from env.agents import AGENTS
from env.agents.base import Agent
from env.agents.retry import ModelUnavailable
from env.eval import run as run_module
from env.eval.__main__ import main
from env.eval.drivers import WsDriver
from env.eval.report import baseline_table, load, pass_at_k_figure, pass_at_k_table, report, summary_table, who_solved
from env.server.in_process import InProcessDriver


def test_oracle_solves_and_random_is_seeded(runtime, tmp_path):
    factory = partial(InProcessDriver, runtime)
    results = run_module.run(factory, "oracle", ["easy", "repo-slice-window"], 1, 2, tmp_path)
    assert {(r["task_id"], r["solved"], r["score"] >= 0.9) for r in results} == {("easy", True, True), ("repo-slice-window", True, True)}
    assert {r["trust"] for r in results} == {"split"}  # every result says how far it could be forged
    steps = [json.loads(line) for line in (tmp_path / "steps" / "oracle" / "repo-slice-window" / "run0.jsonl").read_text().splitlines()]
    assert {s["observation"]["trust"] for s in steps} == {"split"} and {s["observation"]["sandboxed_tests"] for s in steps} == {0}
    first = run_module.run(factory, "random", ["medium"], 2, 1, tmp_path / "a")
    second = run_module.run(factory, "random", ["medium"], 2, 1, tmp_path / "b")
    assert sorted((r["run"], r["actions"], r["rewards"]) for r in first) == sorted((r["run"], r["actions"], r["rewards"]) for r in second)


def test_heuristic_solves_the_off_by_one_and_the_red_herring(runtime, tmp_path):
    results = run_module.run(partial(InProcessDriver, runtime), "heuristic", ["easy", "medium"], 1, 2, tmp_path)
    assert {r["task_id"]: r["solved"] for r in results} == {"easy": True, "medium": True}


def test_a_rerun_completes_only_what_is_missing(runtime, tmp_path, capsys):
    factory = partial(InProcessDriver, runtime)
    run_module.run(factory, "oracle", ["easy"], 3, 1, tmp_path)
    assert "oracle: 0 already done, 3 to play" in capsys.readouterr().err
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    # A crash: the last result line was cut mid-write and one episode never finished.
    (tmp_path / "results.jsonl").write_text(lines[0] + "\n" + lines[1][:20])
    again = run_module.run(factory, "oracle", ["easy"], 3, 1, tmp_path)
    assert "oracle: 1 already done, 2 to play" in capsys.readouterr().err  # what the resumed run keeps, said first
    assert sorted(r["run"] for r in again) == [1, 2]
    assert sorted(r["run"] for r in load([tmp_path])) == [0, 1, 2]
    assert run_module.run(factory, "oracle", ["easy"], 3, 1, tmp_path) == []
    assert "oracle: 3 already done, 0 to play" in capsys.readouterr().err
    run_module.run(factory, "oracle", ["easy", "medium"], 2, 1, tmp_path)  # only the runs asked for count as done
    assert "oracle: 2 already done, 2 to play" in capsys.readouterr().err
    steps = [json.loads(x) for x in (tmp_path / "steps" / "oracle" / "easy" / "run2.jsonl").read_text().splitlines()]
    # +0.50 solved, +0.15 x 6/21: the 2 failing tests and (this seed's draw) 4 of the 13 held-out cases the bug fails
    assert steps[0]["action"]["action_type"] == "submit_fix" and steps[0]["reward"] == round(0.5 + 0.15 * 6 / 21, 6)
    assert set(steps[0]) == {"step", "task_id", "seed", "secret_fingerprint", "profile", "agent", "action", "observation", "reward", "breakdown", "ms", "tokens", "aliases", "call"}
    assert (steps[0]["task_id"], steps[0]["seed"], steps[0]["profile"], steps[0]["agent"]) == ("easy", run_module.seed_for("easy", 2), "default", "oracle")


class _Down(Agent):
    """An LLM agent whose endpoint fails: retries spent (ModelUnavailable) or bad credentials (HTTP 401)."""

    error: BaseException = ModelUnavailable("the model endpoint failed 5 time(s); last: HTTP 503: busy")

    def act(self, observation):
        raise self.error


def test_a_failing_model_endpoint_stops_the_run_saying_so_and_keeps_what_finished(runtime, tmp_path, monkeypatch):
    factory = partial(InProcessDriver, runtime)
    monkeypatch.setattr(run_module, "AGENTS", {"oracle": AGENTS["oracle"], "down": _Down})
    monkeypatch.setenv("API_BASE_URL", "https://models.example/v1")
    monkeypatch.setenv("MODEL_NAME", "some-model")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-shown")
    with pytest.raises(SystemExit) as stopped:
        run_module.run(factory, "down", ["easy"], 2, 1, tmp_path)
    assert str(stopped.value) == (  # the settings that chose the endpoint are named; the key's value never is
        "stopped: the model endpoint failed (the model endpoint failed 5 time(s); last: HTTP 503: busy; "
        "API_BASE_URL=https://models.example/v1, MODEL_NAME=some-model, OPENAI_API_KEY); 0 of 2 episode(s) "
        f"played, their results are in {tmp_path / 'results.jsonl'}; run the same command again to play the rest"
    )
    request = httpx.Request("POST", "https://models.example/v1/chat/completions")
    monkeypatch.setattr(_Down, "error", openai.AuthenticationError("bad key", response=httpx.Response(401, request=request), body=None))
    run_module.run(factory, "oracle", ["easy"], 1, 1, tmp_path)  # another arm's finished episode stays
    with pytest.raises(SystemExit, match=r"^stopped: the model endpoint failed \(HTTP 401: bad key; API_BASE_URL=https://models\.example/v1, "):
        run_module.run(factory, "down", ["easy"], 2, 2, tmp_path)
    assert [(r["agent"], r["solved"]) for r in load([tmp_path])] == [("oracle", True)]


def test_the_llm_agent_without_a_key_for_the_default_endpoint_is_refused_before_anything_is_played(runtime, tmp_path, monkeypatch):
    for name in ("HF_TOKEN", "OPENAI_API_KEY", "API_BASE_URL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit) as refused:
        run_module.run(partial(InProcessDriver, runtime), "llm", ["easy"], 1, 1, tmp_path)
    assert str(refused.value) == (
        "llm: the llm agent has no model endpoint: set HF_TOKEN (or OPENAI_API_KEY) to call API_BASE_URL=https://router.huggingface.co/v1 "
        "with MODEL_NAME=meta-llama/Llama-3.1-70B-Instruct, or set API_BASE_URL to an OpenAI-compatible endpoint of your own; nothing was played"
    )
    assert not (tmp_path / "results.jsonl").exists()
    for name, value in (("HF_TOKEN", "hf_x"), ("OPENAI_API_KEY", "sk-x"), ("API_BASE_URL", "http://127.0.0.1:1/v1")):
        with monkeypatch.context() as m:
            m.setenv(name, value)
            assert AGENTS["llm"].unready() == ""  # a key, or an endpoint of one's own (which may need none)


def test_the_cost_columns_divide_what_they_say():
    from env.eval.report import costs_and_flags

    runs = [{"agent": "a", "task_id": t, "run": 0, "solved": solved, "steps": steps, "tokens": tokens, "flags": []}
            for t, solved, steps, tokens in (("t1", True, 3, 30), ("t2", True, 5, 50), ("t3", False, 10, 100), ("t4", False, 10, 100))]  # fmt: skip
    header, _, row = costs_and_flags(runs).splitlines()
    assert header.split(" | ")[3:6] == ["steps of a solved episode (mean)", "steps spent per solve (all episodes)", "tokens spent per solve (all episodes)"]
    assert row == "| a | 4 | 2 | 4.0 | 14.0 | 140.0 | - |"  # (3 + 5) / 2; (3 + 5 + 10 + 10) / 2; (30 + 50 + 100 + 100) / 2


def test_unknown_tasks_are_refused(runtime, tmp_path):
    with pytest.raises(SystemExit, match="unknown task"):
        run_module.run(partial(InProcessDriver, runtime), "oracle", ["nope"], 1, 1, tmp_path)


def result(agent, task, run, solved, score, steps=3):
    return {"agent": agent, "task_id": task, "family": "classic", "run": run, "score": score, "solved": solved, "steps": steps,
            "attempts": 1, "rewards": [0.0] * steps, "actions": [], "flags": [], "tokens": 0}


def test_report_numbers_are_hand_checked(tmp_path):
    rows = [result("a", "t1", 0, True, 1.0), result("a", "t1", 1, False, 0.0), result("a", "t2", 0, False, 0.0), result("a", "t2", 1, False, 0.0),
            result("b", "t1", 0, False, 0.0), result("b", "t1", 1, False, 0.0), result("b", "t2", 0, False, 0.0), result("b", "t2", 1, True, 0.5)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    table = baseline_table(rows)
    assert "| a | `t1` | 2 | 0.500 ± 0.707 | 50 [9, 91] | 1.0 | 3.0 |" in table
    _, curves = pass_at_k_table(rows)
    assert curves == {"a": [0.25, 0.5], "b": [0.25, 0.5]}  # t1: c=1 of 2 -> 0.5, 1.0; t2: 0 -> 0, 0
    text = who_solved(rows)
    # passX@2 per task: t1 1 - (1/2)(2/2) = 0.5; t2 1 - (2/2)(1/2) = 0.5
    assert "passX@2 = 0.500" in text and "| run 0 | 1 | 0 | 0 | 1 |" in text and "| any of 2 runs | 1 | 1 | 0 | 0 |" in text
    report([tmp_path], tmp_path)
    assert {p.name for p in tmp_path.iterdir()} >= {"report.md", "pass_at_k.png", "solve_rate.png", "reward_per_step.png"}
    assert (tmp_path / "pass_at_k.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Per task, each pass@k with its 95% interval: Wilson's for 1 of 2 is (0.095, 0.905); at k = 2, 1 - (1 - x)^2 of each end.
    text = (tmp_path / "report.md").read_text()
    assert "## pass@k by task" in text
    assert "| a | `t1` | 1/2 | 0.50 [0.09, 0.91] | 1.00 [0.18, 0.99] |" in text
    assert "| a | `t2` | 0/2 | 0.00 [0.00, 0.66] | 0.00 [0.00, 0.88] |" in text
    assert "| b | `t2` | 1/2 | 0.50 [0.09, 0.91] | 1.00 [0.18, 0.99] |" in text
    # The summary: 1 of 4 episodes solved each, Wilson (0.046, 0.699); pass@1 and pass@2 as in the curves above.
    assert summary_table(rows).splitlines()[2:] == ["| a | 2 | 4 | 25 [5, 70] | 0.250 | 0.250 | 0.500 (k=2) |",
                                                   "| b | 2 | 4 | 25 [5, 70] | 0.125 | 0.250 | 0.500 (k=2) |"]


def test_a_task_with_fewer_runs_fills_fewer_pass_at_k_columns(tmp_path):
    rows = [result("a", "t1", r, r == 0, 1.0 if r == 0 else 0.0) for r in range(3)] + [result("a", "t2", 0, True, 1.0)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = report([tmp_path], tmp_path / "out")
    assert "| a | `t2` | 1/1 | 1.00 [0.21, 1.00] | - | - |" in text  # Wilson's for 1 of 1: (0.207, 1)


def test_the_pass_at_k_plot_ticks_whole_numbers_of_runs():
    import matplotlib.pyplot as plt

    for runs in (2, 3, 5, 12):
        fig, ax = pass_at_k_figure({"a": [i / runs for i in range(1, runs + 1)], "b": [0.5] * runs})
        ticks = [t for t in ax.get_xticks() if 1 <= t <= runs]
        plt.close(fig)
        assert ticks and all(float(t).is_integer() for t in ticks), (runs, ticks)  # matplotlib's default ticked 1.25, 1.75 at runs = 2


def test_report_prints_a_summary_table_last(tmp_path, capsys):
    rows = [result("a", "t1", 0, True, 1.0), result("a", "t1", 1, False, 0.0)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out.rstrip().splitlines()
    assert out[-5:] == ["Summary", "", "| agent | tasks | episodes | solved % [95% CI] | mean score | pass@1 | pass@k |",
                        "|---|---|---|---|---|---|---|", "| a | 1 | 2 | 50 [9, 91] | 0.500 | 0.500 | 1.000 (k=2) |"]
    assert out[0] == "# Evaluation report"  # the report itself still comes first


def test_run_prints_what_it_keeps_and_a_summary_table_of_everything_in_out(tmp_path, capsys):
    """On resume too: the summary covers the episodes an earlier run played (here another arm's, written by hand)."""
    (tmp_path / "results.jsonl").write_text(json.dumps(result("random", "easy", 0, False, 0.0)) + "\n")
    assert main(["run", "--agent", "oracle", "--tasks", "easy", "--runs", "1", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "oracle: 0 already done, 1 to play" in captured.err and "1 episode(s) played; results in" in captured.err
    table = captured.out.rstrip().splitlines()
    assert table[0] == "| agent | tasks | episodes | solved % [95% CI] | mean score | pass@1 | pass@k |"
    assert [row.split(" | ")[:4] for row in table[2:]] == [["| oracle", "1", "1", "100 [21, 100]"], ["| random", "1", "1", "0 [0, 79]"]]


def test_help_shows_every_default(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["run", "--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal's width
    for shown in ("runs of each task (default: 5)", "episodes played at once (default: 2)", "(default: default)",
                  "task ids (default: every task of the test split, or of --split, as the options below narrow it)", "override the profile's edit gate (default: the profile's)", "default: in threads of this process"):
        assert shown in text, shown
    assert "(default: None)" not in text
    with pytest.raises(SystemExit):
        main(["procedural", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "agents to play (default: random heuristic oracle)" in text and "(default: train ood)" in text and "(default: 5)" in text


def test_ws_driver_plays_on_a_server(live_server, tmp_path):
    results = run_module.run(partial(WsDriver, live_server.url), "oracle", ["easy"], 1, 1, tmp_path)
    assert results[0]["solved"] and results[0]["score"] == 0.96


def test_predictions_export_round_trips_through_evaluation(runtime, tmp_path, capsys):
    from env.authoring.predictions import Prediction, evaluate
    from env.eval.__main__ import main

    run_module.run(partial(InProcessDriver, runtime), "oracle", ["repo-wrong-exception", "easy"], 1, 1, tmp_path)
    assert main(["predictions", str(tmp_path), "--agent", "oracle", "--model", "gold"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1  # classic episodes have no patch
    prediction = Prediction.model_validate_json(lines[0])
    assert (prediction.instance_id, prediction.model_name_or_path) == ("repo-wrong-exception", "gold")
    assert evaluate(runtime, prediction).resolution == "FULL"


def test_a_prediction_the_machine_starves_is_an_error_never_no(runtime, monkeypatch):
    """Grading counts CPU time; a run stopped by the wall-clock backstop under its CPU limit is run again, and when
    every attempt is starved the prediction is not decided (ERROR), never graded NO: the machine is not the patch."""
    from env.authoring import predictions
    from env.verdict.outcome import RepoVerdict

    clocks: list[str] = []

    def starved(sandbox, task, files):
        clocks.append(sandbox.limits.clock)
        return RepoVerdict(busy="stopped by the 60 s backstop after 2.1 s of the 10 s CPU limit", aborted="starved")

    monkeypatch.setattr(predictions, "run_tests", starved)
    task = runtime.catalog.get("repo-wrong-exception")
    gold = predictions.Prediction(instance_id="repo-wrong-exception", model_name_or_path="gold", model_patch=task.gold_patch)
    assert predictions.evaluate(runtime, gold).model_dump() == {
        "instance_id": "repo-wrong-exception", "resolution": "ERROR",
        "detail": "not decided, the machine was too busy: stopped by the 60 s backstop after 2.1 s of the 10 s CPU limit; in each of 2 attempts",
    }  # fmt: skip
    assert clocks == ["cpu", "cpu"]


def test_every_command_of_the_cli_is_one_function_and_procedural_ids_come_from_the_family():
    from env.eval.__main__ import COMMANDS, build_parser
    from env.families.registry import FAMILIES

    procedural_id = FAMILIES["procedural"].generated_id

    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]  # argparse keeps its subcommands there
    assert set(COMMANDS) == set(sub.choices)
    assert procedural_id("easy", "train", 3) == "proc-easy-train-3"
    with pytest.raises(NotImplementedError, match="^the repo family makes no task from the parts of an id$"):
        FAMILIES["repo"].generated_id("x")
    with pytest.raises(ValueError, match=r"^no procedural task 'proc-easy-nope-3': levels easy, medium, hard, extreme, splits "):
        procedural_id("easy", "nope", 3)
