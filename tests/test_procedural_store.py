"""Public procedural tasks kept on disk between processes (env.families.procedural.stored): a kept task is the task
generation makes, byte for byte; a damaged entry, another version of the code or a salt means generating again; a
salted task never reaches the disk; and no sandboxed command may write the store."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from pathlib import Path

import pytest

from env.families.procedural import generator, stored
from env.families.procedural.task import TaskCache
from env.project import read_tree
from env.sandbox.shell import ShellLimits, ShellRunner
from env.scratch import scratch_root

TASK_ID = "proc-easy-test-5"
SALT = "an operator's salt that must never reach a disk"


@pytest.fixture()
def store(tmp_path, monkeypatch) -> Path:
    """A store of this test's own (the suite's shared one stays untouched)."""
    monkeypatch.setenv("ENV_PROCEDURAL_CACHE", str(tmp_path / "store"))
    monkeypatch.delenv("ENV_PROCEDURAL_SALT", raising=False)
    return tmp_path / "store"


@pytest.fixture()
def generations(monkeypatch) -> list[tuple[str, str, int]]:
    """Every generation made from now on, by its arguments."""
    made: list[tuple[str, str, int]] = []
    real = generator.sample

    def counted(level, split, index, salt=None):
        made.append((level, split, index))
        return real(level, split, index, salt)

    monkeypatch.setattr(generator, "sample", counted)
    return made


def entries(store: Path) -> list[Path]:
    """The kept tasks (the store also holds its lock files, named with a leading dot)."""
    return sorted(store.glob("*.json"))


def fields(task) -> dict:
    return task.model_dump(exclude={"folder"})


def test_a_kept_task_is_the_generated_task_and_is_not_generated_again(store, generations):
    made = TaskCache(2).get(TASK_ID)
    assert generations == [("easy", "test", 5)]
    [entry] = entries(store)
    assert entry.name == f"{TASK_ID}.{stored.code_digest()[:32]}.json" and entry.stat().st_mode & 0o777 == 0o600
    assert store.stat().st_mode & 0o777 == 0o700
    kept = TaskCache(2).get(TASK_ID)  # another cache: as a new process would, it reads the store
    assert generations == [("easy", "test", 5)]
    assert kept.folder != made.folder and fields(kept) == fields(made)
    assert read_tree(kept.folder) == read_tree(made.folder)
    assert kept.files == made.files and kept.gold_files == made.gold_files and kept.held_out == made.held_out


def test_processes_making_one_id_at_once_make_it_once(store, generations):
    """Two makers of one id with nothing kept (two processes, each its own lock descriptor; here two caches in two
    threads): one generates it, the other waits for the id's lock and reads what was kept."""
    import threading

    start, made = threading.Barrier(2), []

    def make() -> None:
        start.wait()
        made.append(TaskCache(2).get(TASK_ID))

    threads = [threading.Thread(target=make) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert generations == [("easy", "test", 5)]
    assert len(made) == 2 and fields(made[0]) == fields(made[1]) and made[0].folder != made[1].folder
    assert sorted(p.name for p in store.iterdir() if p.name.startswith(".")) == [f".lock-{n:02d}" for n in [stored.lock_stripe(TASK_ID)]]


def test_a_damaged_entry_is_made_again_and_never_served(store, generations, caplog):
    first = TaskCache(2).get(TASK_ID)
    [entry] = entries(store)
    record = json.loads(entry.read_text())
    patch = next(rel for rel in record["files"] if rel.endswith(".patch"))
    record["files"][patch] = "--- a/x\n+++ b/x\n"  # a gold that fixes nothing, without the digest that would match it
    entry.write_text(json.dumps(record))
    with caplog.at_level(logging.WARNING, logger="agentdebugger"):
        again = TaskCache(2).get(TASK_ID)
    assert generations == [("easy", "test", 5)] * 2
    assert f"procedural task store: {entry} is damaged; the task is made again" in caplog.text
    assert read_tree(again.folder) == read_tree(first.folder)
    assert json.loads(entry.read_text())["files"][patch] != "--- a/x\n+++ b/x\n"  # kept whole again


@pytest.mark.parametrize("damage", ["not json", "{}", '{"digest": 1, "data": [], "files": {}}', ""])
def test_an_unreadable_entry_is_made_again(store, generations, damage):
    TaskCache(2).get(TASK_ID)
    [entry] = entries(store)
    entry.write_text(damage)
    TaskCache(2).get(TASK_ID)
    assert len(generations) == 2


def test_an_entry_naming_a_file_outside_the_folder_is_refused_even_with_a_matching_digest(store, generations, tmp_path):
    TaskCache(2).get(TASK_ID)
    [entry] = entries(store)
    record = json.loads(entry.read_text())
    record["files"]["../../outside.txt"] = "planted"
    record["digest"] = stored._content_digest(record["data"], record["files"])
    entry.write_text(json.dumps(record))
    task = TaskCache(2).get(TASK_ID)
    assert len(generations) == 2 and not (task.folder.parent.parent / "outside.txt").exists()


def test_another_version_of_the_code_generates_again_and_replaces_the_old_entry(store, generations, monkeypatch):
    TaskCache(2).get(TASK_ID)
    monkeypatch.setattr(stored, "code_digest", lambda: "f" * 64)
    TaskCache(2).get(TASK_ID)
    assert len(generations) == 2
    assert [p.name for p in entries(store)] == [f"{TASK_ID}.{'f' * 32}.json"]


def test_a_salted_task_never_reaches_the_disk(store, generations, monkeypatch):
    monkeypatch.setenv("ENV_PROCEDURAL_SALT", SALT)
    task = TaskCache(2).get(TASK_ID)
    TaskCache(2).get(TASK_ID)
    assert task.salt.startswith("fingerprint:") and len(generations) == 2
    assert not store.exists() or list(store.iterdir()) == []


def test_off_keeps_nothing(tmp_path, generations, monkeypatch):
    monkeypatch.setenv("ENV_PROCEDURAL_CACHE", "off")
    monkeypatch.delenv("ENV_PROCEDURAL_SALT", raising=False)
    TaskCache(2).get(TASK_ID)
    TaskCache(2).get(TASK_ID)
    assert len(generations) == 2


def test_a_store_that_cannot_be_written_costs_a_generation_and_nothing_else(tmp_path, generations, monkeypatch, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("ENV_PROCEDURAL_CACHE", str(blocker / "store"))  # under a file: no directory can be made
    monkeypatch.delenv("ENV_PROCEDURAL_SALT", raising=False)
    with caplog.at_level(logging.WARNING, logger="agentdebugger"):
        task = TaskCache(2).get(TASK_ID)
    assert task.id == TASK_ID and len(generations) == 1
    assert f"procedural task store: {TASK_ID} not kept" in caplog.text


def test_a_sandboxed_command_cannot_write_the_store(isolation, store):
    """The store is trusted input, as the test environments are: a command run for an agent must not plant a task."""
    TaskCache(2).get(TASK_ID)
    [entry] = entries(store)
    before = entry.read_bytes()
    workspace = Path(tempfile.mkdtemp(prefix="adbg-test-store-ws-", dir=scratch_root()))
    try:
        shell = ShellRunner(isolation, ShellLimits())
        for command in (f"echo planted > {entry}", f"rm -f {entry}", f"echo x > {store}/{TASK_ID}.{'0' * 32}.json",
                        f"mv {entry} {entry}.moved"):
            shell.run(workspace, command)
            assert sorted(p.name for p in entries(store)) == [entry.name], command
            assert entry.read_bytes() == before, command
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def test_the_store_keeps_the_tasks_used_last_and_no_more(store, generations, monkeypatch):
    monkeypatch.setattr(stored, "STORE_SIZE", 2)
    for index in (5, 6):
        TaskCache(2).get(f"proc-easy-test-{index}")
    TaskCache(2).get("proc-easy-test-5")  # used again: 6 is now the one used longest ago
    TaskCache(2).get("proc-easy-test-7")
    assert sorted(p.name.split(".")[0] for p in entries(store)) == ["proc-easy-test-5", "proc-easy-test-7"]
    assert generations == [("easy", "test", 5), ("easy", "test", 6), ("easy", "test", 7)]
