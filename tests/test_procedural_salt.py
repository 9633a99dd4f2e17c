"""Procedural ids with and without a salt (issue 47, finding 1): public by default (an id is the same task on every
machine, and so anyone can rebuild it), and with ``ENV_PROCEDURAL_SALT`` a task that the public code without the salt
does not yield: neither its bug, nor its gold, nor its held-out tests. Whatever builds tasks reads the salt through
the setting; the sandbox can neither import the generator nor read the salt; runs record which salt (a fingerprint,
never the salt) and refuse to mix two."""

from __future__ import annotations

import gc
import json

import pytest

from env.eval.run import SecretMismatch, check_salt
from env.families.catalog import TaskCatalog
from env.families.procedural.generator import digest, sample
from env.families.procedural.salt import ProceduralSalt, SaltError
from env.families.procedural.task import TaskCache, procedural_task
from env.sandbox.limits import Limits
from env.sandbox.runner import RemoteError, Sandbox

SALT = "the operator's procedural salt, kept out of every published file"
OTHER = "another operator's salt, just as long and secret"
KEY = ("easy", "test", 3)
TASK_ID = "proc-easy-test-3"


@pytest.fixture(scope="module")
def public():
    return sample(*KEY, salt=ProceduralSalt.public())


@pytest.fixture(scope="module")
def salted():
    return sample(*KEY, salt=ProceduralSalt(SALT))


def test_by_default_an_id_is_the_public_task_everywhere(public, monkeypatch):
    monkeypatch.delenv("ENV_PROCEDURAL_SALT", raising=False)
    cache = TaskCache(2)
    task = cache.get(TASK_ID)  # what the server, the validator and the harness build: the setting's (no) salt
    assert task.salt == task.summary()["salt"] == "public"
    assert task.files == public.files and task.gold_files == public.gold_files and task.held_out == public.held_out
    assert digest(sample(*KEY)) == digest(public)


def test_with_a_salt_the_public_code_yields_neither_the_bug_nor_the_gold_nor_the_held_out_tests(public, salted):
    assert digest(sample(*KEY, salt=ProceduralSalt(SALT))) == digest(salted)  # reproducible for the salt's holders
    assert salted.package != public.package and salted.fault != public.fault
    assert not set(salted.files.values()) & {text for path, text in public.files.items() if not path.endswith("README.md")}
    assert not set(salted.gold_files.values()) & set(public.gold_files.values())
    public_bodies = {body for text in public.held_out_files.values() for body in text.split("\n\n\n")[1:]}
    assert not {body for text in salted.held_out_files.values() for body in text.split("\n\n\n")[1:]} & public_bodies
    other = sample(*KEY, salt=ProceduralSalt(OTHER))
    assert other.fault != salted.fault and digest(other) != digest(salted)
    for task in (public, salted, other):  # each still a valid task, its overfit refused by the held-out tests
        assert task.validation is not None and task.validation.ok, task.validation.problems


def test_the_bug_type_and_size_come_from_the_salt_too():
    draws = {name: [sample("easy", "ood", i, salt=salt) for i in range(4)] for name, salt in (("public", ProceduralSalt.public()),
                                                                                          ("salted", ProceduralSalt(SALT)))}  # fmt: skip
    public_draws = [(t.bug, t.n_files, t.noise) for t in draws["public"]]
    salted_draws = [(t.bug, t.n_files, t.noise) for t in draws["salted"]]
    assert public_draws == [
        ("state_corruption", 3, 0.008),
        ("stochastic_bug", 4, 0.07),
        ("stochastic_bug", 4, 0.005),
        ("stochastic_bug", 2, 0.195),
    ]
    assert salted_draws == [
        ("stochastic_bug", 2, 0.136),
        ("state_corruption", 4, 0.183),
        ("state_corruption", 2, 0.192),
        ("state_corruption", 2, 0.022),
    ]


