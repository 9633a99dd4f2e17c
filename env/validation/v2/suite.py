"""The v2 validation suite: every local-lane check of OpenEnv's policy v2 run against a server, in
the policy's order, with OpenEnv's verdict; and the table ``validator.py --v2`` prints.

    report = validate("http://localhost:8000")          # an openenv.validation.ValidationReportV2
    print(table(report))                                 # one line per check: status, id, evidence
    Path("report.json").write_text(report.model_dump_json(indent=2))   # valid against report-v2.schema.json
"""

from __future__ import annotations

from pathlib import Path

import httpx
from openenv.validation.graders import Subject
from openenv.validation.graders.static import StaticManifestGrader
from openenv.validation.policy import apply_policy
from openenv.validation.report import CheckResult, ValidationReportV2
from openenv.validation.runner import source_digest
from openenv.validation.runtime.scheduler import execute_graders
from openenv.validation.types import CheckStatus, Lane, Level, SignatureKind

from env.families.catalog import TaskCatalog
from env.families.registry import FAMILIES
from env.validation.v2.check import POLICY, PolicyCheck, skip
from env.validation.v2.containment_checks import host_containment, oracle_containment, resource_bounds
from env.validation.v2.context import ROOT, ListedTask, RawManifest, Run
from env.validation.v2.memory_envelope import Envelope
from env.validation.v2.runtime_checks import (
    episode_determinism,
    episode_isolation,
    openenv_runtime_graders,
    seed_control,
    startup,
    task_declaration_accuracy,
    tool_declaration_accuracy,
)
from env.validation.v2.semantic_checks import (
    canary_floor,
    floor_gap,
    no_solution_leakage,
    oracle_max,
    replayability,
    resource_envelope,
    verifier_determinism,
)
from env.validation.v2.static_checks import static_declarations, static_manifest

NOT_HERE = {
    "runtime.rubric_introspectable": "no rubric tree (capabilities.rubric_tree is false): the grade is a pure function of the episode's facts "
                                     "(env/families/*/grader.py), published per component in the observation's breakdown, not an RFC 004 Rubric",
    "runtime.reward_attribution": "reads an RFC 004 rubric tree's per-child scores; this environment declares none (see runtime.rubric_introspectable)",
    "runtime.trajectory_record": "the server writes no trajectory file (python -m env.eval records trajectories); nothing to read from a running server",
    "semantic.verifier_portability": "needs the verifier run on a second host or provider and compared; validator.py checks one server",
}


def checks(run: Run, envelope: Envelope) -> list[PolicyCheck]:
    semantic = ("runtime.episode_determinism",)  # the RFC: determinism is a precondition of every semantic check
    made = [
        PolicyCheck("runtime.tool_declaration_accuracy", Level.RUNTIME, tool_declaration_accuracy),
        PolicyCheck("runtime.task_declaration_accuracy", Level.RUNTIME, task_declaration_accuracy),
        PolicyCheck("runtime.seed_control", Level.RUNTIME, seed_control),
        PolicyCheck("runtime.episode_determinism", Level.RUNTIME, episode_determinism),
        PolicyCheck("runtime.episode_isolation", Level.RUNTIME, episode_isolation),
        PolicyCheck("runtime.host_containment", Level.RUNTIME, host_containment),
        PolicyCheck("runtime.oracle_containment", Level.RUNTIME, oracle_containment),
        PolicyCheck("runtime.resource_bounds", Level.RUNTIME, resource_bounds),
        PolicyCheck("semantic.oracle_max", Level.SEMANTIC, oracle_max, semantic),
        PolicyCheck("semantic.floor_gap", Level.SEMANTIC, floor_gap, semantic),
        PolicyCheck("semantic.canary_floor", Level.SEMANTIC, canary_floor, ("runtime.episode_determinism", "semantic.floor_gap")),
        PolicyCheck("semantic.no_solution_leakage", Level.SEMANTIC, no_solution_leakage, semantic),
        PolicyCheck("semantic.verifier_determinism", Level.SEMANTIC, verifier_determinism, semantic),
        PolicyCheck("semantic.replayability", Level.SEMANTIC, replayability, semantic),
        PolicyCheck("semantic.resource_envelope", Level.SEMANTIC, lambda r: resource_envelope(r, envelope), ("runtime.episode_determinism", "semantic.oracle_max")),
    ]
    for check in made:
        check.context = run
    return made


class UnknownSelection(ValueError):
    """``tasks`` or ``only`` names a task the server does not serve or a check the policy does not have: an error,
    not a report in which nothing was played (every check a vacuous pass or a skip)."""


