"""Sandbox containment and limits, exercised through the runner with the static policy off."""

import os
import time
from pathlib import Path

import pytest

from env.sandbox.isolation import SANDBOX_UID, probe_isolation, scratch_exposure
from env.sandbox.launch import python_env
from env.sandbox.limits import Limits
from env.sandbox.readable import exposure
from env.sandbox.runner import RefusedToRun, RemoteError, RunAborted, Sandbox
from env.scratch import scratch_root

PROBES = '''
import os, socket, operator, json

def read(path):
    with open(path) as handle:
        return handle.read()

def write(path):
    with open(path, "w") as handle:
        handle.write("escaped")
    return "written"

def environment():
    return dict(os.environ)

def connect(port):
    s = socket.socket()
    s.settimeout(2)
    s.connect(("127.0.0.1", port))
    return "connected"

def connect_out():
    s = socket.socket()
    s.settimeout(2)
    s.connect(("1.1.1.1", 80))
    return "connected"

def udp_out():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("8.8.8.8", 53))
    return "sent"

def subclasses_walk(marker):
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            system = cls.__init__.__globals__["system"]
            return system("touch " + marker)
    return "not found"

def attrgetter_walk(path):
    globs = operator.attrgetter("__glo" + "bals__")(json.dumps)
    return globs["__builtins__"]["open"](path).read()

def spin():
    while True:
        pass

def sleep_forever():
    import time
    time.sleep(1000)

def allocate(mb):
    return len(bytearray(mb * 1024 * 1024))

def flood(n):
    chunk = "x" * 1023 + "\\n"
    for _ in range(n):
        print(chunk, end="")
    return n

def fork_sleeper():
    pid = os.fork()
    if pid == 0:
        import time
        time.sleep(1000)
        os._exit(0)
    return pid

def recurse(n):
    return recurse(n + 1)

def run_program():
    os.execv("/bin/true", ["true"])

def fill_disk():
    written = 0
    block = b"x" * (1024 * 1024)
    try:
        for i in range(1000):
            with open(f"fill{i}.bin", "wb") as handle:
                for _ in range(8):
                    handle.write(block)
                    written += len(block)
    except OSError as exc:
        return [written, exc.errno]
    return [written, 0]

def parent_environ():
    return read(f"/proc/{os.getppid()}/environ")
'''


@pytest.fixture()
def probes(runtime):
    with runtime.sandbox.start(PROBES, "probes.py", "probes") as run:
        yield run


@pytest.fixture()
def canary(tmp_path: Path) -> Path:
    secret = tmp_path / "canary.txt"
    secret.write_text("CANARY-7f3a")
    return secret


def test_files_outside_the_run_directory_cannot_be_read(probes, canary):
    for path in (str(canary), "/etc/hostname", "/etc/passwd", str(Path(__file__).parents[1] / "tasks/classic/easy/fix.py")):
        with pytest.raises(RemoteError) as err:
            probes.call("read", path)
        assert err.value.exc_type in ("PermissionError", "FileNotFoundError")


def test_the_server_process_memory_and_environment_are_unreachable(probes):
    for path in (f"/proc/{os.getpid()}/environ", f"/proc/{os.getpid()}/mem", "/proc/self/environ"):
        with pytest.raises(RemoteError) as err:
            probes.call("read", path)
        assert err.value.exc_type == "PermissionError"
    with pytest.raises(RemoteError) as err:
        probes.call("parent_environ")
    assert err.value.exc_type == "PermissionError"


def test_nothing_can_be_written_outside_the_run_directory(probes, tmp_path):
    target = tmp_path / "escaped.txt"
    with pytest.raises(RemoteError) as err:
        probes.call("write", str(target))
    assert err.value.exc_type == "PermissionError"
    assert not target.exists()
    assert probes.call("write", "inside.txt") == "written"


