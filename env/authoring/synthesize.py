"""Repository tasks synthesized from a real library, with no Docker: plant a bug the library's own tests catch.

    python -m env.authoring synthesize parse==1.20.2 --n 30 --out tasks/synth/parse
    python -m env.authoring validate tasks/synth/parse          # every task written was already proven valid

1. The baseline, once per library (``env.authoring.baseline``, cached in ``OUT/.synthesis/``): which tests pass both
   sandboxed and under the split, reaching the project's code, and which lines each executes.
2. Candidates: AST mutations (``env.authoring.mutate``) of the covered lines of covered functions, in a seeded order
   that visits the functions round robin.
3. Screening, cheap: the tests covering the mutated lines, sandboxed, on the mutated tree. A mutant no test
   catches is dropped; one whose failing tests are those of a task already kept is a duplicate.
4. Proof: FAIL_TO_PASS is the failing covering tests, PASS_TO_PASS every other listed test exercising the mutated
   module, and ``env.authoring.validate`` must prove the task valid over ``--runs`` runs of each state (3 by default).
   Held out (``hold_out``): with two or more failing test functions, a third of them (at least one, never all) and a
   third of the passing covering ones, chosen by a hash of the task id; their code is only in test_patch.diff, their
   ids in HELD_OUT, and the problem statement is written from the visible failing tests alone.
5. Each valid task gets a problem statement from its failing tests' output (``env.authoring.statement``), the gold
   ``suspect`` (the mutated function and lines) and ``mechanism`` (the mutation's), a difficulty estimate
   (``env.authoring.difficulty``; ``python -m env.eval difficulty OUT`` adds whether the heuristic agent solves it), and
   is written as a task folder; ``instances.jsonl`` holds them as SWE-smith-style instances (the patch introduces
   the bug), which ``import-swebench --pypi NAME==VERSION --smith`` reads back.

Resumable: each candidate's decision is appended to ``OUT/.synthesis/ledger.jsonl`` (``env.authoring.ledger``) after
its task folder (if any) is complete, so a cut run started again with the same arguments skips what it decided.

Load decides nothing: every run's limits count CPU time (``Sandbox.for_validity``), the baseline's ``run_seconds`` and a
mutant's budget too, so a mutant hangs when its runs use more than the budget's CPU time, however busy the machine. A
run the machine starved (the wall-clock backstop stopped it under its CPU limit) runs again; a candidate starved each
time is ``busy`` in the ledger, which decides nothing: a resumed synthesis tries it again.
"""

from __future__ import annotations

import ast
import json
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from env.authoring.baseline import Baseline, baseline, write_tree
from env.authoring.cost import Meter
from env.authoring.difficulty import estimate, record
from env.authoring.holdout import expand, function_key, share, strip_tests
from env.authoring.ledger import Decision, append, read_ledger, run_seconds
from env.authoring.library import Library, SynthesisError
from env.authoring.mutate import Mutant, changes_code, mutants
from env.authoring.statement import problem_statement
from env.authoring.validate import TaskValidation, validate_task
from env.families.catalog import TaskCatalog
from env.patches import Files, make_patch
from env.project import RepoTask, is_test_path, load_repo_task
from env.pyparse import parse
from env.runtime import Runtime
from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.test_source import source_of
from env.verdict.busy import MachineBusy, until_decided
from env.verdict.outcome import RepoVerdict, f2p_ok
from env.verdict.sandboxed import run_sandboxed
from env.verdict.testenv import TestEnv, ensure

_STATE = ".synthesis"


class Summary(BaseModel):
    library: str
    tried: int
    valid: int
    by_status: dict[str, int]
    seconds: float
    seconds_per_valid: float | None
    baseline_seconds: float

    @property
    def yield_(self) -> float:
        return self.valid / self.tried if self.tried else 0.0


def authoring_sandbox() -> Sandbox:
    """The sandbox of synthesis's whole-suite runs, and of the catalog build's checks of what it decided: a library's
    suite, or every failing test of a task at once, takes far longer than one served run (the served limits bound
    each task's own runs, see ``Synthesis._run``)."""
    isolation = probe_isolation()
    if not isolation.can_execute:
        raise SynthesisError(f"this host cannot run the verdict: {isolation.reason}")
    # The baseline's one reply holds every test's covered lines: a large suite's are megabytes.
    return Sandbox(Limits(wall_seconds=300, cpu_seconds=300, reply_bytes=64 * 1024 * 1024).for_validity(), isolation, warm=False)