def validate(url: str, *, root: Path = ROOT, tasks: list[str] | None = None, only: set[str] | None = None,
             server_pid: int | None = None, catalog: TaskCatalog | None = None) -> ValidationReportV2:
    """Runs every local-lane check of policy v2 against the server at ``url``; ``tasks`` narrows the tasks played,
    ``only`` the checks run (the others are reported as skipped, with that reason). Raises UnknownSelection when
    either names something unknown."""
    import yaml

    unknown_checks = sorted(set(only or ()) - set(POLICY.entries_for_lane(Lane.LOCAL)))
    if unknown_checks:
        raise UnknownSelection(f"no such check in policy v2's local lane: {', '.join(unknown_checks)}")

    url = url.rstrip("/")
    raw: RawManifest = yaml.safe_load((root / "openenv.yaml").read_text()) or RawManifest()
    manifest, manifest_failure = static_manifest(root)
    results: list[CheckResult] = []
    if manifest is None:
        assert manifest_failure is not None  # the parser gives a manifest or the failure
        results.append(manifest_failure)
    else:
        subject = Subject(root=root, manifest=manifest, image_ref=None, running=None, outputs_dir=root / "outputs")
        results += execute_graders([StaticManifestGrader(POLICY.bounds)], subject)
    try:
        listed: list[ListedTask] = httpx.get(url + "/tasks", timeout=60).json()
    except (httpx.HTTPError, ValueError):  # runtime.startup says why; every check that needs the server skips
        listed = []
    task_ids = [t["id"] for t in listed if tasks is None or t["id"] in tasks]
    if tasks is None:  # each family's choice of what a whole-server check plays (Family.spot_checked)
        by_family: dict[str, list[str]] = {}
        for one in listed:
            by_family.setdefault(str(one.get("family", "")), []).append(one["id"])
        kept = {t for family, ids in by_family.items() for t in (FAMILIES[family].spot_checked(ids) if family in FAMILIES else ids)}
        task_ids = [t for t in task_ids if t in kept]
    unknown_tasks = sorted(set(tasks or ()) - {t["id"] for t in listed})
    if listed and unknown_tasks:  # a server that does not answer fails runtime.startup instead
        raise UnknownSelection(f"the server serves no task {', '.join(unknown_tasks)} (GET /tasks lists {len(listed)})")
    run = Run(url=url, root=root, manifest=manifest, raw_manifest=raw, catalog=catalog or TaskCatalog.from_env(), task_ids=task_ids,
              listed=listed, server_pid=server_pid)
    results += static_declarations(run)
    boot = startup(run)
    results.append(boot)
    with Envelope(server_pid) as envelope:
        chosen = [c for c in checks(run, envelope) if only is None or c.check_id in only]
        theirs = {"runtime.reward_well_formed", "runtime.observation_schema", "runtime.state_contract", "runtime.network_policy"}
        if only is None or theirs & only:
            results += [r for r in openenv_runtime_graders(run, boot) if only is None or r.check_id in only]
        # this project's checks read the Run, not the subject, whose manifest is None when openenv.yaml does not parse
        subject = Subject(root=root, manifest=manifest, image_ref=None, running=None, outputs_dir=root / "outputs")  # type: ignore[arg-type]
        results += execute_graders(chosen, subject, prior=[boot])
    results += [skip(check_id, reason) for check_id, reason in NOT_HERE.items()]
    present = {r.check_id for r in results}
    for entry in POLICY.entries_for_lane(Lane.LOCAL).values():
        if entry.check_id not in present:
            results.append(skip(entry.check_id, "not selected in this run (--checks)" if only is not None else "not run"))
    order = {entry.check_id: i for i, entry in enumerate(POLICY.entries)}
    results.sort(key=lambda r: order.get(r.check_id, len(order)))
    try:
        digest = source_digest(root)
    except (ValueError, OSError):
        digest = ""
    return ValidationReportV2(report_schema_version="2", target=url, source_digest=digest, signature=SignatureKind.OPENENV_SERVED,
                              manifest=manifest, policy_version=POLICY.policy_version, lane=Lane.LOCAL,
                              levels_run=[Level.STATIC, Level.RUNTIME, Level.SEMANTIC], results=results,
                              verdict=apply_policy(results, POLICY, Lane.LOCAL))


def table(report: ValidationReportV2) -> str:
    """One line per check: status, check id, severity under the policy, and its first line of evidence."""
    severity = {e.check_id: e.severity.value for e in POLICY.entries}
    lines = [f"{'status':6}  {'check':40}  {'severity':8}  evidence"]
    for r in report.results:
        lines.append(f"{r.status.value.upper():6}  {r.check_id:40}  {severity.get(r.check_id, ''):8}  {(r.evidence or [''])[0][:160]}")
    lines.append(f"verdict: {report.verdict.value} (policy {report.policy_version}, "
                 f"{sum(r.status is CheckStatus.PASS for r in report.results)} pass, {sum(r.status is CheckStatus.FAIL for r in report.results)} fail, "
                 f"{sum(r.status is CheckStatus.SKIP for r in report.results)} skip, {sum(r.status is CheckStatus.ERROR for r in report.results)} error)")
    return "\n".join(lines)
