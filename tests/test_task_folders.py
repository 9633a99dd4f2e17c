"""Task folders are validated input (issue 47, finding 8): a symbolic link that leaves a folder is refused when the
folder loads, with its path; every patch is read and applied at load, so a traversing path is refused there, never
first at ``submit``; a folder missing a file it needs is refused naming it.

Before: a repository folder whose ``repo/`` linked to ``tasks/classic/easy`` loaded and served that task's ``fix.py``
and ``held_out.py`` to the agent as project files; a ``test_patch.diff`` naming ``../../etc/x.py`` loaded, and
``submit`` answered HTTP 500; a classic folder without ``buggy.py`` loaded, and ``reset`` answered HTTP 500.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from env.families.base import TaskLoadError
from env.families.catalog import TaskCatalog
from env.families.registry import load_task
from tests.helpers import CATALOG

TASKS = Path(__file__).resolve().parents[1] / "tasks"
REPO = TASKS / "repo" / "repo-slice-window"
EASY = TASKS / "classic" / "easy"
REFUSED = "outside the task folder: refused (every file a task folder serves must lie inside it; copy the files instead of linking them)"


def copied(source: Path, target: Path) -> Path:
    """A copy of a task folder under a new id (its folder's name)."""
    shutil.copytree(source, target)
    data = json.loads((target / "task.json").read_text())
    (target / "task.json").write_text(json.dumps({**data, "id": target.name}))
    return target


def refusal(folder: Path) -> str:
    with pytest.raises(TaskLoadError) as caught:
        load_task(folder)
    return str(caught.value)


# -- links that leave the folder --------------------------------------------------------------------------------------


def test_a_repo_folder_linked_to_another_task_is_refused_with_its_path(tmp_path):
    folder = copied(REPO, tmp_path / "linked")
    shutil.rmtree(folder / "repo")
    (folder / "repo").symlink_to(EASY.resolve(), target_is_directory=True)
    assert refusal(folder) == f"{folder}: repo is a symbolic link to {EASY.resolve()}, {REFUSED}"


@pytest.mark.parametrize(
    "link, target",
    [
        ("gold.patch", TASKS / "repo" / "repo-two-file-fix" / "gold.patch"),  # another task's gold patch
        ("test_patch.diff", TASKS / "repo" / "repo-two-file-fix" / "test_patch.diff"),
        ("repo/src/sensorkit/window.py", EASY / "fix.py"),  # one file deep in the snapshot
        ("repo/src/sensorkit/extra", EASY),  # a directory in the snapshot
        ("repo/tests/data.json", Path("/etc/hostname")),  # a file of the host
        ("task.json", TASKS / "repo" / "repo-two-file-fix" / "task.json"),
    ],
)
def test_any_link_out_of_a_repository_folder_is_refused_before_anything_is_read(tmp_path, link, target):
    folder = copied(REPO, tmp_path / "linked")
    (folder / link).unlink(missing_ok=True)
    (folder / link).symlink_to(target.resolve())
    assert refusal(folder) == f"{folder}: {link} is a symbolic link to {target.resolve()}, {REFUSED}"


def test_a_relative_link_into_a_sibling_task_is_refused(tmp_path):
    copied(REPO, tmp_path / "other")
    folder = copied(REPO, tmp_path / "mine")
    (folder / "repo" / "src" / "sensorkit" / "window.py").unlink()
    (folder / "repo" / "src" / "sensorkit" / "window.py").symlink_to("../../../../other/repo/src/sensorkit/window.py")
    expected = tmp_path.resolve() / "other" / "repo" / "src" / "sensorkit" / "window.py"
    assert refusal(folder) == f"{folder}: repo/src/sensorkit/window.py is a symbolic link to {expected}, {REFUSED}"


@pytest.mark.parametrize("name", ["tests.py", "held_out.py", "fix.py"])
def test_a_classic_folder_whose_code_links_out_is_refused(tmp_path, name):
    # tests.py and held_out.py run in the server process: a link would run another folder's code as this task's.
    folder = copied(EASY, tmp_path / "classic-linked")
    (folder / name).unlink()
    (folder / name).symlink_to(TASKS / "classic" / "medium" / name)
    target = (TASKS / "classic" / "medium" / name).resolve()
    assert refusal(folder) == f"{folder}: {name} is a symbolic link to {target}, {REFUSED}"


def test_a_link_loop_is_refused(tmp_path):
    folder = copied(REPO, tmp_path / "loop")
    (folder / "repo" / "a").symlink_to("b")
    (folder / "repo" / "b").symlink_to("a")
    assert refusal(folder) == f"{folder}: repo/a is a symbolic link that cannot be resolved (a loop): refused"


def test_links_that_stay_inside_and_a_linked_folder_still_load(tmp_path):
    folder = copied(REPO, tmp_path / "inside")
    (folder / "repo" / "README.rst").symlink_to("README.md")  # as real projects have
    (folder / "notes").symlink_to("repo", target_is_directory=True)
    task = load_task(folder)
    assert task.files == CATALOG.get("repo-slice-window").files  # the snapshot reader skips links
    alias = tmp_path / "elsewhere"
    alias.symlink_to(folder, target_is_directory=True)  # the folder itself named through a link: its files are inside it
    assert load_task(alias).id == "inside"


# -- patches and files checked at load ------------------------------------------------------------------------------


def rewrite(folder: Path, name: str, old: str, new: str) -> None:
    text = (folder / name).read_text()
    assert old in text
    (folder / name).write_text(text.replace(old, new))


@pytest.mark.parametrize(
    "name, old, new, why",
    [
        ("test_patch.diff", "tests/test_held_out.py", "../../etc/x.py", "patch path '../../etc/x.py' leaves the project"),
        ("test_patch.diff", "tests/test_held_out.py", "tests/../../x.py", "patch path 'tests/../../x.py' leaves the project"),
        ("gold.patch", "a/src/sensorkit/window.py", "a//etc/passwd", "patch path '/etc/passwd' leaves the project"),
        ("overfit.patch", "src/sensorkit/window.py", "src/../../window.py", "patch path 'src/../../window.py' leaves the project"),
        ("gold.patch", "_check_size(size)", "_check_size(size, 2)", "the patch does not apply to src/sensorkit/window.py"),
        # a tree no run could write (a 500 at submit before, where the graded tests' tree was written)
        (
            "test_patch.diff",
            "tests/test_held_out.py",
            "tests/test_smoothing.py/test_held_out.py",
            "the patch makes tests/test_smoothing.py both a file and a directory",
        ),
        ("test_patch.diff", "tests/test_held_out.py", "tests/new/..", "the patch makes tests both a file and a directory"),
    ],
)
def test_a_patch_that_leaves_the_project_or_does_not_apply_is_refused_at_load(tmp_path, name, old, new, why):
    folder = copied(REPO, tmp_path / "patched")
    rewrite(folder, name, old, new)
    assert refusal(folder).startswith(f"{folder}: {name}: {why}")


def test_missing_files_are_named_at_load(tmp_path):
    folder = copied(REPO, tmp_path / "nogold")
    (folder / "gold.patch").unlink()
    assert refusal(folder) == f"{folder}: gold.patch cannot be read: No such file or directory"
    folder = copied(REPO, tmp_path / "norepo")
    shutil.rmtree(folder / "repo")
    assert refusal(folder) == f"{folder}: repo/ is missing or not a directory: a repository task's snapshot lives in repo/"
    folder = copied(EASY, tmp_path / "nobuggy")
    (folder / "buggy.py").unlink()
    assert refusal(folder) == f"{folder}: buggy.py cannot be read: No such file or directory"  # reset answered 500


def test_a_written_out_procedural_folder_is_checked_the_same_way(tmp_path):
    task = CATALOG.get("proc-easy-test-0")
    folder = copied(task.folder, tmp_path / "proc-copy")
    data = task.model_dump(mode="json", by_alias=True, exclude={"folder"})  # the procedural facts too
    (folder / "task.json").write_text(json.dumps({**data, "id": folder.name}))
    assert load_task(folder).family == "procedural"
    held = sorted({t.split("::")[0] for t in task.held_out})[0]
    rewrite(folder, "test_patch.diff", held, "../" + held)
    assert refusal(folder) == f"{folder}: test_patch.diff: patch path '../{held}' leaves the project"


def test_a_server_refuses_to_start_on_a_bad_folder_naming_it_and_why(tmp_path, monkeypatch):
    folder = copied(REPO, tmp_path / "served")
    rewrite(folder, "test_patch.diff", "tests/test_held_out.py", "../../etc/x.py")
    monkeypatch.setenv("ENV_TASK_DIRS", str(tmp_path))
    with pytest.raises(TaskLoadError, match=r"served: test_patch\.diff: patch path '\.\./\.\./etc/x\.py' leaves the project"):
        TaskCatalog.from_env()