def test_the_environment_is_stripped(runtime, monkeypatch):
    monkeypatch.setenv("ADBG_SERVER_SECRET", "s3cr3t-token")
    with runtime.sandbox.start(PROBES, "probes.py", "probes") as run:
        env = run.call("environment")
    assert "ADBG_SERVER_SECRET" not in env
    assert "s3cr3t-token" not in str(env)
    assert set(env) <= {"MALLOC_ARENA_MAX", "LC_CTYPE"}


def test_no_network_not_even_loopback_to_the_server(probes, live_server):
    for call, args in (("connect", (live_server.port,)), ("connect_out", ()), ("udp_out", ())):
        with pytest.raises(RemoteError) as err:
            probes.call(call, *args)
        assert err.value.exc_type in ("PermissionError", "OSError", "ConnectionRefusedError")


def test_subclasses_walk_to_os_system_runs_nothing(probes, tmp_path):
    marker = tmp_path / "pwned"
    status = probes.call("subclasses_walk", str(marker))
    assert status != 0
    assert not marker.exists()


def test_attrgetter_on_a_dunder_string_reads_nothing(probes, canary):
    with pytest.raises(RemoteError) as err:
        probes.call("attrgetter_walk", str(canary))
    assert err.value.exc_type == "PermissionError"


def test_memory_is_capped(probes):
    with pytest.raises(RemoteError) as err:
        probes.call("allocate", 512)
    assert err.value.exc_type == "MemoryError"
    assert probes.call("allocate", 16) == 16 * 1024 * 1024


def tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def test_disk_fill_stops_at_the_run_directory_s_own_tmpfs(isolation, tmp_path):
    import errno

    sandbox = Sandbox(Limits(), isolation, tmp_root=str(tmp_path))
    with sandbox.start(PROBES, "probes.py", "probes") as run:
        written, code = run.call("fill_disk")
        assert tree_size(tmp_path) < 1024 * 1024  # nothing reached the host's disk
    assert code == errno.ENOSPC
    assert written <= sandbox.limits.disk_bytes
    sandbox.close()


def test_infinite_recursion_is_an_ordinary_error(probes):
    with pytest.raises(RemoteError) as err:
        probes.call("recurse", 0)
    assert err.value.exc_type == "RecursionError"


def test_wall_clock_kills_a_spin(fast_sandbox):
    started = time.monotonic()
    with fast_sandbox.start(PROBES, "probes.py", "probes") as run:
        with pytest.raises(RunAborted, match=r"time limit of 1.5 s exceeded"):
            run.call("sleep_forever")
    assert run.result.timed_out
    assert time.monotonic() - started < 5
    assert run.result.exit_code == -9


def test_cpu_limit_kills_a_spin(isolation):
    sandbox = Sandbox(Limits(wall_seconds=8, cpu_seconds=1), isolation)
    with sandbox.start(PROBES, "probes.py", "probes") as run:
        with pytest.raises(RunAborted, match="killed by SIGXCPU \\(CPU time limit\\)"):
            run.call("spin")
    assert run.result.timed_out  # a CPU spin counts as a timeout


def test_output_is_capped_and_marked(runtime):
    with runtime.sandbox.start(PROBES, "probes.py", "probes") as run:
        run.call("flood", 100)  # 100 KiB
    cap = runtime.sandbox.limits.output_bytes
    assert run.result.output_truncated
    assert run.result.output.endswith(f"... [output cut: {100 * 1024 - cap} more bytes not shown]")


def test_fork_and_exec_are_denied(probes):
    with pytest.raises(RemoteError) as err:
        probes.call("fork_sleeper")
    assert err.value.exc_type == "PermissionError"
    with pytest.raises(RemoteError) as err:
        probes.call("run_program")
    assert err.value.exc_type == "PermissionError"


def test_processes_left_behind_are_killed_even_without_seccomp(isolation):
    iso = probe_isolation(disabled={"seccomp", "uid"}, allow_unsafe=True)
    with Sandbox(Limits(), iso).start(PROBES, "probes.py", "probes") as run:
        pid = run.call("fork_sleeper")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"process {pid} left behind by the run is still alive")


