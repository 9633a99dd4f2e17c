"""OpenEnv's validation policy v2 (validator.py --v2, env/validation/v2/): the manifest is a v2 manifest, the
report validates against OpenEnv's report schema, every local-lane check is reported (a skip with its reason), and
a deliberately broken server or declaration fails the check that covers it."""

import itertools
import json
import re
import shutil
from pathlib import Path

import jsonschema
import openenv.validation
import pytest
import yaml
from openenv.validation.manifest import NormalizedManifestV2
from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
from openenv.validation.policy import load_policy
from openenv.validation.runtime.contracts import load_runtime_plan
from openenv.validation.types import Lane

from env.config import Settings
from env.families.catalog import TaskCatalog
from env.runtime import Runtime
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.server.app import build_app
from env.validation.v2.canaries import canaries
from env.validation.v2.containment_checks import server_address
from env.validation.v2.semantic_checks import solution_markers
from env.validation.v2.suite import UnknownSelection, validate
from tests.conftest import TEST_SECRET, LiveServer
from validator import main

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = Path(openenv.validation.__file__).parent / "schemas"
LOCAL_CHECKS = set(load_policy("v2").entries_for_lane(Lane.LOCAL))
SUBSET = "easy,repo-slice-window,proc-easy-test-0"


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text())


def by_id(report) -> dict:
    return {r.check_id: r for r in report.results}


def test_openenv_yaml_is_a_v2_manifest_valid_against_the_schema():
    manifest = OpenEnvYamlParser().parse(ROOT)  # OpenEnv's own parser
    assert isinstance(manifest, NormalizedManifestV2)
    jsonschema.validate(json.loads(manifest.model_dump_json()), schema("manifest-v2.schema.json"))
    plan = load_runtime_plan(ROOT, manifest.execution)  # the runtime plan OpenEnv's collector plays
    assert plan.reset.options == {"task_id": "easy"}
    assert manifest.capabilities.oracle is not None and (ROOT / manifest.capabilities.oracle.location).is_file()
    assert manifest.capabilities.canaries and (ROOT / manifest.capabilities.canaries).is_file()
    bounds = load_policy("v2").bounds
    assert manifest.reward.oracle_tolerance <= bounds.max_oracle_tolerance and manifest.reward.floor_margin >= bounds.min_floor_margin