def test_the_setting_reaches_the_catalog_and_only_a_fingerprint_leaves(monkeypatch, salted, tmp_path):
    monkeypatch.setenv("ENV_PROCEDURAL_SALT", SALT)
    task = TaskCache(2).get(TASK_ID)
    record = ProceduralSalt(SALT).record
    assert task.salt == task.summary()["salt"] == record and record.startswith("fingerprint:") and len(record) == len("fingerprint:") + 16
    assert (task.fault, task.files) == (salted.fault, salted.files)
    on_disk = "".join(p.read_text() for p in task.folder.rglob("*") if p.is_file())
    assert SALT not in on_disk and SALT not in json.dumps(task.summary()) and SALT not in repr(ProceduralSalt(SALT))
    assert procedural_task(TASK_ID).salt == record  # the server's own cache reads the same setting


def test_a_short_salt_is_refused_where_tasks_are_built(monkeypatch):
    monkeypatch.setenv("ENV_PROCEDURAL_SALT", "short")
    with pytest.raises(SaltError, match="^ENV_PROCEDURAL_SALT is 5 characters long; it needs at least 16$"):
        TaskCatalog.builtin()  # the server's start: it fails closed, naming the setting


def test_the_cache_is_a_bounded_lru_and_a_task_pushed_out_leaves_no_folder(monkeypatch):
    monkeypatch.delenv("ENV_PROCEDURAL_SALT", raising=False)
    cache = TaskCache(2)
    first = cache.get("proc-easy-train-0")
    folder = first.folder
    cache.get("proc-easy-train-1")
    assert cache.get("proc-easy-train-0") is first  # a hit keeps it the latest used
    cache.get("proc-easy-train-2")  # pushes out train-1, the least recently used
    assert len(cache) == 2 and cache.get("proc-easy-train-0") is first
    cache.get("proc-easy-train-1")  # made again, pushing out train-2; then train-0 goes, still held here
    cache.get("proc-easy-train-2")
    assert len(cache) == 2 and folder.is_dir()  # an episode still holding the task keeps its folder
    del first
    gc.collect()
    assert not folder.exists()
    assert cache.root is not None and len(list(cache.root.iterdir())) == 2
    with pytest.raises(ValueError, match="holds at least 1 task, not 0"):
        TaskCache(0)


def test_a_resumed_run_under_another_salt_stops(tmp_path):
    line = {"agent": "oracle", "task_id": TASK_ID, "run": 0, "procedural_salt": ProceduralSalt(SALT).record}
    (tmp_path / "results.jsonl").write_text(json.dumps(line) + "\n")
    check_salt(tmp_path, {TASK_ID: {"salt": ProceduralSalt(SALT).record}})  # the same salt: resumed
    with pytest.raises(SecretMismatch) as refused:
        check_salt(tmp_path, {TASK_ID: {"salt": "public"}})
    assert str(refused.value) == (
        f"{tmp_path / 'results.jsonl'} holds episodes of {TASK_ID} generated with the procedural salt {ProceduralSalt(SALT).record}; "
        "this environment's is public. Set ENV_PROCEDURAL_SALT to the salt those episodes used to resume them, or write to another --out."
    )


PROBE = """
import os

def probe(salt):
    found = {}
    try:
        import env.families.procedural.generator
        found["import"] = "imported"
    except ImportError as exc:
        found["import"] = type(exc).__name__
    found["environ"] = [k for k, v in os.environ.items() if salt in v or k == "ENV_PROCEDURAL_SALT"]
    for path in (f"/proc/{os.getppid()}/environ", "/proc/1/environ"):
        try:
            with open(path, "rb") as handle:
                found[path] = salt.encode() in handle.read()
        except OSError as exc:
            found[path] = type(exc).__name__
    return found
"""


def test_the_sandbox_cannot_import_the_generator_nor_read_the_salt(isolation, monkeypatch):
    monkeypatch.setenv("ENV_PROCEDURAL_SALT", SALT)  # in the server's environment before its sandbox starts
    sandbox = Sandbox(Limits(), isolation)
    try:
        with sandbox.start(PROBE, "probe.py", "probe") as run:
            try:
                found = run.call("probe", SALT)
            except RemoteError as exc:  # pragma: no cover - the probe catches what it expects
                pytest.fail(f"the probe raised {exc.exc_type}")
    finally:
        sandbox.close()
    assert found["import"] == "ModuleNotFoundError" and found["environ"] == []
    assert all(value in ("PermissionError", "FileNotFoundError", False) for key, value in found.items() if key.startswith("/proc/"))