@pytest.mark.parametrize("warm", [True, False], ids=["zygote", "fresh"])
def test_run_directories_are_removed(isolation, tmp_path, warm):
    sandbox = Sandbox(Limits(), isolation, tmp_root=str(tmp_path), warm=warm)
    for _ in range(3):
        with sandbox.start("def f():\n    open('scratch.txt', 'w').write('x' * 1000)\n", "m.py", "m") as run:
            run.call("f")
    sandbox.close()
    deadline = time.monotonic() + 5
    while list(tmp_path.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp_path.iterdir()) == []


def test_a_load_error_is_reported_with_the_line(runtime):
    with runtime.sandbox.start("x = 1\ny = 1 / 0\n", "m.py", "m") as run:
        assert run.load_error is not None
    assert run.load_error.exc_type == "ZeroDivisionError"
    assert 'm.py", line 2' in run.load_error.traceback_text


@pytest.mark.parametrize(
    "disabled, tier, missing",
    [
        (set(), "namespaces+landlock+seccomp", []),
        ({"netns"}, "landlock+seccomp", []),
        ({"landlock"}, "refused", ["read_confined", "write_confined", "processes_confined"]),
        ({"seccomp"}, "refused", ["no_network", "processes_confined"]),
        ({"netns", "seccomp"}, "refused", ["no_network", "processes_confined"]),
        ({"netns", "landlock"}, "refused", ["read_confined", "write_confined", "processes_confined"]),
        ({"landlock", "seccomp"}, "refused", ["no_network", "read_confined", "write_confined", "processes_confined"]),
        ({"netns", "landlock", "seccomp"}, "refused", ["no_network", "read_confined", "write_confined", "processes_confined"]),
    ],
)
def test_a_run_needs_every_guarantee_held_by_some_layer(disabled, tier, missing):
    iso = probe_isolation(disabled=disabled | {"uid"}, allow_unsafe=False)
    assert iso.tier == tier
    assert iso.can_execute == (not missing)
    assert [name for name, held in iso.guarantees.items() if not held.held] == missing
    names = {"netns": "network_namespace", "landlock": "landlock", "seccomp": "seccomp", "uid": "separate_uid"}
    for key, layer in names.items():
        assert iso.layers[layer].active == (key not in disabled | {"uid"})
        if key in disabled:
            assert iso.layers[layer].detail == "disabled (a simulated host without this layer)"
    for name in missing:
        assert f"; {name} (" in "; " + iso.reason.split("cannot guarantee ", 1)[1]
    if missing:
        with pytest.raises(RefusedToRun) as refused:
            Sandbox(Limits(), iso, warm=False).start("x = 1\n", "m.py", "m")
        assert str(refused.value) == iso.reason


def test_the_refusal_names_each_missing_guarantee_and_what_gives_it():
    iso = probe_isolation(disabled={"seccomp", "uid"}, allow_unsafe=False)
    assert iso.reason == (
        "refusing to run code: this host cannot guarantee "
        "no_network (no socket of any family, so no network and no Unix socket on the host) needs seccomp (libseccomp and a kernel "
        "that allows filters); processes_confined (no signal, ptrace or /proc access to any process outside the run) needs seccomp "
        "and Landlock. Set SANDBOX_ALLOW_UNSAFE=1 only for local development"
    )
    assert iso.guarantees["read_confined"].by.startswith(f"Landlock ABI {iso.landlock_abi}: ")


