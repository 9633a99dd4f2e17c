"""The shape of this project's v2 checks: one function of the run per check id, wrapped as the grader OpenEnv's
scheduler runs (``PolicyCheck``), and the two ways a check ends (a result from its problems, or a skip with its
reason)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from openenv.validation.graders import Subject
from openenv.validation.manifest import NormalizedManifest
from openenv.validation.policy import load_policy
from openenv.validation.report import CheckResult
from openenv.validation.types import CheckStatus, Level, ProviderCapability

from env.validation.v2.context import Run

POLICY = load_policy("v2")


def result(check_id: str, problems: list[str], measured: dict[str, object], ok_line: str, remediation: str, started: float) -> CheckResult:
    return CheckResult(
        check_id=check_id,
        status=CheckStatus.FAIL if problems else CheckStatus.PASS,
        measured=measured,
        evidence=problems[:20] or [ok_line],
        remediation=remediation if problems else None,
        duration_s=time.monotonic() - started,
    )


def skip(check_id: str, reason: str) -> CheckResult:
    return CheckResult(check_id=check_id, status=CheckStatus.SKIP, evidence=[reason], duration_s=0.0)


@dataclass
class PolicyCheck:
    """One of this project's graders, in the shape OpenEnv's scheduler runs (``openenv.validation.graders.Grader``)."""

    check_id: str
    level: Level
    run_fn: Callable[[Run], CheckResult]
    depends_on: tuple[str, ...] = ("runtime.startup",)
    requires_capabilities: frozenset[str] = frozenset()
    requires_provider: frozenset[ProviderCapability] = frozenset()
    context: Run | None = None

    def applies_to(self, manifest: NormalizedManifest) -> bool:
        return True

    def run(self, subject: Subject) -> CheckResult:
        assert self.context is not None
        return self.run_fn(self.context)