def test_the_v2_report_against_the_server(live_server, tmp_path, capsys):
    """One run on one task per family: the JSON report is valid, every local-lane check is in it once, every skip
    says why, and nothing fails (the policy's verdict is WARN: some checks cannot run against a server)."""
    out = tmp_path / "report.json"
    assert main(["--url", live_server.url, "--v2", "--tasks", SUBSET, "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    jsonschema.validate(report, schema("report-v2.schema.json"))
    ids = [r["check_id"] for r in report["results"]]
    assert sorted(ids) == sorted(LOCAL_CHECKS) and len(ids) == len(set(ids))
    statuses = {r["check_id"]: r["status"] for r in report["results"]}
    assert not [c for c, s in statuses.items() if s in ("fail", "error")], printed
    assert report["verdict"] == "warn" and report["manifest"]["manifest_schema_version"] == "2"
    for r in report["results"]:
        if r["status"] == "skip":
            assert r["evidence"] and r["evidence"][0].strip(), r["check_id"]
    # OpenEnv's own graders ran on evidence its collector gathered from this server
    for check_id in ("static.manifest", "runtime.reward_well_formed", "runtime.observation_schema", "runtime.state_contract"):
        assert statuses[check_id] == "pass", check_id
    assert statuses["runtime.network_policy"] == "skip" and "network_policy" in by_id_json(report)["runtime.network_policy"]["evidence"][0]
    for check_id in ("runtime.seed_control", "runtime.episode_determinism", "runtime.episode_isolation", "runtime.host_containment",
                     "runtime.oracle_containment", "runtime.resource_bounds", "runtime.tool_declaration_accuracy",
                     "runtime.task_declaration_accuracy", "semantic.oracle_max", "semantic.floor_gap", "semantic.canary_floor",
                     "semantic.no_solution_leakage", "semantic.verifier_determinism", "semantic.replayability"):
        assert statuses[check_id] == "pass", check_id
    # --url: the server's memory is not measurable from here, and the report says so instead of passing
    assert statuses["semantic.resource_envelope"] == "skip"
    assert "cannot be measured" in by_id_json(report)["semantic.resource_envelope"]["evidence"][0]
    canary = by_id_json(report)["semantic.canary_floor"]["measured"]
    assert canary["canaries_played"] >= 20
    assert "verdict: warn (policy v2" in printed and "PASS    semantic.canary_floor" in printed
    counts = {status: sum(r["status"] == status for r in report["results"]) for status in ("pass", "skip")}
    assert re.fullmatch(rf"{counts['pass']} passed, 0 failed, {counts['skip']} skipped in \d+\.\d s", printed.rstrip().splitlines()[-1])


def by_id_json(report: dict) -> dict:
    return {r["check_id"]: r for r in report["results"]}


def test_canaries_include_degenerate_policies_overfits_and_the_integrity_attacks(catalog):
    classic = canaries(catalog.get("easy"))
    assert {"degenerate.give_up", "overfit", "attack.always_equal_object", "attack.prints_a_fake_summary",
            "attack.monkeypatches_unittest"} <= set(classic)
    repo = canaries(catalog.get("repo-slice-window"))
    assert {"overfit", "attack.conftest_forces_every_test_to_pass", "attack.pth_file", "attack.rewrites_the_tests"} <= set(repo)
    assert all(actions[-1]["action_type"] == "submit" for name, actions in repo.items() if name.startswith("attack."))


def test_a_check_that_cannot_run_is_a_skip_with_its_reason(live_server):
    """Narrowed to two checks: every other local-lane check is still reported, as a skip that says why."""
    report = validate(live_server.url, tasks=["easy"], only={"runtime.task_declaration_accuracy", "runtime.tool_declaration_accuracy"})
    results = by_id(report)
    assert set(results) == LOCAL_CHECKS
    assert results["runtime.task_declaration_accuracy"].status.value == "pass"
    assert results["semantic.oracle_max"].status.value == "skip" and results["semantic.oracle_max"].evidence == ["not selected in this run (--checks)"]
    assert "rubric" in results["runtime.rubric_introspectable"].evidence[0]
    assert report.verdict.value == "warn"


def test_declarations_that_do_not_match_the_server_fail(live_server, tmp_path):
    """A manifest declaring a tool the server does not have (and missing one it has) and wrong task counts."""
    for name in ("openenv.yaml", "requirements.txt", "uv.lock"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "validation").mkdir()
    shutil.copy(ROOT / "validation" / "runtime.json", tmp_path / "validation" / "runtime.json")
    raw = yaml.safe_load((tmp_path / "openenv.yaml").read_text())
    caps = raw["validation"]["capabilities"]
    caps["declared_tools"] = [t for t in caps["declared_tools"] if t != "run_bash"] + ["teleport"]
    caps["declared_task_count"]["repo"] = 14
    (tmp_path / "openenv.yaml").write_text(yaml.safe_dump(raw))
    report = validate(live_server.url, root=tmp_path, tasks=["easy"],
                      only={"runtime.tool_declaration_accuracy", "runtime.task_declaration_accuracy"})
    results = by_id(report)
    tools, tasks = results["runtime.tool_declaration_accuracy"], results["runtime.task_declaration_accuracy"]
    assert tools.status.value == "fail" and "['teleport']" in tools.evidence[0] and "['run_bash']" in tools.evidence[0]
    assert tasks.status.value == "fail" and "'repo': 14" in tasks.evidence[0]
    assert report.verdict.value == "fail"


@pytest.fixture()
def leaky_server(isolation):
    """A server whose easy task's description gives the fix away."""
    easy = TaskCatalog.builtin().get("easy")
    fix_line = solution_markers(easy)[0]
    leaky = easy.model_copy(update={"description": easy.description + f" Hint: the loop should read `{fix_line}`."})
    catalog = TaskCatalog([leaky])
    runtime = Runtime(catalog, Sandbox(Limits(), isolation), workers=4, secret=TEST_SECRET)
    with LiveServer(build_app(runtime=runtime, settings=Settings())) as server:
        yield server, catalog, fix_line


def test_a_task_leaking_its_solution_fails_no_solution_leakage(leaky_server):
    server, catalog, fix_line = leaky_server
    report = validate(server.url, tasks=["easy"], catalog=catalog, only={"runtime.episode_determinism", "semantic.no_solution_leakage"})
    leakage = by_id(report)["semantic.no_solution_leakage"]
    assert by_id(report)["runtime.episode_determinism"].status.value == "pass"
    assert leakage.status.value == "fail" and fix_line in leakage.evidence[0]
    assert report.verdict.value == "fail"


class JitteredRewards:
    """ASGI wrapper: every /step answer's reward drifts by 0.001 more than the last (a nondeterministic reward)."""

    def __init__(self, app):
        self.app, self.drift = app, itertools.count(1)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != "/step":
            return await self.app(scope, receive, send)
        start, chunks = {}, []

        async def rewrite(message):
            if message["type"] == "http.response.start":
                start.update(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = json.loads(b"".join(chunks))
            body["reward"] = round(body["reward"] + 0.001 * next(self.drift), 6)
            data = json.dumps(body).encode()
            headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"] + [(b"content-length", str(len(data)).encode())]
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": data})

        await self.app(scope, receive, rewrite)


def test_a_nondeterministic_reward_fails_determinism_and_skips_the_semantic_checks(runtime):
    with LiveServer(JitteredRewards(build_app(runtime=runtime, settings=Settings()))) as server:
        report = validate(server.url, tasks=["easy"], only={"runtime.episode_determinism", "semantic.oracle_max", "semantic.floor_gap"})
    results = by_id(report)
    assert results["runtime.episode_determinism"].status.value == "fail"
    assert "easy: rewards" in results["runtime.episode_determinism"].evidence[0]
    for check_id in ("semantic.oracle_max", "semantic.floor_gap"):  # the RFC: determinism is a precondition of semantics
        assert results[check_id].status.value == "skip"
        assert results[check_id].evidence == ["unmet dependencies: runtime.episode_determinism"]
    assert report.verdict.value == "fail"


def test_the_readme_table_lists_every_local_check_and_the_commands_it_shows():
    readme = (ROOT / "docs" / "evaluation.md").read_text()  # the README's Validation section moved there
    section = readme.split("## Validation: OpenEnv's policy v2 (`validator.py --v2`)")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    listed = {check for row in rows for check in row.split("|")[1].replace("`", "").replace(" ", "").split(",")}
    assert listed == LOCAL_CHECKS
    commands = section.split("```bash")[1].split("```")[0]
    for line in filter(None, commands.splitlines()):
        args = line.split("#")[0].split()[2:]  # after `.venv/bin/python validator.py`
        parsed = [a for a in args if a.startswith("--")]
        assert set(parsed) <= {"--v2", "--json", "--url", "--tasks", "--checks"}, line


def test_no_server_fails_startup_and_every_check_needing_it_skips_naming_it():
    from tests.conftest import refusing_port

    with refusing_port() as port:
        report = validate(f"http://127.0.0.1:{port}")
    results = by_id(report)
    assert results["runtime.startup"].status.value == "fail" and "ConnectError" in results["runtime.startup"].evidence[0]
    assert results["runtime.state_contract"].evidence == ["unmet dependencies: runtime.startup"]
    assert results["runtime.episode_determinism"].evidence == ["unmet dependencies: runtime.startup"]
    assert results["semantic.floor_gap"].evidence == ["unmet dependencies: runtime.episode_determinism"]
    assert not [r for r in report.results if r.status.value == "pass" and not r.check_id.startswith("static.")]
    assert report.verdict.value == "fail"


def test_the_containment_probe_targets_the_servers_real_port():
    """The probe connects to the server's own address: https without a port is 443 (it used to be 80, so the probe
    tried a port nobody listens on and `connect_to_the_server` read "denied"), and an IPv6 host is kept whole."""
    assert server_address("http://127.0.0.1:8000/") == ("127.0.0.1", 8000)
    assert server_address("https://debugger.hf.space") == ("debugger.hf.space", 443)
    assert server_address("http://[::1]:9000") == ("::1", 9000)
    assert server_address("http://localhost") == ("localhost", 80)


def test_an_unknown_task_or_check_is_an_error_not_a_passing_report(live_server, capsys):
    """A typo in --tasks or --checks used to select nothing: every check passed vacuously or skipped (verdict WARN,
    exit 0). Now validate refuses, naming the unknown ids, and validator.py exits 2."""
    with pytest.raises(UnknownSelection, match="no task nope"):
        validate(live_server.url, tasks=["easy", "nope"])
    with pytest.raises(UnknownSelection, match="runtime.seed_contrl"):
        validate(live_server.url, only={"runtime.seed_contrl"})
    assert main(["--url", live_server.url, "--v2", "--tasks", "nope"]) == 2
    assert "no task nope" in capsys.readouterr().err


def test_the_layout_check_reads_the_package_not_what_a_test_run_left_beside_it(tmp_path):
    # a test run's .hypothesis cache holds charmap.json.gz: ignored by git, it is not the package
    import subprocess

    from env.validation.v2.static_checks import package_files

    (tmp_path / ".gitignore").write_text(".hypothesis/\n")
    (tmp_path / ".hypothesis").mkdir()
    (tmp_path / ".hypothesis" / "charmap.json.gz").write_bytes(b"x")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "bundle.zip").write_bytes(b"x")
    assert sorted(p.name for p in package_files(tmp_path)) == ["bundle.zip"]  # no git yet: hidden folders are left out
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    assert sorted(p.name for p in package_files(tmp_path)) == [".gitignore", "bundle.zip"]
