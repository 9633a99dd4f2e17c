"""An episode's private copy of a repository task's project, with sanitised git history.

    templates = Templates()               # one per server (runtime.templates): each task's prepared template
    ws = Workspace.create(task, templates)  # a copy of the task's template: files + a one-commit .git
    ws.read("shop/cart.py"); ws.write("shop/cart.py", text)
    ws.files()                            # {path: text} as the agent left it
    ws.close()                            # removes the copy

The template is built once per task and ``Templates`` (``templates.close()`` removes them all): the snapshot committed as a single commit with fixed author
and date (the same commit id everywhere), no remotes, no other refs, no reflog, no hooks. Every
episode copies it, so nothing the agent does reaches another episode or the fix's history.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import subprocess
import tempfile
import threading
import weakref
from pathlib import Path

from env.patches import Files
from env.project import RepoTask, read_tree
from env.scratch import scratch_root

MAX_PATH_CHARS = 255
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "AgentDebuggerEnv",
    "GIT_AUTHOR_EMAIL": "env@agentdebugger.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "AgentDebuggerEnv",
    "GIT_COMMITTER_EMAIL": "env@agentdebugger.invalid",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}


class PathError(ValueError):
    """A path the agent gave that does not name something inside its workspace."""


def check_path(path: str) -> str:
    """The normalised relative path, or :class:`PathError` saying why it is not acceptable."""
    if not isinstance(path, str) or not path.strip():
        raise PathError("the path is empty")
    if "\0" in path or len(path) > MAX_PATH_CHARS:
        raise PathError(f"the path is not valid (at most {MAX_PATH_CHARS} characters, no NUL)")
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        raise PathError(f"{path!r} is absolute; give a path relative to the repository root")
    norm = posixpath.normpath(path.replace("\\", "/"))
    if norm == ".." or norm.startswith("../"):
        raise PathError(f"{path!r} is outside the repository")
    if norm == ".git" or norm.startswith(".git/"):
        raise PathError("the .git directory is not part of the workspace's files")
    return norm


class Templates:
    """Each repository task's prepared one-commit template, built on first use; removed by ``close()``, at the latest
    when collected or at exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dirs: dict[tuple[str, str], Path] = {}
        self._root = Path(tempfile.mkdtemp(prefix="adbg-templates-", dir=scratch_root()))
        self._removed = weakref.finalize(self, shutil.rmtree, str(self._root), True)

    def get(self, task: RepoTask) -> Path:
        key = (task.id, str(task.folder))
        with self._lock:
            if key not in self._dirs:
                target = self._root / f"t{len(self._dirs)}"
                _write_files(target, task.files)
                _sanitised_git(target)
                self._dirs[key] = target
            return self._dirs[key]

    def close(self) -> None:
        with self._lock:
            self._dirs.clear()
            self._removed()


def _write_files(root: Path, files: Files) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _sanitised_git(root: Path) -> None:
    """One commit, no remotes, no other refs, no reflog, no hooks (skipped where git is missing)."""
    git = shutil.which("git")
    if git is None:
        return
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), **_GIT_ENV}

    def run(*args: str) -> None:
        subprocess.run([git, *args], cwd=root, env=env, check=True, capture_output=True)

    run("init", "-q", "-b", "main")
    run("add", "-A")
    run("commit", "-q", "--no-verify", "-m", "Repository snapshot")
    shutil.rmtree(root / ".git" / "logs", ignore_errors=True)  # the reflog
    shutil.rmtree(root / ".git" / "hooks", ignore_errors=True)
    (root / ".git" / "hooks").mkdir()


class Workspace:
    def __init__(self, root: Path):
        self.root = root
        # Removed with the episode at the latest, even if nobody calls close().
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(root), True)

    @classmethod
    def create(cls, task: RepoTask, templates: Templates, tmp_root: str | None = None) -> Workspace:
        target = Path(tempfile.mkdtemp(prefix="adbg-ws-", dir=tmp_root or scratch_root()))
        shutil.copytree(templates.get(task), target, dirs_exist_ok=True, symlinks=True)
        target.chmod(0o700)  # copytree gave it the template's mode: no other uid may enter another episode's workspace
        return cls(target)

    @classmethod
    def from_files(cls, files: Files, tmp_root: str | None = None) -> Workspace:
        """A workspace holding just these files (no git history): a classic task's workbench."""
        target = Path(tempfile.mkdtemp(prefix="adbg-ws-", dir=tmp_root or scratch_root()))
        _write_files(target, files)
        return cls(target)

    def resolve(self, path: str) -> Path:
        rel = check_path(path)
        full = self.root / rel if rel != "." else self.root
        # Nothing in a workspace is a symlink, but a path must never leave it even if one appeared.
        if full.is_symlink() or not full.resolve().is_relative_to(self.root.resolve()):
            raise PathError(f"{path!r} is outside the repository")
        return full

    def files(self) -> Files:
        return read_tree(self.root)

    def close(self) -> None:
        self._finalizer()
