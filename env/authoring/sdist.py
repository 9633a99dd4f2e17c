"""Source distributions from PyPI, downloaded once and extracted into a cache: real libraries' code and tests.

    tree = fetch("parse", "1.20.2")          # Path to the extracted sdist (PARSE-1.20.2/ contents)
    tree = fetch("parse", "1.20.2", sha256)  # the archive checked against a pinned digest first (SdistError otherwise)
    releases("parse")                        # ["1.0.0", ..., "1.20.2", ...]: the final releases on PyPI, oldest first
    name, version = parse_pin("parse==1.20.2")
    source_root(tree)                        # "src" for a src layout, else "."

No third-party source is committed to this project: importing a real bug, synthesizing tasks from a library and the
compatibility bench all download sdists at run time with ``pip download`` into ``ENV_SDIST_CACHE`` (default
``~/.cache/agentdebugger/sdists``). A cut download leaves nothing behind: a tree is renamed into place complete.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from env import settings
from env.patches import Files
from env.project import is_test_path, read_tree
from env.verdict.testenv import file_lock

DOWNLOAD_SECONDS = 600.0
INDEX_SECONDS = 120.0
COMPLETE = ".adbg-complete"  # written last into an extracted tree: the tree is whole
PYTEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")  # pytest's default python_files
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([A-Za-z0-9][A-Za-z0-9.+!_-]*)\s*$")


class SdistError(RuntimeError):
    """An sdist could not be downloaded or extracted (the message says why: PyPI unreachable, no such version ...)."""


def sdist_cache() -> Path:
    return settings.user_cache("ENV_SDIST_CACHE", "sdists")


def parse_pin(pin: str) -> tuple[str, str]:
    """``NAME==VERSION`` as (name, version); a ValueError saying what is expected otherwise."""
    found = _PIN.match(pin)
    if found is None:
        raise ValueError(f"{pin!r} is not NAME==VERSION (an exact release, e.g. parse==1.20.2)")
    return found.group(1), found.group(2)


def _archive(folder: Path, name: str, version: str) -> Path | None:
    spelled = "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]+", name))  # sdists spell it either way
    stem = re.compile(rf"^{spelled}-{re.escape(version)}\.(tar\.gz|zip)$", re.I)
    found = [p for p in folder.iterdir() if stem.match(p.name)] if folder.is_dir() else []
    return found[0] if found else None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _recorded(tree: Path) -> str | None:
    """The sha256 of the archive a complete tree was extracted from (None: a tree extracted before it was recorded)."""
    lines = (tree / COMPLETE).read_text().split()
    return lines[1] if len(lines) > 1 else None


def _pinned(pin: str, actual: str, expected: str | None, archive: Path) -> None:
    if expected is not None and actual != expected:
        raise SdistError(f"the sdist of {pin} has sha256 {actual}, not {expected} as pinned: another file than the one pinned "
                         f"(a re-upload, a tampered mirror or a wrong pin; the file: {archive}); nothing of it is used")  # fmt: skip


def fetch(name: str, version: str, sha256: str | None = None) -> Path:
    """The extracted sdist of ``name==version`` (downloaded from PyPI with pip on first use, then read from the cache).
    With ``sha256``, the archive must have that digest (checked on every call, from the cached tree's record): an
    SdistError names both digests otherwise."""
    pin = f"{name}=={version}"
    cache = sdist_cache()
    tree = cache / "trees" / f"{name}-{version}"
    if (tree / COMPLETE).is_file() and (sha256 is None or _recorded(tree) is not None):
        _pinned(pin, _recorded(tree) or "", sha256, _archive(cache / "archives", name, version) or tree)
        return tree
    with file_lock(cache / f"{name}-{version}.lock"):
        if (tree / COMPLETE).is_file() and (sha256 is None or _recorded(tree) is not None):
            _pinned(pin, _recorded(tree) or "", sha256, _archive(cache / "archives", name, version) or tree)
            return tree
        archive = _archive(cache / "archives", name, version)
        if archive is None:
            # Only this project from source (its sdist); its build dependencies, which pip installs to read the sdist's
            # metadata, as wheels: built from source (":all:") they cost minutes each (Cython, a compiler) for nothing.
            command = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                       "--no-binary", name, pin, "-d", str(cache / "archives")]  # fmt: skip
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=DOWNLOAD_SECONDS)
            except subprocess.TimeoutExpired:
                raise SdistError(f"downloading the sdist of {pin} from PyPI took more than {DOWNLOAD_SECONDS:g} s") from None
            archive = _archive(cache / "archives", name, version)
            if done.returncode != 0 or archive is None:
                said = (done.stderr or done.stdout).strip().splitlines()
                errors = [line for line in said if line.startswith("ERROR")] or said[-5:]  # not pip's warnings
                raise SdistError(f"cannot download the sdist of {pin} from PyPI (is PyPI reachable?): {' '.join(errors)[-1500:]}")
        digest = sha256_of(archive)
        _pinned(pin, digest, sha256, archive)  # before anything of it is extracted
        partial = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=cache))
        try:
            if archive.name.endswith(".zip"):
                with zipfile.ZipFile(archive) as zipped:
                    zipped.extractall(partial)
            else:
                with tarfile.open(archive) as tarred:
                    tarred.extractall(partial, filter="data")
            (top,) = partial.iterdir()  # an sdist holds one folder, NAME-VERSION/
            (top / COMPLETE).write_text(f"{pin}\n{digest}\n")  # the pin, and the digest of what it came from
            tree.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(tree, ignore_errors=True)
            top.rename(tree)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return tree


def releases(name: str) -> list[str]:
    """The final releases of ``name`` on PyPI, oldest first, as pip lists them (``pip index versions``: pre-releases
    are left out; a release listed may have no sdist, which ``fetch`` then says)."""
    command = [sys.executable, "-m", "pip", "index", "versions", "--disable-pip-version-check", name]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INDEX_SECONDS)
    except subprocess.TimeoutExpired:
        raise SdistError(f"listing the releases of {name} on PyPI took more than {INDEX_SECONDS:g} s") from None
    found = re.search(r"^Available versions: (.+)$", done.stdout, re.M)
    if done.returncode != 0 or found is None:
        said = [line for line in (done.stderr or done.stdout).strip().splitlines() if not line.startswith("WARNING")]
        raise SdistError(f"cannot list the releases of {name} on PyPI (is PyPI reachable?): {' '.join(said)[-500:]}")
    return [v.strip() for v in found.group(1).split(",")][::-1]  # pip lists the newest first


def archive(name: str, version: str) -> Path:
    """The downloaded sdist archive of ``name==version`` (fetched first if missing): what a manifest's sha256 pins."""
    fetch(name, version)
    found = _archive(sdist_cache() / "archives", name, version)
    if found is None:  # the tree was cached but its archive removed since: download it again
        shutil.rmtree(sdist_cache() / "trees" / f"{name}-{version}", ignore_errors=True)
        fetch(name, version)
        found = _archive(sdist_cache() / "archives", name, version)
    if found is None:
        raise SdistError(f"the sdist archive of {name}=={version} is not in {sdist_cache() / 'archives'} after downloading it")
    return found


def tree_files(tree: Path) -> Files:
    """The text files of a project tree (an extracted sdist or a folder), the cache's own marker left out."""
    return {p: t for p, t in read_tree(tree).items() if p != COMPLETE}


def pytest_files(files: Files, wanted: list[str] | None = None) -> list[str]:
    """The test files pytest collects by its default naming, among the test paths or under ``wanted`` (files or folders)."""
    within = wanted or [p for p in files if is_test_path(p)]
    return sorted(p for p in files if any(p == w or p.startswith(w.rstrip("/") + "/") for w in within) and PYTEST_FILE.match(p.rsplit("/", 1)[-1]))


def layout_environment(tree: Path) -> dict[str, str]:
    """What the tests need to import the project: PYTHONPATH=src for a src layout, nothing otherwise."""
    return files_layout(tree_files(tree))


def source_root(tree: Path) -> str:
    """The import root of a project: ``src`` when its packages live there (a src layout), else the root itself."""
    return files_source_root(tree_files(tree))


def files_source_root(files: Files) -> str:
    """``source_root`` of a project given as its files: ``src`` when a module lies under ``src/`` outside the tests, at
    any depth (a namespace package, ``src/ns/pkg/``, has no ``__init__.py`` of its own at ``src/ns/``)."""
    return "src" if any(p.startswith("src/") and p.endswith(".py") and not is_test_path(p) for p in files) else "."


def files_layout(files: Files) -> dict[str, str]:
    """``layout_environment`` of a project given as its files (a clone's snapshot or a release's)."""
    root = files_source_root(files)
    return {} if root == "." else {"PYTHONPATH": root}
