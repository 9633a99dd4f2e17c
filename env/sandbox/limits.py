"""Resource limits of one sandbox run: explicit, typed, and read from the environment once.

    limits = Limits.from_env()          # SANDBOX_WALL_SECONDS=10 ...
    limits.wall_seconds                 # 10.0
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from env import settings
from env.settings import default

MiB = 1024 * 1024


class Limits(BaseModel):
    """Hard limits applied to every run of submitted code (see docs/sandbox.md)."""

    wall_seconds: float = Field(default("SANDBOX_WALL_SECONDS"), gt=0, description="Wall clock for one run; the whole process group is killed")
    cpu_seconds: int = Field(default("SANDBOX_CPU_SECONDS"), gt=0, description="RLIMIT_CPU of the run")
    memory_bytes: int = Field(default("SANDBOX_MEMORY_BYTES"), gt=0, description="RLIMIT_AS of the run")
    test_memory_bytes: int = Field(
        default("SANDBOX_TEST_MEMORY_BYTES"), gt=0,
        description="RLIMIT_AS of a repository test run instead (the project's process under the split; pytest, the tests and "
                    "the project when sandboxed): a real suite's session holds far more than one snippet",
    )  # fmt: skip
    file_bytes: int = Field(8 * MiB, gt=0, description="RLIMIT_FSIZE: largest file the run may write, its output included")
    disk_bytes: int = Field(32 * MiB, gt=0, description="Size of the run directory's tmpfs (with the namespace layer)")
    disk_files: int = Field(10_000, gt=0, description="Files and directories the run directory's tmpfs may hold (its nr_inodes)")
    open_files: int = Field(64, gt=0, description="RLIMIT_NOFILE of the run")
    processes: int = Field(512, gt=0, description="RLIMIT_NPROC of the run where the server is not root (it counts the uid's threads)")
    output_bytes: int = Field(default("SANDBOX_OUTPUT_BYTES"), gt=0, description="Captured stdout/stderr shown to the agent; the rest is cut and marked")
    reply_bytes: int = Field(4 * MiB, gt=0, description="Largest reply the trusted side accepts from the run")

    @classmethod
    def from_env(cls) -> Limits:
        names = {
            "wall_seconds": "SANDBOX_WALL_SECONDS",
            "cpu_seconds": "SANDBOX_CPU_SECONDS",
            "memory_bytes": "SANDBOX_MEMORY_BYTES",
            "test_memory_bytes": "SANDBOX_TEST_MEMORY_BYTES",
            "output_bytes": "SANDBOX_OUTPUT_BYTES",
        }
        return cls(**settings.raws(names))

    def for_tests(self) -> Limits:
        """The same limits for a repository test run: its memory is ``test_memory_bytes``."""
        return self.model_copy(update={"memory_bytes": self.test_memory_bytes})

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

    bytes: int = Field(default("SANDBOX_WORKSPACE_BYTES"), gt=0, description="Bytes the workspace may hold")
    files: int = Field(default("SANDBOX_WORKSPACE_FILES"), gt=0, description="Files and directories the workspace may hold")

    @classmethod
    def from_env(cls) -> WorkspaceQuota:
        return cls(**settings.raws({"bytes": "SANDBOX_WORKSPACE_BYTES", "files": "SANDBOX_WORKSPACE_FILES"}))

    def describe(self) -> str:
        """The quota as messages name it: each limit with the setting that changes it."""
        return f"{self.bytes} bytes (SANDBOX_WORKSPACE_BYTES) and {self.files} files and directories (SANDBOX_WORKSPACE_FILES)"
