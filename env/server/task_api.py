"""OpenEnv's Task API over the catalog: the splits, each split's tasks by index; and its routes, answered off the event loop.

    splits = TaskSplits(runtime.catalog)
    splits.list_splits()              # [{"name": "train", "type": "train", "num_tasks": 4}, {"name": "validation", ...}, ...]
    splits.get_task("test", 2)        # the test split's third task's summary (IndexError past the end)
    serve_task_api(app, runtime)      # GET /{env}/splits, POST /{env}/tasks, /num_tasks, /task, /task_range

Every split is listed, an empty one too (``validation`` without a built catalog). A split the server does not know has
no task (the library's convention: its routes can answer an error only for an index). Listing a split may generate
the procedural tasks it lists on request, so the routes run in the runtime's threads, as /tasks does (the library's
own routes call the environment on the event loop).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import FastAPI, HTTPException
from openenv.core.env_server.types import GetTaskRangeRequest, GetTaskRequest, ListTasksRequest, NumTasksRequest

from env.contract import SPLITS, Catalog, Split
from env.runtime import Runtime

T = TypeVar("T")

# The library's Task API routes, which ours replace.
ROUTES = ("/{env_name}/splits", "/{env_name}/tasks", "/{env_name}/num_tasks", "/{env_name}/task", "/{env_name}/task_range")
# The same routes at the root too: the openreward SDK names the environment in a header (X-Deployment), not the path.


class TaskSplits:
    """What DebugEnvironment's Task API methods answer, in process or over HTTP."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def list_splits(self) -> list[dict[str, Any]]:
        return [{"name": split, "type": split, "num_tasks": len(self.catalog.ids(split))} for split in SPLITS]

    def ids(self, split: str) -> list[str]:
        known = split_named(split)
        return [] if known is None else self.catalog.ids(known)

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return self.get_task_range(split)

    def num_tasks(self, split: str) -> int:
        return len(self.ids(split))

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        ids = self.ids(split)
        if not 0 <= index < len(ids):
            raise IndexError(out_of_range(index, split, len(ids)))
        return self.catalog.summary(self.catalog.get(ids[index]))

    def get_task_range(self, split: str, start: int | None = None, stop: int | None = None) -> list[dict[str, Any]]:
        return [self.catalog.summary(self.catalog.get(task_id)) for task_id in self.ids(split)[start:stop]]


def out_of_range(index: object, split: str, count: int) -> str:
    last = f" (0-{count - 1})" if count else ""
    return f"task index {repr(index)[:40]} is out of range: the {split[:60]!r} split has {count} tasks{last}"


def split_named(name: object) -> Split | None:
    """The split ``name`` names, or None (not a split: any other value, a non-string too)."""
    return next((split for split in SPLITS if name == split), None)


def serve_task_api(app: FastAPI, runtime: Runtime, served_name: str) -> None:
    """Replace the library's Task API routes by ones that answer the same, computed in the runtime's threads."""
    app.router.routes = [r for r in app.router.routes if getattr(r, "path", None) not in ROUTES]
    splits = TaskSplits(runtime.catalog)

    async def off_loop(env: str, work: Callable[[], T]) -> T:
        if env.lower() != served_name.lower():
            raise HTTPException(status_code=404, detail=f"unknown environment {env!r}")
        return await asyncio.get_running_loop().run_in_executor(runtime.executor, work)

    @app.get("/{env_name}/splits", tags=["Task API"], summary="The splits (train, validation, test), each with its number of tasks")
    @app.get("/splits", tags=["Task API"], summary="As /{env}/splits (the path the openreward SDK sends)")
    async def list_splits(env_name: str = served_name) -> list[dict[str, Any]]:
        return await off_loop(env_name, splits.list_splits)

    @app.post("/{env_name}/tasks", tags=["Task API"], summary="A split's tasks, in order (an unknown split has none)")
    @app.post("/tasks", tags=["Task API"], summary="As /{env}/tasks (the path the openreward SDK sends; GET /tasks is the listing)")
    async def list_tasks(request: ListTasksRequest, env_name: str = served_name) -> dict[str, Any]:
        return {"tasks": await off_loop(env_name, lambda: splits.list_tasks(request.split)), "env_name": served_name}

    @app.post("/{env_name}/num_tasks", tags=["Task API"], summary="How many tasks a split has")
    @app.post("/num_tasks", tags=["Task API"], summary="As /{env}/num_tasks (the path the openreward SDK sends)")
    async def num_tasks(request: NumTasksRequest, env_name: str = served_name) -> dict[str, Any]:
        return {"num_tasks": await off_loop(env_name, lambda: splits.num_tasks(request.split))}

    @app.post(
        "/{env_name}/task", tags=["Task API"], summary="A split's task by index (400 past the end); reset(split=..., index=...) plays it"
    )
    @app.post("/task", tags=["Task API"], summary="As /{env}/task (the path the openreward SDK sends)")
    async def get_task(request: GetTaskRequest, env_name: str = served_name) -> dict[str, Any]:
        try:
            # env_name as ORS answers it (the openreward SDK reads it)
            return {"task": await off_loop(env_name, lambda: splits.get_task(request.split, request.index)), "env_name": served_name}
        except IndexError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None

    @app.post("/{env_name}/task_range", tags=["Task API"], summary="A split's tasks from start to stop (a slice)")
    @app.post("/task_range", tags=["Task API"], summary="As /{env}/task_range (the path the openreward SDK sends)")
    async def get_task_range(request: GetTaskRangeRequest, env_name: str = served_name) -> dict[str, Any]:
        return {"tasks": await off_loop(env_name, lambda: splits.get_task_range(request.split, request.start, request.stop)), "env_name": served_name}
