"""Import SWE-bench (or SWE-smith) instances as task folders, given local clones of their repositories.

    python -m env.tasks import-swebench instances.jsonl --repo ~/clones --out my_tasks/
    ENV_TASK_DIRS=my_tasks make serve

``--repo`` is one clone used for every instance, or a directory holding one clone per instance,
named by ``instance_id``. Each task folder gets the snapshot at ``base_commit`` (text files,
read with ``git archive``), the gold ``patch``, the hidden ``test_patch`` and ``task.json``.
SWE-smith instances (``--smith``) carry the bug-*inducing* patch: the snapshot is the commit with
that patch applied, and the gold fix is its reverse.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from env.patches import Files, apply_patch, make_patch
from env.project import MAX_FILE_BYTES

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


class ImportError_(ValueError):
    """An instance that cannot become a task (the message says which and why)."""


class Instance(BaseModel):
    """The fields of a SWE-bench instance this importer uses (others are ignored)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    instance_id: str
    repo: str = ""
    base_commit: str
    patch: str
    test_patch: str = ""
    problem_statement: str
    hints_text: str = ""
    fail_to_pass: list[str] = Field(alias="FAIL_TO_PASS")
    pass_to_pass: list[str] = Field(default_factory=list, alias="PASS_TO_PASS")

    @field_validator("fail_to_pass", "pass_to_pass", mode="before")
    @classmethod
    def _json_list(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value


def read_instances(path: Path) -> list[Instance]:
    """A JSON list, one JSON object, or JSON lines."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
        items = data if isinstance(data, list) else [data]
    except ValueError:
        items = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [Instance.model_validate(item) for item in items]


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


def import_instance(instance: Instance, repo: Path, out: Path, smith: bool = False, environment: dict[str, str] | None = None) -> Path:
    if not _ID.match(instance.instance_id):
        raise ImportError_(f"instance_id {instance.instance_id!r} cannot name a task folder")
    if not instance.fail_to_pass:
        raise ImportError_(f"{instance.instance_id}: FAIL_TO_PASS is empty")
    files = snapshot(_clone_for(instance, repo), instance.base_commit)
    if smith:  # the patch introduces the bug: the task starts from it, the fix undoes it
        buggy = apply_patch(files, instance.patch)
        gold_patch = make_patch(buggy, files)
    else:
        buggy = files
        apply_patch(files, instance.patch)  # fails loudly if the gold patch does not fit the snapshot
        gold_patch = instance.patch
    folder = out / instance.instance_id
    if folder.exists():
        shutil.rmtree(folder)
    for rel, text in buggy.items():
        path = folder / "repo" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "gold.patch").write_text(gold_patch, encoding="utf-8")
    if instance.test_patch:
        (folder / "test_patch.diff").write_text(instance.test_patch, encoding="utf-8")
    task = {
        "id": instance.instance_id,
        "name": instance.instance_id,
        "family": "repo",
        "difficulty": "medium",
        "tags": ["imported", "swe-smith" if smith else "swe-bench"],
        "problem_statement": instance.problem_statement,
        "FAIL_TO_PASS": instance.fail_to_pass,
        "PASS_TO_PASS": instance.pass_to_pass,
        "instance_id": instance.instance_id,
        "repo": instance.repo,
        "base_commit": instance.base_commit,
        "environment": environment or {},
        "max_steps": 50,
    }
    (folder / "task.json").write_text(json.dumps(task, indent=2) + "\n", encoding="utf-8")
    return folder
