"""Resource limits of one sandbox run: explicit, typed, and read from the environment once.

    limits = Limits.from_env()          # SANDBOX_WALL_SECONDS=10 ...
    limits.wall_seconds                 # 10.0
    limits.for_validity()               # the same limits, wall_seconds counted as the run's CPU time (authoring)

Two clocks. An agent's run (``clock="wall"``, the default) is stopped after ``wall_seconds`` of wall clock: the agent
waits for it; the time its processes waited for a CPU the machine gave to others is not counted (the deadline moves
by it, up to ``ceiling_seconds``): the machine's load is never the agent's time-out. A run that decides whether a task, a test or a mutant is valid (import, placement, synthesis,
validation: ``clock="cpu"``) must decide the same on a busy machine as on an idle one, so there ``wall_seconds`` is
the CPU time its processes may use together (what the run would take of wall clock on an idle machine, the limit
it will be served with), and the wall clock is only a backstop, ``backstop_seconds``, for a run that waits without
computing; a run the backstop stops while under its CPU limit was starved by the machine, which says nothing about
the run (``RunResult.busy``; authoring retries it, then reports it as such).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from env import settings
from env.settings import setting

MiB = 1024 * 1024
BACKSTOP_FACTOR = 10.0  # clock="cpu": a run may wait this many times its CPU limit in wall clock (a 10x starved share) ...
BACKSTOP_MIN_SECONDS = 60.0  # ... and at least this long, before the wall-clock backstop stops it


class Limits(BaseModel):
    """Hard limits applied to every run of submitted code (see docs/sandbox.md)."""

    wall_seconds: float = setting("SANDBOX_WALL_SECONDS", "Wall clock for one run; the whole process group is killed", gt=0)
    cpu_seconds: int = setting("SANDBOX_CPU_SECONDS", "RLIMIT_CPU of the run", gt=0)
    memory_bytes: int = setting("SANDBOX_MEMORY_BYTES", "RLIMIT_AS of the run", gt=0)
    test_memory_bytes: int = setting(
        "SANDBOX_TEST_MEMORY_BYTES",
        "RLIMIT_AS of a repository test run instead (the project's process under the split; pytest, the tests and "
        "the project when sandboxed): a real suite's session holds far more than one snippet", gt=0,
    )  # fmt: skip
    file_bytes: int = Field(8 * MiB, gt=0, description="RLIMIT_FSIZE: largest file the run may write, its output included")
    disk_bytes: int = Field(32 * MiB, gt=0, description="Size of the run directory's tmpfs (with the namespace layer)")
    disk_files: int = Field(10_000, gt=0, description="Files and directories the run directory's tmpfs may hold (its nr_inodes)")
    open_files: int = Field(64, gt=0, description="RLIMIT_NOFILE of the run")
    processes: int = Field(512, gt=0, description="RLIMIT_NPROC of the run where the server is not root (it counts the uid's threads)")
    output_bytes: int = setting("SANDBOX_OUTPUT_BYTES", "Captured stdout/stderr shown to the agent; the rest is cut and marked", gt=0)
    reply_bytes: int = Field(4 * MiB, gt=0, description="Largest reply the trusted side accepts from the run")
    clock: Literal["wall", "cpu"] = Field(
        "wall",
        description="What wall_seconds counts: the run's wall clock (an agent's run), or the CPU time of the run's processes "
                    "together (a run that decides validity, which load must not change), stopped anyway at the backstop",
    )  # fmt: skip
    backstop_seconds: float | None = Field(
        None, gt=0,
        description="The wall clock after which a run is stopped whatever it used (clock='cpu') or however long it waited "
                    "for a CPU (clock='wall': the furthest its deadline moves for that wait) (None: "
                    "max(BACKSTOP_MIN_SECONDS, BACKSTOP_FACTOR x wall_seconds))",
    )  # fmt: skip

    @classmethod
    def from_env(cls) -> Limits:
        return settings.load(cls)

    def for_tests(self) -> Limits:
        """The same limits for a repository test run: its memory is ``test_memory_bytes``."""
        return self.model_copy(update={"memory_bytes": self.test_memory_bytes})

    def for_validity(self) -> Limits:
        """The same limits for a run that decides validity: ``wall_seconds`` counted as the run's CPU time."""
        return self.model_copy(update={"clock": "cpu"})

    @property
    def deadline_seconds(self) -> float:
        """The wall clock after which a run is stopped: ``wall_seconds``, or with ``clock="cpu"`` the backstop."""
        return self.wall_seconds if self.clock == "wall" else self.ceiling_seconds

    @property
    def ceiling_seconds(self) -> float:
        """The wall clock after which a run is stopped whatever the machine did: with ``clock="cpu"`` the backstop;
        with ``clock="wall"`` the furthest the deadline moves for the time the run's processes waited for a CPU
        (``env.sandbox.cputime.WaitCredit``)."""
        return self.backstop_seconds or max(BACKSTOP_MIN_SECONDS, BACKSTOP_FACTOR * self.wall_seconds)

    @property
    def cpu_budget(self) -> float | None:
        """``clock="cpu"``: the CPU seconds a run's processes may use together (``wall_seconds``); None otherwise."""
        return self.wall_seconds if self.clock == "cpu" else None

    def for_child(self) -> dict[str, int]:
        """The subset the child applies to itself as rlimits."""
        return rlimits_of(self)


RLIMIT_FIELDS = ("memory_bytes", "cpu_seconds", "file_bytes", "open_files", "processes")


def rlimits_of(limits: BaseModel) -> dict[str, int]:
    """What a child applies to itself with setrlimit (``layers.apply_rlimits``), from any limits model."""
    return {name: int(getattr(limits, name)) for name in RLIMIT_FIELDS}


class WorkspaceQuota(BaseModel):
    """What an episode's workspace may hold (docs/sandbox.md, "Workspace quota"): every tool that writes there checks
    it, and a ``run_bash`` command runs against it (its temporary directory counted with the workspace).

    A file counts its size, or the space it takes if that is larger (a byte takes a 4 KiB page on a RAM file system);
    every file, directory or other entry counts as one file."""

    bytes: int = setting("SANDBOX_WORKSPACE_BYTES", "Bytes the workspace may hold", gt=0)
    files: int = setting("SANDBOX_WORKSPACE_FILES", "Files and directories the workspace may hold", gt=0)

    @classmethod
    def from_env(cls) -> WorkspaceQuota:
        return settings.load(cls)

    def describe(self) -> str:
        """The quota as messages name it: each limit with the setting that changes it."""
        return f"{self.bytes} bytes (SANDBOX_WORKSPACE_BYTES) and {self.files} files and directories (SANDBOX_WORKSPACE_FILES)"