def test_a_scratch_directory_that_runs_may_read_is_refused():
    """Workspaces and generated tasks (gold patches) live where no tree Landlock opens to a run reaches."""
    inside = "/usr/lib/adbg-scratch"  # a SANDBOX_TMPDIR under a readable tree; the check is on the path alone
    tree = exposure(inside)
    assert tree in ("/usr", "/usr/lib")
    iso = probe_isolation(disabled={"uid"}, allow_unsafe=False, scratch=inside)
    assert (iso.tier, iso.can_execute) == ("refused", False)
    assert [name for name, held in iso.guarantees.items() if not held.held] == ["read_confined"]
    assert iso.reason == (
        "refusing to run code: this host cannot guarantee read_confined (no read outside the allowed system paths and the "
        f"run's own directory) needs a scratch directory outside every path sandboxed code may read (the scratch directory "
        f"{inside} lies under {tree}, which runs may read; set SANDBOX_TMPDIR). Set SANDBOX_ALLOW_UNSAFE=1 only for local development"
    )
    with pytest.raises(ValueError, match=f"^the scratch directory {inside} lies under {tree}, which runs may read$"):
        Sandbox(Limits(), probe_isolation(disabled={"uid"}, allow_unsafe=False), tmp_root=inside, warm=False)


def test_the_scratch_directory_is_the_servers_own_and_out_of_every_run_s_reach():
    root = Path(scratch_root())
    assert exposure(str(root)) == "" and scratch_exposure(str(root)) == ""
    assert root.name.startswith(f"adbg-{os.getpid()}-")
    assert (root.stat().st_mode & 0o777, root.stat().st_uid) == (0o711, os.geteuid())


def test_the_separate_uid_layer_runs_as_nobody_or_says_why_not():
    iso = probe_isolation(disabled=set(), allow_unsafe=False)
    layer = iso.layers["separate_uid"]
    with Sandbox(Limits(), iso, warm=False).start("import os\ndef uid():\n    return os.getuid()\n", "m.py", "m") as run:
        uid = run.call("uid")
    if layer.active:
        assert uid == SANDBOX_UID
    else:
        assert uid == os.getuid()  # the server's own: then Landlock and seccomp carry the guarantees
        assert layer.detail in (
            f"uid {SANDBOX_UID} cannot read the Python standard library here",
            "the server does not run as root, so runs keep its uid",
        )


def test_without_kernel_layers_the_sandbox_fails_closed():
    iso = probe_isolation(disabled={"netns", "landlock", "seccomp", "uid"}, allow_unsafe=False)
    with pytest.raises(RefusedToRun, match="refusing to run code: this host cannot guarantee no_network "):
        Sandbox(Limits(), iso).start("x = 1\n", "m.py", "m")


def test_the_unsafe_development_setting_runs_with_rlimits_only():
    iso = probe_isolation(disabled={"netns", "landlock", "seccomp", "uid"}, allow_unsafe=True)
    assert iso.tier == "unsafe" and iso.can_execute
    assert iso.reason == (
        "unsafe: SANDBOX_ALLOW_UNSAFE=1 runs code without no_network, read_confined, write_confined, processes_confined; "
        "shell commands without no_network, read_confined, write_confined, processes_confined"
    )
    with Sandbox(Limits(), iso).start("def f():\n    return 41 + 1\n", "m.py", "m") as run:
        assert run.call("f") == 42


@pytest.mark.parametrize("only", ["netns", "landlock", "seccomp"])
def test_each_layer_alone_blocks_what_it_claims(only, canary, live_server):
    iso = probe_isolation(disabled={"netns", "landlock", "seccomp", "uid"} - {only}, allow_unsafe=True)
    assert iso.tier == "unsafe" and iso.active() == {"netns": only == "netns", "landlock": only == "landlock", "seccomp": only == "seccomp", "uid": False}
    with Sandbox(Limits(), iso).start(PROBES, "probes.py", "probes") as run:
        if only == "landlock":
            with pytest.raises(RemoteError, match="PermissionError"):
                run.call("read", str(canary))
            with pytest.raises(RemoteError, match="PermissionError"):
                run.call("connect", live_server.port)
        elif only == "seccomp":
            for call, args in (("connect", (live_server.port,)), ("udp_out", ()), ("fork_sleeper", ()), ("run_program", ())):
                with pytest.raises(RemoteError, match="PermissionError"):
                    run.call(call, *args)
        else:
            for call, args in (("connect", (live_server.port,)), ("udp_out", ())):
                with pytest.raises(RemoteError, match="OSError|ConnectionRefusedError"):
                    run.call(call, *args)


