"""Level 1 (static): what the package declares, read from the source tree beside the running server: OpenEnv's
manifest parser, the resource and timeout declarations, dependency and task-distribution pinning, the layout; the
build checks it cannot make (no image is built here) are skips that say so."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from openenv.validation.manifest import ManifestError, NormalizedManifest
from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
from openenv.validation.report import CheckResult
from openenv.validation.types import CheckStatus

from env.validation.v2.check import POLICY, result, skip
from env.validation.v2.context import Run


def package_files(root: Path) -> list[Path]:
    """The files the package is made of: in a git checkout, those git tracks or would add (what .gitignore keeps out,
    such as .venv or a test run's .hypothesis cache, is not the package); elsewhere every file outside hidden folders,
    .venv and node_modules."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, check=False)
    if listed.returncode == 0:
        return [root / name for name in listed.stdout.decode().split("\0") if name]
    return [p for p in root.rglob("*") if p.is_file()
            and not any(part.startswith(".") or part in ("node_modules",) for part in p.relative_to(root).parts)]


def static_declarations(run: Run) -> list[CheckResult]:
    """The static checks this validator can make from the source tree, and the build ones it cannot, with why."""
    out: list[CheckResult] = []
    started = time.monotonic()
    if run.manifest is not None:
        resources = run.manifest.resources
        out.append(result("static.resource_declaration", [], resources.model_dump(), "cpu, memory_mb, disk_mb and episode_timeout_s declared",
                          "", started))
        ceiling = POLICY.bounds.max_episode_timeout_s
        out.append(result("static.timeout_ceiling", [] if resources.episode_timeout_s <= ceiling else
                          [f"episode_timeout_s {resources.episode_timeout_s} exceeds the policy's {ceiling}"],
                          {"episode_timeout_s": resources.episode_timeout_s, "ceiling_s": ceiling},
                          "the declared episode timeout is within the policy's ceiling", "declare a shorter episode_timeout_s", started))
        pin = run.manifest.task_distribution
        pinned = pin is not None and (pin.generator_seed is not None or pin.dataset_version is not None)
        out.append(result("static.task_distribution_pinning", [] if pinned else ["validation.task_distribution pins no generator seed or dataset version"],
                          pin.model_dump() if pin else {}, "the generated tasks' distribution is pinned (generator seed and dataset version)",
                          "declare validation.task_distribution", started))
    requirements = run.root / "requirements.txt"
    loose: list[str] = []
    if requirements.is_file():
        for line in requirements.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-") and "==" not in line:
                loose.append(line)
    problems = ([] if requirements.is_file() else ["no requirements.txt"]) + [f"not pinned: {line}" for line in loose[:10]]
    problems += [] if (run.root / "uv.lock").is_file() else ["no uv.lock"]
    out.append(result("static.dependency_pinning", problems, {"unpinned": len(loose)}, "every requirement is pinned (==) and uv.lock is committed",
                      "pin every dependency (make lock)", started))
    archives = [p.name for p in package_files(run.root) if p.suffix in {".zip", ".tar", ".gz", ".whl", ".tgz"}]
    out.append(result("static.layout", [f"archive in the package: {a}" for a in archives], {"archives": len(archives)},
                      "no archives in the package", "unpack archives into the tree", started))
    for check_id in ("static.reproducible_build", "static.image_hygiene", "static.sbom", "static.oci_labels"):
        out.append(skip(check_id, "needs the image built by a validation provider (openenv validate with Docker); "
                                  "validator.py checks a running server and builds nothing"))
    return out


def static_manifest(root: Path) -> tuple[NormalizedManifest | None, CheckResult | None]:
    """OpenEnv's parser reads openenv.yaml (a parse failure is the static.manifest FAIL, as in its runner)."""
    started = time.monotonic()
    try:
        return OpenEnvYamlParser().parse(root), None
    except ManifestError as exc:
        return None, CheckResult(check_id="static.manifest", status=CheckStatus.FAIL, measured={"schema_errors": len(exc.errors)},
                                 evidence=exc.errors, remediation=exc.remediation, duration_s=time.monotonic() - started)

