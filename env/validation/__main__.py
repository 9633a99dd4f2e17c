"""Pre-submission check of a running AgentDebuggerEnv server (or one it starts), printing every check.

``validator.py``'s command line (the file at the checkout's root is its entry point; ``python -m env.validation`` is the
same command): this project's own checks (``env.validation.presubmission``) by default, OpenEnv's validation policy
v2 (``env.validation.v2``) with ``--v2``.

    python validator.py [--url URL] [--tasks ID,...]
    python validator.py --v2 [--json report.json] [--url URL] [--tasks ID,...] [--checks ID,...]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

from env.sandbox.lifetime import adopt, command, parent_env
from env.server.local import start_local_server
from env.validation.presubmission import UnknownTasks, run_checks, summary


def listed(text: str | None) -> list[str] | None:
    """A comma-separated option's items (``--tasks``, ``--checks``), or None when it is not given."""
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def run_v2(url: str, args: argparse.Namespace, server_pid: int | None, started: float) -> int:
    from openenv.validation.types import CheckStatus

    from env.validation.v2.suite import UnknownSelection, table, validate

    checks = listed(args.checks)
    try:
        report = validate(url, tasks=listed(args.tasks), only=set(checks) if checks else None, server_pid=server_pid)
    except UnknownSelection as exc:  # a typo in --tasks or --checks would otherwise check nothing and pass
        print(f"validator.py --v2: {exc}", file=sys.stderr)
        return 2
    print(table(report))
    if args.json:
        Path(args.json).write_text(report.model_dump_json(indent=2) + "\n")
        print(f"report written to {args.json}")

    def count(status: CheckStatus) -> int:
        return sum(r.status is status for r in report.results)

    print(summary(count(CheckStatus.PASS), count(CheckStatus.FAIL), time.monotonic() - started, count(CheckStatus.SKIP), count(CheckStatus.ERROR)))
    return 1 if report.verdict.value == "fail" else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", help="a running server; without it, one is started")
    parser.add_argument("--v2", action="store_true", help="run OpenEnv's validation policy v2 instead (env/validation/v2/)")
    parser.add_argument("--json", metavar="PATH", help="with --v2 (implied): write the report (report-v2.schema.json) here")
    parser.add_argument("--tasks", help="comma-separated task ids to play (default: every task)")
    parser.add_argument("--checks", help="with --v2: comma-separated check ids to run (default: all)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    proc = None
    url = args.url
    if url is None:
        # The server dies with this process (PR_SET_PDEATHSIG, tied to the thread that starts it: only the main one
        # is sure to live as long as the process).
        proc, url = start_local_server(env=parent_env() if threading.current_thread() is threading.main_thread() else {})
        adopt(proc)  # on SIGTERM it goes first, so that the checks in flight fail at once instead of holding the exit up
    try:
        if args.v2 or args.json:
            return run_v2(url, args, proc.pid if proc is not None else None, started)
        tasks = listed(args.tasks)
        try:
            check = run_checks(url.rstrip("/"), tasks)
        except UnknownTasks as exc:
            print(f"validator.py: {exc}", file=sys.stderr)
            return 2
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
    if check.failures:
        print(f"\n{len(check.failures)} check(s) failed:")
        for failure in check.failures:
            print(f"  - {failure}")
    else:
        print("\nall checks passed")
    print(summary(check.passed, len(check.failures), time.monotonic() - started))
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(command(main))  # nothing it starts outlives it; a SIGTERM exits 143 (env.sandbox.lifetime)
