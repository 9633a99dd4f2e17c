"""Pre-submission check of a running AgentDebuggerEnv server (or one it starts), printing every check.

    python validator.py                       # starts the server on a free local port
    python validator.py --url http://localhost:8000

Checks: every endpoint answers as documented and openenv.yaml lists the server's tasks; on every task the
oracle (the gold fix with its hypothesis, read from the local task folders) scores >= 0.9 and a do-nothing
agent (give_up at once) exactly 0.0; every degenerate policy (env.authoring.degenerate: the bug resubmitted or
with a no-op edit, a stuffed hypothesis, query or test-run spam, alternating, an edit next to the bug), played
with the gold hypothesis, scores exactly 0.0 and its step rewards sum to <= 0; each task's recorded overfit
(env.authoring.oracle.overfit_actions: a table of the visible tests' answers on classic tasks, which must score 0.0,
overfit.patch elsewhere) is not resolved; every score lies in [0, 1]; the same seed and actions
twice give identical rewards; concurrent episodes stay isolated. Exits 1 and lists the failures if any check fails.
The last line counts the checks and gives the time taken, in both modes: "94 passed, 0 failed in 41.3 s".

    python validator.py --v2 [--json report.json]   # OpenEnv's validation policy v2 instead (env/validation/v2/)

With --v2 (or --json) it runs every check of OpenEnv's policy v2 that applies to a running server, prints the check
table and exits 1 if the policy's verdict is FAIL; --json writes the report (valid against OpenEnv's
report-v2.schema.json); --tasks and --checks narrow a run (what is left out is reported as skipped).

This file is the entry point only: the checks are env/validation/ (presubmission.py, v2/), the command line
env/validation/__main__.py (`python -m env.validation` is the same command).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `python validator.py` from any folder runs this checkout's env

from env.sandbox.lifetime import command  # noqa: E402
from env.validation.__main__ import main  # noqa: E402

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(command(main))  # nothing it starts outlives it; a SIGTERM exits 143 (env.sandbox.lifetime)