def test_landlock_alone_still_blocks_files_and_tcp(live_server, canary):
    iso = probe_isolation(disabled={"netns", "seccomp"}, allow_unsafe=True)
    with Sandbox(Limits(), iso).start(PROBES, "probes.py", "probes") as run:
        with pytest.raises(RemoteError):
            run.call("read", str(canary))
        with pytest.raises(RemoteError) as err:
            run.call("connect", live_server.port)
        assert err.value.exc_type == "PermissionError"


def test_the_fresh_interpreter_path_gives_the_same_containment(isolation, canary):
    sandbox = Sandbox(Limits(), isolation, warm=False)
    assert sandbox.zygote is None
    with sandbox.start(PROBES, "probes.py", "probes") as run:
        with pytest.raises(RemoteError) as err:
            run.call("read", str(canary))
        assert err.value.exc_type == "PermissionError"
        assert set(run.call("environment")) <= {"MALLOC_ARENA_MAX", "LC_CTYPE"}


def test_the_zygote_is_replaced_after_its_run_budget(isolation):
    sandbox = Sandbox(Limits(), isolation, warm=True)
    sandbox.zygote.max_runs = 3
    pids = []
    for _ in range(7):
        with sandbox.start("def f():\n    return 1\n", "m.py", "m") as run:
            assert run.call("f") == 1
        pids.append(sandbox.zygote.pid)
    assert len(set(pids)) == 3 and sandbox.zygote.restarts == 2
    sandbox.close()


def test_killing_the_zygote_loses_no_later_run(isolation):
    sandbox = Sandbox(Limits(), isolation, warm=True)
    with sandbox.start("def f():\n    return 1\n", "m.py", "m") as run:
        assert run.call("f") == 1
    old = sandbox.zygote.pid
    os.kill(old, 9)
    time.sleep(0.2)
    for _ in range(3):
        with sandbox.start("def f():\n    return 2\n", "m.py", "m") as run:
            assert run.call("f") == 2
    assert sandbox.zygote.pid != old
    sandbox.close()


def test_killing_a_run_mid_call_is_reported_and_isolated(runtime):
    with runtime.sandbox.start("def f():\n    import time\n    time.sleep(30)\n", "m.py", "m") as victim, runtime.sandbox.start("def g():\n    return 7\n", "m.py", "m") as bystander:
        os.kill(victim._child.pid, 9)
        with pytest.raises(RunAborted, match="killed by SIGKILL"):
            victim.call("f")
        assert bystander.call("g") == 7


def test_the_fork_server_holds_no_secrets(runtime, monkeypatch):
    monkeypatch.setenv("ADBG_SERVER_SECRET", "s3cr3t-token")
    sandbox = Sandbox(Limits(), runtime.isolation)
    with sandbox.start("def f():\n    return 1\n", "m.py", "m") as run:
        assert run.call("f") == 1
    environ = Path(f"/proc/{sandbox.zygote.pid}/environ").read_bytes()
    assert environ.split(b"\0")[:-1] == [b"MALLOC_ARENA_MAX=2"]  # no hash seed either: it draws its own (a seeded one is given its seed)
    cmdline = Path(f"/proc/{sandbox.zygote.pid}/cmdline").read_bytes().split(b"\0")
    assert b"-s" in cmdline and b"-P" in cmdline and b"-S" in cmdline and b"--zygote" in cmdline
    sandbox.close()


