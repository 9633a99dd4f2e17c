"""Import SWE-bench (or SWE-smith) instances as task folders, from local clones or from PyPI releases.

    python -m env.authoring import-swebench instances.jsonl --repo ~/clones --out my_tasks/
    python -m env.authoring import-swebench instances.jsonl --pypi parse==1.20.1 --out my_tasks/
    ENV_TASK_DIRS=my_tasks make serve

``--repo`` is one clone used for every instance, or a directory holding one clone per instance,
named by ``instance_id``. Each task folder gets the snapshot at ``base_commit`` (text files,
read with ``git archive``), the gold ``patch``, the hidden ``test_patch`` and ``task.json``. Where the
instance names an ``environment_setup_commit`` (SWE-bench's commit whose dependencies build the environment
of its ``version``), the exact pins of that commit's requirement files become the task's requirements.
``--pypi NAME==VERSION`` builds the repository from that release's sdist instead, when no clone is at hand
(``--pypi NAME`` takes the version from each instance's ``version``).
SWE-smith instances (``--smith``) carry the bug-*inducing* patch: the snapshot is the commit with
that patch applied, and the gold fix is its reverse. Either source's layout is read from its files: a module under
``src/`` (a namespace package's too) makes the task's environment PYTHONPATH=src. The command then settles each task
on its gold tree (``env.authoring.settle``: placement, and the PASS_TO_PASS tests the gold does not pass dropped).

Every imported task records the gold ``suspect`` (the functions and lines its fix changes) and the ``mechanism``
its fix reads as (``env.authoring.mechanism``), which a submission's structured hypothesis is scored against.

Held-out tests, as SWE-bench keeps its test patch from the agent: every FAIL_TO_PASS / PASS_TO_PASS test whose code
the instance's ``test_patch`` adds or changes (and any the instance itself names in ``HELD_OUT``, as synthesis's
instances do) is listed in ``HELD_OUT``; its code is removed from repo/'s test files and lives only in
test_patch.diff (rewritten, when code had to be removed, as the diff from repo/'s tests to the graded ones). A task
whose every FAIL_TO_PASS test is held out stays valid: its problem statement is the agent's evidence.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from env.authoring import sdist
from env.authoring.holdout import changed_tests, expand, strip_tests
from env.authoring.mechanism import infer_mechanisms
from env.patches import Files, PatchError, apply_patch, make_patch
from env.project import MAX_FILE_BYTES, is_test_path, load_repo_task, source_only

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


class ImportError_(ValueError):
    """An instance that cannot become a task (the message says which and why)."""


class Instance(BaseModel):
    """The fields of a SWE-bench instance this importer uses (others are ignored)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    instance_id: str
    repo: str = ""
    base_commit: str = ""
    version: str = ""
    environment_setup_commit: str = ""
    patch: str
    test_patch: str = ""
    problem_statement: str
    hints_text: str = ""
    requirements: list[str] = Field(default_factory=list, description="What the tests import besides pytest (exact pins)")
    environment: dict[str, str] = Field(default_factory=dict)
    fail_to_pass: list[str] = Field(alias="FAIL_TO_PASS")
    pass_to_pass: list[str] = Field(default_factory=list, alias="PASS_TO_PASS")
    held_out: list[str] = Field(default_factory=list, alias="HELD_OUT", description="Tests to hold out besides those test_patch adds or changes")

    @field_validator("fail_to_pass", "pass_to_pass", "requirements", "held_out", mode="before")
    @classmethod
    def _json_list(cls, value: Any) -> Any:
        if value is None:
            return []
        return json.loads(value) if isinstance(value, str) and value.lstrip().startswith("[") else [value] if isinstance(value, str) else value

    @field_validator("version", "environment_setup_commit", "base_commit", "test_patch", "hints_text", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        # SWE-bench dumps hold `version` as a number in places (3.0) and absent commits as null
        return "" if value is None else str(value) if isinstance(value, (int, float)) else value


def read_instances(path: Path) -> list[dict[str, Any]]:
    """A JSON list, one JSON object, or JSON lines: the raw rows (each is validated on its own, so one bad row
    does not stop the others)."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
        items = data if isinstance(data, list) else [data]
    except ValueError:
        items = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [item if isinstance(item, dict) else {"instance_id": str(item)} for item in items]


def _clone_for(instance: Instance, repo: Path) -> Path:
    if (repo / ".git").exists():
        return repo
    candidate = repo / instance.instance_id
    if (candidate / ".git").exists():
        return candidate
    raise ImportError_(f"{instance.instance_id}: no git clone at {repo} or {candidate}")


def snapshot(clone: Path, commit: str) -> Files:
    """The text files of ``commit`` (via ``git archive``: the working tree is never touched)."""
    if not re.fullmatch(r"[0-9a-fA-F]{7,40}", commit):
        raise ImportError_(f"base_commit {commit!r} is not a commit id")
    done = subprocess.run(["git", "-C", str(clone), "archive", "--format=tar", commit], capture_output=True, check=False)
    if done.returncode != 0:
        raise ImportError_(f"git archive {commit} failed in {clone}: {done.stderr.decode(errors='replace').strip()}")
    files: Files = {}
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        for member in archive.getmembers():
            if not member.isfile() or member.size > MAX_FILE_BYTES:
                continue
            handle = archive.extractfile(member)
            data = handle.read() if handle else b""
            if b"\0" in data:
                continue
            try:
                files[member.name] = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
    return files


_REQUIREMENT_FILE = re.compile(r"(^|/)([\w.-]*requirements[\w.-]*\.txt|requirements/[\w.-]+\.txt)$")
_EXACT_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[\w,.-]+\])?)\s*==\s*([\w.+!-]+)\s*(?:;[^#]*)?(?:#.*)?$")


def setup_requirements(clone: Path, commit: str) -> tuple[list[str], list[str]]:
    """The exact pins of the requirement files at ``commit`` (SWE-bench's environment_setup_commit), and the lines
    left out (ranges, includes, options: a test environment is built from exact pins only)."""
    if not re.fullmatch(r"[0-9a-fA-F]{7,40}", commit):
        raise ImportError_(f"environment_setup_commit {commit!r} is not a commit id")
    listed = subprocess.run(["git", "-C", str(clone), "ls-tree", "-r", "--name-only", commit], capture_output=True, text=True, check=False)
    if listed.returncode != 0:
        raise ImportError_(f"environment_setup_commit {commit} is not in {clone}: {listed.stderr.strip()}")
    pins: list[str] = []
    names: set[str] = set()
    skipped: list[str] = []
    for path in sorted(p for p in listed.stdout.splitlines() if _REQUIREMENT_FILE.search(p) and "/" not in p.removeprefix("requirements/")):
        shown = subprocess.run(["git", "-C", str(clone), "show", f"{commit}:{path}"], capture_output=True, text=True, check=False)
        for raw in shown.stdout.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            found = _EXACT_PIN.match(line)
            name = re.sub(r"[-_.]+", "-", found.group(1).split("[")[0]).lower() if found else ""
            if found and name not in names:  # one pin per distribution: the first file (sorted) that pins it
                names.add(name)
                marker = line.split("#")[0].partition(";")[2].strip()
                pins.append(f"{found.group(1)}=={found.group(2)}" + (f"; {marker}" if marker else ""))  # uv evaluates markers
            elif not found:
                skipped.append(f"{path}: {line}")
    return pins, skipped


def pypi_release(pin: str, instance: Instance) -> tuple[str, str]:
    """``NAME==VERSION``, or ``NAME`` with the instance's own ``version`` (then an exact release, as synthesis writes
    it; SWE-bench's own `version` is a series such as 1.20, which names no sdist: give the release)."""
    if "==" in pin:
        name, version = sdist.parse_pin(pin)
        if instance.version and version != instance.version and not version.startswith(instance.version + "."):
            raise ImportError_(f"{instance.instance_id}: --pypi {pin} is not the instance's version {instance.version!r}")
        return name, version
    if not instance.version:
        raise ImportError_(f"{instance.instance_id}: --pypi {pin} names no version and the instance has no `version`")
    return sdist.parse_pin(f"{pin}=={instance.version}")


def release_files(name: str, version: str) -> tuple[Files, dict[str, str]]:
    """The text files of a release's sdist, and the environment its layout needs (PYTHONPATH=src for a src layout)."""
    tree = sdist.fetch(name, version)
    return sdist.tree_files(tree), sdist.layout_environment(tree)


def import_instance(
    instance: Instance,
    repo: Path | None,
    out: Path,
    smith: bool = False,
    environment: dict[str, str] | None = None,
    pypi: str | None = None,
    requirements: list[str] | None = None,
    say: Callable[[str], None] = print,
) -> Path:
    """One task folder from one instance: the snapshot from ``repo`` (a clone) or from the ``pypi`` release."""
    if not _ID.match(instance.instance_id):
        raise ImportError_(f"instance_id {instance.instance_id!r} cannot name a task folder")
    if not instance.fail_to_pass:
        raise ImportError_(f"{instance.instance_id}: FAIL_TO_PASS is empty")
    pins = [*instance.requirements, *(requirements or [])]
    layout: dict[str, str] = {}
    version = instance.version
    if pypi:
        name, version = pypi_release(pypi, instance)
        files, layout = release_files(name, version)
    else:
        if repo is None:
            raise ImportError_(f"{instance.instance_id}: neither a clone (--repo) nor a release (--pypi) to build the repository from")
        clone = _clone_for(instance, repo)
        files = snapshot(clone, instance.base_commit)
        layout = sdist.files_layout(files)  # a src layout (namespace packages too) needs PYTHONPATH=src, as a release's does
        if instance.environment_setup_commit:
            found, skipped = setup_requirements(clone, instance.environment_setup_commit)
            pins += [p for p in found if p not in pins]
            for line in skipped:
                say(f"  {instance.instance_id}: not an exact pin, left out of its requirements (add it with --requires): {line}")
    if smith:  # the patch introduces the bug: the task starts from it, the fix undoes it
        buggy = apply_patch(files, instance.patch)
        fixed = files
        gold_patch = make_patch(buggy, files)
    else:
        buggy = files
        fixed = apply_patch(files, instance.patch)  # fails loudly if the gold patch does not fit the snapshot
        gold_patch = instance.patch
    buggy, test_patch, held = hold_out(instance, buggy)
    folder = out / instance.instance_id
    if folder.exists():
        shutil.rmtree(folder)
    for rel, text in buggy.items():
        path = folder / "repo" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "gold.patch").write_text(gold_patch, encoding="utf-8")
    if test_patch:
        (folder / "test_patch.diff").write_text(test_patch, encoding="utf-8")
    task = {
        "id": instance.instance_id,
        "name": instance.instance_id,
        "family": "repo",
        "difficulty": "medium",
        "tags": ["imported", "swe-smith" if smith else "swe-bench"] + (["pypi"] if pypi else []),
        "problem_statement": instance.problem_statement,
        "FAIL_TO_PASS": instance.fail_to_pass,
        "PASS_TO_PASS": instance.pass_to_pass,
        **({"HELD_OUT": held} if held else {}),
        "instance_id": instance.instance_id,
        "repo": instance.repo,
        "base_commit": "" if pypi else instance.base_commit,  # a release's sdist is no commit
        "version": version,
        "environment_setup_commit": instance.environment_setup_commit,
        "environment": {**layout, **instance.environment, **(environment or {})},
        "requirements": pins,
        "mechanism": infer_mechanisms(source_only(buggy), source_only(fixed)),
        "max_steps": 50,
    }
    (folder / "task.json").write_text(json.dumps(task, indent=2) + "\n", encoding="utf-8")
    task["suspect"] = [where.model_dump() for where in load_repo_task(folder).gold_lines]
    (folder / "task.json").write_text(json.dumps(task, indent=2) + "\n", encoding="utf-8")
    return folder


def hold_out(instance: Instance, buggy: Files) -> tuple[Files, str, list[str]]:
    """The snapshot without the held-out tests' code, the test patch that puts it back, and the held-out ids (see the
    module's docstring)."""
    listed = list(dict.fromkeys(instance.fail_to_pass + instance.pass_to_pass))
    stray = [t for t in instance.held_out if t not in listed]
    if stray:
        raise ImportError_(f"{instance.instance_id}: HELD_OUT names tests in neither list: {', '.join(stray[:4])}")
    base = {p: t for p, t in buggy.items() if is_test_path(p)}
    try:
        graded = {p: t for p, t in apply_patch(base, instance.test_patch).items() if is_test_path(p)} if instance.test_patch else base
    except PatchError as exc:
        raise ImportError_(f"{instance.instance_id}: test_patch does not apply to the snapshot: {exc}") from None
    held = expand(changed_tests(base, graded, listed) + instance.held_out, listed)
    if not held:
        return buggy, instance.test_patch, []
    visible = strip_tests(base, held)
    if visible == base:  # the held-out code was only added by test_patch: the instance's own patch is kept as it is
        return buggy, instance.test_patch, held
    return {**buggy, **visible}, make_patch(visible, graded), held
