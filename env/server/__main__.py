"""``python -m env.server [--host HOST] [--port PORT] [--workers N] [--list-tasks] [TASK_DIR ...]``.

The command line sets the settings it names (HOST, PORT, ENV_WORKERS, ENV_TASK_DIRS: docs/deployment.md), then the
server starts as the settings say. ``--help`` and a bad argument exit before anything is imported or started.
"""

import argparse
import os
import sys

from env import settings
from env.server.port import port_problem


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m env.server",
        description="Serve AgentDebuggerEnv over HTTP, WebSocket and MCP (the built-in tasks, and TASK_DIRs if given).",
        epilog="Every other setting is an environment variable: docs/deployment.md lists them.",
    )
    parser.add_argument("task_dirs", nargs="*", metavar="TASK_DIR", help="task folders (or folders of them) to serve too (ENV_TASK_DIRS)")
    parser.add_argument("--host", help=f"the address to listen on (HOST; default {settings.default('HOST')}: this machine only)")
    parser.add_argument("--port", type=int, help=f"the port to listen on (PORT; default {settings.default('PORT')})")
    parser.add_argument("--workers", type=int, help=f"threads that run sandbox work off the event loop (ENV_WORKERS; default {settings.default('ENV_WORKERS')})")
    parser.add_argument("--list-tasks", action="store_true", help="print the tasks the server would serve (id, family, split) and exit")
    args = parser.parse_args(argv)
    if args.port is not None and not 0 < args.port < 65536:
        parser.error(f"--port {args.port}: a port is 1 to 65535")
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers {args.workers}: at least 1")
    missing = [d for d in args.task_dirs if not os.path.isdir(d)]
    if missing:
        parser.error(f"no such task folder: {', '.join(missing)}")
    return args


def _apply(args: argparse.Namespace) -> None:
    """What the command line names overrides the environment's settings."""
    for name, value in (("HOST", args.host), ("PORT", args.port), ("ENV_WORKERS", args.workers)):
        if value is not None:
            os.environ[name] = str(value)
    if args.task_dirs:
        before = [d for d in (settings.raw("ENV_TASK_DIRS") or "").split(":") if d]
        os.environ["ENV_TASK_DIRS"] = ":".join(before + [os.path.abspath(d) for d in args.task_dirs])


def _list_tasks() -> None:
    from env.families.catalog import TaskCatalog

    listing = TaskCatalog.from_env().listing()
    width = max(len(task_id) for task_id, _, _ in listing)
    for task_id, family, split in listing:
        print(f"{task_id:<{width}}  {family:<10}  {split}")


def main(argv: list[str]) -> None:
    args = _arguments(argv)
    _apply(args)
    if args.list_tasks:
        _list_tasks()
        return
    # Before the heavy imports: a port in use is said at once, with its holder, not after seconds of importing.
    port = settings.raw("PORT") or str(settings.default("PORT"))
    problem = port_problem(settings.text("HOST"), int(port)) if port.isdigit() else None  # else Settings says why
    if problem:
        sys.exit(f"env.server: {problem}")

    from env.sandbox.lifetime import started

    started()  # dies with a parent that asks for it (the validator); sweeps the scratch of processes killed outright
    from env.server.main import main as serve

    serve()


main(sys.argv[1:])