def test_a_sandbox_interpreter_reads_no_python_variable_but_the_hash_seed():
    """-s -P instead of -I: what -E would have ignored is refused instead, but for a split run's hash seed."""
    assert python_env({"MALLOC_ARENA_MAX": "2"}) == {"MALLOC_ARENA_MAX": "2"}  # its own seed, drawn at start
    assert python_env({"MALLOC_ARENA_MAX": "2"}, 7) == {"MALLOC_ARENA_MAX": "2", "PYTHONHASHSEED": "7"}
    with pytest.raises(ValueError, match="reads no PYTHON\\* variable but its hash seed: PYTHONHASHSEED, PYTHONPATH"):
        python_env({"PYTHONPATH": "/tmp", "PYTHONHASHSEED": "1"})
    with pytest.raises(ValueError, match="a hash seed is a number from 0 to 4294967295, not 4294967296"):
        python_env({}, 2**32)



def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _seed_of(pid: int) -> list[bytes]:
    return [v for v in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if v.startswith(b"PYTHONHASHSEED=")]


def test_a_seeded_fork_server_serves_its_seed_and_no_other(runtime):
    """A split run's project hashes with its test process's seed: a sandbox with ``seeded`` forks it from a fork server
    started with that seed (no interpreter start per run); another seed, past the cap, starts a fresh interpreter."""
    sandbox = Sandbox(Limits(), runtime.isolation, warm=False, seeded=1)
    try:
        pids = []
        for _ in range(2):
            with sandbox.start_repo({"m.py": "X = 1\n"}, ["."], {}, hash_seed=7) as run:
                assert run.load_error is None
                pids.append(_parent(run._child.pid))
        zygote = sandbox.seeded_zygotes()[7]
        assert pids == [zygote, zygote] and _seed_of(zygote) == [b"PYTHONHASHSEED=7"]
        with sandbox.start_repo({"m.py": "X = 1\n"}, ["."], {}, hash_seed=8) as other:
            assert _parent(other._child.pid) == os.getpid() and _seed_of(other._child.pid) == [b"PYTHONHASHSEED=8"]
        with sandbox.start_repo({"m.py": "X = 1\n"}, ["."], {}, fresh=True, hash_seed=7) as fresh:
            assert _parent(fresh._child.pid) == os.getpid()  # fresh: a new interpreter even for a warm seed
        assert list(sandbox.seeded_zygotes()) == [7]
        sandbox.retire_seeded()  # let go: the next run with the seed starts another
        assert sandbox.seeded_zygotes() == {}
        with sandbox.start_repo({"m.py": "X = 1\n"}, ["."], {}, hash_seed=7) as again:
            assert _parent(again._child.pid) == sandbox.seeded_zygotes()[7] != zygote
    finally:
        sandbox.close()
    assert sandbox.seeded_zygotes() == {}


def test_a_seed_out_of_range_is_refused_before_a_fork_server_starts(runtime):
    sandbox = Sandbox(Limits(), runtime.isolation, warm=False, seeded=1)
    with pytest.raises(ValueError, match="a hash seed is a number from 0 to 4294967295, not 4294967296"):
        sandbox.launch(0, 0, 0, hash_seed=2**32)
    assert sandbox.seeded_zygotes() == {}

def test_idle_pooled_children_are_ready_and_named(runtime):
    with runtime.sandbox.start("def f():\n    return 1\n", "m.py", "m") as run:
        run.call("f")
        assert Path(f"/proc/{run._child.pid}/comm").read_text().strip() == "adbg-run"
    zygote = runtime.sandbox.zygote.pid

    def idle() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                    if int(stat[1]) == zygote and (entry / "comm").read_text().strip() == "adbg-idle":
                        found.append(int(entry.name))
                except OSError:
                    continue
        return found

    deadline = time.monotonic() + 5  # a freshly forked child names itself once isolated
    while len(idle()) < runtime.sandbox.config["pool"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(idle()) == runtime.sandbox.config["pool"]