def candidates(lib: Library, base: Baseline, seed: int) -> list[Mutant]:
    """Mutants of covered lines, functions visited round robin in a seeded order (so a short run samples widely)."""
    by_function: dict[tuple[str, str], list[Mutant]] = {}
    for path in sorted(base.covered):
        lines = {line for line, tests in base.covered[path].items() if tests}
        for mutant in mutants(lib.files[path], path, lines, check=False):  # checked when tried (see _decide)
            by_function.setdefault((path, mutant.function), []).append(mutant)
    rng = random.Random(seed)
    groups = [by_function[k] for k in sorted(by_function)]
    rng.shuffle(groups)
    for group in groups:
        rng.shuffle(group)
    order: list[Mutant] = []
    for i in range(max((len(g) for g in groups), default=0)):
        order += [g[i] for g in groups if i < len(g)]
    return order


@dataclass
class Synthesis:
    lib: Library
    out: Path
    runs: int = 3
    seed: int = 0
    log: Callable[[str], None] = print
    sandbox: Sandbox = field(default_factory=authoring_sandbox)

    def __post_init__(self) -> None:
        self.sandbox = self.sandbox.for_validity()  # every limit here decides validity: it counts CPU time
        self.state = self.out / _STATE
        self.state.mkdir(parents=True, exist_ok=True)
        self.ledger = self.state / "ledger.jsonl"
        self._claim_state()
        self._dumps: dict[str, str] = {}

    def _claim_state(self) -> None:
        """The state folder belongs to one library, suite and environment: another's baseline would be wrong."""
        identity = {"library": self.lib.slug, "tests": self.lib.tests, "requirements": self.lib.requirements, "environment": self.lib.environment}
        path = self.state / "library.json"
        if path.is_file():
            recorded = json.loads(path.read_text(encoding="utf-8"))
            if recorded != identity:
                raise SynthesisError(
                    f"{self.out} holds the synthesis of {recorded.get('library')} (its tests or requirements: {recorded}); "
                    f"synthesize {self.lib.slug} with these into another --out"
                )
        else:
            path.write_text(json.dumps(identity), encoding="utf-8")

    def run(self, n: int) -> Summary:
        started = time.monotonic()
        try:
            return self._run(n)
        finally:  # every run's wall time counts, a cut one's included (what a resumed synthesis cost in all)
            append(self.state / "runs.jsonl", json.dumps({"seconds": round(time.monotonic() - started, 2)}))

    def _run(self, n: int) -> Summary:
        self._started = time.monotonic()
        base = baseline(self.lib, self.sandbox, self.state)
        limit = base.budget()
        # Proven under the limits the tasks will be served with (SANDBOX_WALL_SECONDS ...: a task whose runs take longer
        # than a server allows is not valid there), counted in CPU time: what a run takes on an idle machine, whatever
        # the load here. A mutant's screening stops sooner when the clean runs are quick.
        served = Limits.from_env().for_validity()
        if base.run_seconds > served.wall_seconds:
            self.log(f"{self.lib.slug}: the clean suite used {base.run_seconds:.1f} s of CPU time, more than the {served.wall_seconds:g} s a run "
                     "may take here (SANDBOX_WALL_SECONDS): tasks whose tests take as long will be invalid; raise it here and where they are served")  # fmt: skip
        bounded = Sandbox(served.model_copy(update={"wall_seconds": min(limit, served.wall_seconds)}), self.sandbox.isolation, warm=False)
        runtime = Runtime(TaskCatalog([]), Sandbox(served, self.sandbox.isolation), workers=2)
        decisions = read_ledger(self.ledger)
        decided = {d.key for d in decisions if d.status != "busy"}  # a candidate the machine starved is tried again
        recorded = {d.task for d in decisions if d.status == "valid"}
        for task in self.tasks():  # this synthesis's folder moved into place just before a stop, its decision never written
            if task.folder.name not in recorded:
                shutil.rmtree(task.folder)
        signatures = {frozenset(t.fail_to_pass): t.id for t in self.tasks()}
        valid = len(signatures)
        self.log(f"{self.lib.slug}: {len(base.trusted)} trusted tests; {valid} valid task(s) and {len(decided)} candidate(s) decided before")
        env = ensure(self.lib.requirements)
        library = load_repo_task(self.state / "library")
        order = candidates(self.lib, base, self.seed)
        if not order:
            raise SynthesisError(f"{self.lib.slug}: no trusted test executes a line of a function of the project's source: nothing to mutate")
        for mutant in order:
            if valid >= n:
                break
            if mutant.key in decided:
                continue
            started = time.monotonic()
            decision = self._decide(mutant, base, library, env, signatures, bounded, runtime)
            decision.seconds = round(time.monotonic() - started, 2)
            append(self.ledger, decision.model_dump_json())
            decisions.append(decision)
            valid += decision.status == "valid"
            self.log(f"  {decision.status:9} {mutant.path}:{mutant.start} {mutant.operator} ({decision.seconds:.1f} s) {decision.task or decision.detail[:120]}")
        self.write_instances()
        return self.summary(decisions, base, time.monotonic() - self._started)

    def _decide(
        self, mutant: Mutant, base: Baseline, library: RepoTask, env: TestEnv, signatures: dict[frozenset[str], str], bounded: Sandbox,
        runtime: Runtime,
    ) -> Decision:
        if mutant.path not in self._dumps:
            self._dumps[mutant.path] = ast.dump(parse(self.lib.files[mutant.path]))
        if not changes_code(mutant.source, self._dumps[mutant.path]):
            return Decision(key=mutant.key, status="no-op", detail="the mutated file does not parse, or means what the original does")
        covering = sorted({t for line in mutant.screened for t in base.covered[mutant.path].get(line, [])})
        if not covering:
            return Decision(key=mutant.key, status="uncovered", detail="no trusted test executes the mutated lines")
        files = {**self.lib.files, mutant.path: mutant.source}
        try:
            screen = until_decided(lambda: run_sandboxed(bounded, env, library, files, library.visible_tests, covering))
        except MachineBusy as exc:
            return Decision(key=mutant.key, status="busy", detail=str(exc))
        if screen.timed_out:  # an endless loop: each validation run would use the whole budget
            return Decision(key=mutant.key, status="hangs", detail=f"the covering tests used more than {bounded.limits.wall_seconds:g} s of CPU time")
        if screen.error:
            return Decision(key=mutant.key, status="setup", detail=screen.error)
        if screen.collect_errors:  # a test file no longer imports: the task would fail "collection intact"
            return Decision(key=mutant.key, status="breaks-collection", detail="; ".join(sorted(screen.collect_errors))[:300])
        failing = sorted(t for t in covering if not f2p_ok(screen.outcomes.get(t, "ERROR")))
        if not failing:
            return Decision(key=mutant.key, status="uncaught", detail=f"the {len(covering)} covering test(s) still pass")
        if frozenset(failing) in signatures:
            return Decision(key=mutant.key, status="duplicate", detail=f"fails the same tests as {signatures[frozenset(failing)]}")
        module_tests = {t for tests in base.covered[mutant.path].values() for t in tests}
        passing = sorted(module_tests - set(failing))
        task_id = f"{self.lib.slug}-{mutant.digest[:10]}"
        folder = self.state / "building" / task_id
        held = hold_out(task_id, failing, [t for t in covering if t not in failing], passing, defines(self.lib.files))
        task = write_task(folder, self.lib, task_id, mutant, failing, passing, screen, held)
        with Meter() as cost:  # what proving it cost (env.authoring.catalog records it per task)
            report = validate_task(runtime, task, runs=self.runs)
        decided = Decision(key=mutant.key, status="valid", task=task_id, validation_runs=self.runs, validation_cpu_seconds=cost.cpu_seconds,
                           validation_wall_seconds=cost.wall_seconds)  # fmt: skip
        if not report.ok:
            shutil.rmtree(folder, ignore_errors=True)
            failed = {"status": "busy" if report.busy else "invalid", "task": "", "detail": report.busy or _problems(report)}
            return decided.model_copy(update=failed)
        record(folder, estimate(task, mutant.function))
        final = self.out / task_id
        shutil.rmtree(final, ignore_errors=True)
        folder.rename(final)
        signatures[frozenset(failing)] = task_id
        return decided

    def tasks(self) -> list[RepoTask]:
        """The valid tasks this synthesis wrote so far (other task folders in OUT are not its own: never touched)."""
        found = []
        for folder in sorted(self.out.iterdir()):
            if folder.name != _STATE and (folder / "task.json").is_file():
                task = load_repo_task(folder)
                if task.synthesis.get("library") == self.lib.slug:
                    found.append(task)
        return found

    def write_instances(self) -> Path:
        """Every task as a SWE-smith-style instance: ``patch`` introduces the bug into the named release."""
        path = self.out / "instances.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for task in self.tasks():
                handle.write(json.dumps(instance_of(task, self.lib)) + "\n")
        return path

    def summary(self, decisions: list[Decision], base: Baseline, this_run: float) -> Summary:
        """Seconds: the wall time of every run so far (this one included), baseline and candidate generation too."""
        by_status: dict[str, int] = {}
        decisions = list({d.key: d for d in decisions}.values())  # a candidate tried again (it was busy): its last decision
        for d in decisions:
            by_status[d.status] = by_status.get(d.status, 0) + 1
        valid = by_status.get("valid", 0)
        runs = self.state / "runs.jsonl"
        before = run_seconds(runs) if runs.is_file() else []
        seconds = round(sum(before) + this_run, 1)
        result = Summary(library=self.lib.slug, tried=len(decisions), valid=valid, by_status=by_status, seconds=seconds,
                         seconds_per_valid=round(seconds / valid, 1) if valid else None, baseline_seconds=base.seconds)  # fmt: skip
        (self.state / "summary.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
        return result


def write_task(
    folder: Path, lib: Library, task_id: str, mutant: Mutant, failing: list[str], passing: list[str], screen: RepoVerdict, held: list[str],
    statement: str = "",
) -> RepoTask:
    """A synthesized task's folder (before its difficulty is recorded): the mutant in the release, the held-out tests'
    code moved to test_patch.diff, the problem statement from ``screen`` (a run of the failing tests on the mutant) or
    ``statement``. ``catalog build`` writes the same folder from a manifest entry (env.authoring.catalog.materialise)."""
    shutil.rmtree(folder, ignore_errors=True)
    buggy = {**lib.files, mutant.path: mutant.source}
    tests = {p: t for p, t in buggy.items() if is_test_path(p)}
    visible = strip_tests(tests, held)
    write_tree(folder / "repo", {**buggy, **visible})
    (folder / "gold.patch").write_text(make_patch({mutant.path: mutant.source}, {mutant.path: lib.files[mutant.path]}), encoding="utf-8")
    if held:
        (folder / "test_patch.diff").write_text(make_patch(visible, tests), encoding="utf-8")
    shown = [t for t in failing if t not in held]  # the statement and the name speak of visible tests only
    # What regenerates the bug from the release (RepoTask.synthesis holds strings): env.authoring.mutate's mutant of
    # `path` whose edit starts on line `start` and whose digest this is.
    planted = {"path": mutant.path, "start": str(mutant.start), "end": str(mutant.end), "digest": mutant.digest}
    data = {
        "id": task_id,
        "name": f"{lib.name} {lib.version}: {shown[0].split('::')[-1]} fails",  # never where, nor how
        "family": "repo",
        "difficulty": "medium",
        "tags": ["synthesized", lib.name],  # /tasks publishes tags: the operator would say the mechanism
        "problem_statement": statement or problem_statement(lib.name, shown, screen),
        "FAIL_TO_PASS": failing,
        "PASS_TO_PASS": passing,
        **({"HELD_OUT": held} if held else {}),
        "environment": lib.environment,
        "requirements": lib.requirements,
        "max_steps": 40,
        "instance_id": task_id,
        "repo": lib.name,
        "version": lib.version if lib.pin else "",
        "mechanism": list(mutant.mechanisms),
        "synthesis": {"library": lib.slug, "operator": mutant.operator, "description": mutant.description, "pypi": lib.pin, **planted},
    }
    (folder / "task.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    data["suspect"] = [where.model_dump() for where in load_repo_task(folder).gold_lines]  # in the buggy file's lines
    (folder / "task.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return load_repo_task(folder)


def instance_of(task: RepoTask, lib: Library) -> dict[str, object]:
    return {
        "instance_id": task.id,
        "repo": lib.name,
        "version": lib.version if lib.pin else "",
        "base_commit": "",
        "patch": make_patch(task.gold_files, task.files),  # the bug, applied to the release (SWE-smith's convention)
        "FAIL_TO_PASS": json.dumps(task.fail_to_pass),
        "PASS_TO_PASS": json.dumps(task.pass_to_pass),
        **({"HELD_OUT": json.dumps(task.held_out)} if task.held_out else {}),  # the importer strips their code again
        "problem_statement": task.problem_statement,
        "requirements": task.requirements,
        "environment": task.environment,
    }


def hold_out(
    task_id: str, failing: list[str], covering_passing: list[str], passing: list[str], holdable: Callable[[str], bool] = lambda t: True
) -> list[str]:  # fmt: skip
    """The tests a synthesized task keeps from the agent: with two or more failing test functions, a third of them (at
    least one, never all: the statement needs a visible failure) and a third of the passing covering functions that
    have no failing case; none with one failing function (the bug must fail a held-out test, and that one is the
    agent's only evidence). Chosen by a hash of the task id and each test's function: the same task, the same split.
    Only ``holdable`` tests are chosen: a test its class inherits has no code of its own to take out of repo/ (taking
    the base class's would take it from every subclass), so it stays visible."""
    if len({function_key(t) for t in failing}) < 2:
        return []
    f2p = share([t for t in failing if holdable(t)], 1 / 3, task_id, minimum=1, keep=1)
    failing_keys = {function_key(t) for t in failing}
    p2p = share([t for t in covering_passing if function_key(t) not in failing_keys and holdable(t)], 1 / 3, task_id)
    return expand(f2p + p2p, failing + passing)


def defines(files: Files) -> Callable[[str], bool]:
    """Whether a test id's own function is in ``files`` (``env.test_source.source_of``): what ``hold_out`` may hold."""
    return lambda test_id: source_of(files, test_id) is not None


def _problems(report: TaskValidation) -> str:
    return "; ".join(f"{c.name}: {c.detail}" if c.detail else c.name for c in report.checks if not c.ok)
