"""Red-team suite: hostile submissions and hostile requests, each through the whole HTTP pipeline.

Every attack is submitted to the easy task (whose honest buggy code passes 6 of 8 tests) twice:
with the static policy on, and with it off (``static_check=False``, as ``SANDBOX_STATIC_CHECK=off``),
which proves the kernel layers and the verdict path contain it on their own. After each attack:
no pass was gained, no secret or canary appears anywhere in the response, no marker file was
created, the tests and the gold fix on disk are unchanged, ``/health`` still answers, and no
sandbox process is left behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from env.config import Settings
from env.runtime import Runtime
from env.sandbox.limits import Limits
from env.sandbox.policy import PolicyViolation, check_source
from env.sandbox.runner import Sandbox
from env.scratch import scratch_root
from env.server.app import build_app
from tests.helpers import BUGGY, CATALOG

EASY = CATALOG.get("easy")
SECRET = "ADBG-SECRET-" + secrets.token_hex(8)
CANARY = "ADBG-CANARY-" + secrets.token_hex(8)
ROOT = Path(__file__).resolve().parents[1]
TESTS_FILE = EASY.folder / "tests.py"
GOLD_FILE = EASY.folder / "fix.py"

# name -> (body of `def attack():`, passes the submission honestly earns with the policy off)
# Placeholders: {canary} {marker} {port} {tests} {gold} {pycache}
ATTACKS: dict[str, tuple[str, int]] = {
    # -- escapes to the OS ----------------------------------------------------------------------
    "os_system": ("import os\nreturn os.system('touch {marker}')", 6),
    "subprocess_run": ("import subprocess\nreturn subprocess.run(['/usr/bin/touch', '{marker}']).returncode", 6),
    "typing_sys_chain": ("import typing\nreturn typing.sys.modules['os'].system('touch {marker}')", 6),
    "json_codecs_builtins_exec": ("import json\nreturn json.codecs.builtins.exec(\"import os; os.system('touch {marker}')\")", 6),
    "datetime_sys_chain": ("import datetime\nos = datetime.sys.modules['os']\nreturn os.read(os.open('{canary}', 0), 100)", 6),
    "subclasses_walk": (
        "for cls in ().__class__.__base__.__subclasses__():\n"
        "    if cls.__name__ == '_wrap_close':\n"
        "        return cls.__init__.__globals__['system']('touch {marker}')",
        6,
    ),
    "attrgetter_dunder_string": (
        "import operator, json\nglobs = operator.attrgetter('__glo' + 'bals__')(json.dumps)\n"
        "return globs['__builtins__']['open']('{canary}').read()",
        6,
    ),
    "string_formatter_get_field": (
        "import string, json\nobj, _ = string.Formatter().get_field('0.__globals__', [json.dumps], {{}})\n"
        "return obj['__builtins__']['open']('{canary}').read()",
        6,
    ),
    "generator_frame_walk": (
        "def gen():\n    yield gen_obj.gi_frame.f_back\n"
        "gen_obj = gen()\nframe = next(gen_obj)\nwhile frame is not None:\n"
        "    if 'os' in frame.f_globals:\n        return frame.f_globals['os'].system('touch {marker}')\n"
        "    frame = frame.f_back",
        6,
    ),
    "gc_walk_to_os": (
        "import gc\nfor obj in gc.get_objects():\n"
        "    if type(obj).__name__ == 'module' and getattr(obj, '__name__', '') == 'os':\n"
        "        return obj.system('touch {marker}')",
        6,
    ),
    "nfkc_identifier_eval": ("return ｅｖａｌ(\"__import__('os').system('touch {marker}')\")", 6),
    "ctypes_libc_system": ("import ctypes\nreturn ctypes.CDLL(None).system(b'touch {marker}')", 6),
    "ctypes_raw_unshare": ("import ctypes\nreturn ctypes.CDLL(None, use_errno=True).syscall(272, 0x40000000)", 6),
    "pickle_reduce_payload": (
        "import os, pickle\nclass P:\n    def __reduce__(self):\n        return (os.system, ('touch {marker}',))\n"
        "return pickle.loads(pickle.dumps(P()))",
        6,
    ),
    "marshal_code_object": (
        "import marshal\ncode = compile(\"import os; os.system('touch {marker}')\", 'x', 'exec')\nexec(marshal.loads(marshal.dumps(code)))",
        6,
    ),
    "builtins_import": (
        "b = __builtins__ if isinstance(__builtins__, dict) else vars(__builtins__)\nreturn b['__import__']('os').system('touch {marker}')",
        6,
    ),
    "importlib_import_module": ("import importlib\nreturn importlib.import_module('os').system('touch {marker}')", 6),
    "posix_module": ("import posix\nreturn posix.system('touch {marker}')", 6),
    "io_open_canary": ("import io\nreturn io.open('{canary}').read()", 6),
    "write_marker_outside": ("import os\nreturn os.open('{marker}', os.O_CREAT | os.O_WRONLY)", 6),
    "symlink_to_canary": ("import os\nos.symlink('{canary}', 'link')\nreturn open('link').read()", 6),
    "hardlink_to_canary": ("import os\nos.link('{canary}', 'hard')\nreturn open('hard').read()", 6),
    "mknod_device": ("import os, stat\nos.mknod('mem', 0o600 | stat.S_IFCHR, os.makedev(1, 1))\nreturn open('mem', 'rb').read(16)", 6),
    "ptrace_parent": ("import ctypes, os\nreturn ctypes.CDLL(None, use_errno=True).ptrace(16, os.getppid(), 0, 0)", 6),
    "mount_host_root": ("import ctypes\nreturn ctypes.CDLL(None, use_errno=True).mount(b'/', b'.', None, 4096, None)", 6),
    "chroot": ("import os\nos.chroot('/')\nreturn 'chrooted'", 6),
    "exec_shell": ("import os\nos.execv('/bin/sh', ['sh', '-c', 'touch {marker}'])", 6),
    # -- information leaks ----------------------------------------------------------------------
    "read_etc_hostname": ("return open('/etc/hostname').read()", 6),
    "read_etc_shadow": ("return open('/etc/shadow').read()", 6),
    "read_canary_file": ("return open('{canary}').read()", 6),
    "read_gold_fix": ("return open('{gold}').read()", 6),
    "read_parent_environ": ("import os\nreturn open('/proc/%d/environ' % os.getppid()).read()", 6),
    "scan_proc_environ": (
        "import os\nfound = []\nfor pid in os.listdir('/proc'):\n    try:\n        found.append(open('/proc/' + pid + '/environ').read())\n"
        "    except OSError:\n        pass\nreturn found",
        6,
    ),
    "dump_own_environment": ("import os\nreturn dict(os.environ)", 6),
    "read_server_memory": ("import os\nreturn open('/proc/%d/mem' % os.getppid(), 'rb').read(64)", 6),
    "list_root_directory": ("import os\nreturn os.listdir('/')", 6),
    # -- network --------------------------------------------------------------------------------
    "tcp_to_the_internet": ("import socket\nreturn socket.create_connection(('1.1.1.1', 80), 2).getpeername()", 6),
    "udp_to_the_internet": ("import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nreturn s.sendto(b'x', ('8.8.8.8', 53))", 6),
    "loopback_http_to_the_server": ("import urllib.request\nreturn urllib.request.urlopen('http://127.0.0.1:{port}/health', timeout=2).read()", 6),
    "loopback_reset_hijack": (
        "import urllib.request\nreq = urllib.request.Request('http://127.0.0.1:{port}/reset', data=b'{{}}', method='POST')\n"
        "return urllib.request.urlopen(req, timeout=2).read()",
        6,
    ),
    "dns_lookup": ("import socket\nreturn socket.getaddrinfo('example.com', 80)", 6),
    "netlink_socket": ("import socket\nreturn socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).fileno()", 6),
    "packet_socket": ("import socket\nreturn socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).fileno()", 6),
    "unix_socket_to_host": ("import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('/run/systemd/private')\nreturn 'connected'", 6),
    # -- resource abuse -------------------------------------------------------------------------
    "fork_bomb": ("import os\nwhile True:\n    os.fork()", 6),
    "memory_bomb": ("return len(bytearray(2 ** 31))", 6),
    "cpu_spin_at_import": ("while True:\n    pass", 0),
    "sigterm_immune_spin": ("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass", 0),
    "sleep_forever": ("import time\ntime.sleep(10 ** 6)", 0),
    # through a C call at every level, so the C stack overflows (SIGSEGV) within milliseconds, whatever the load
    "infinite_recursion": ("import sys\nsys.setrecursionlimit(10 ** 7)\ndef down(n):\n    return list(map(down, [n + 1]))\nreturn down(0)", 0),
    "output_flood": ("line = 'x' * 1023\nfor _ in range(20 * 1024):\n    print(line)", 0),
    "disk_fill": (
        "block = b'x' * (1 << 20)\nfor i in range(1000):\n    with open('fill%d' % i, 'wb') as f:\n        for _ in range(8):\n            f.write(block)",
        6,
    ),
    "thread_storm": (
        "import threading, time\nfor _ in range(100000):\n    threading.Thread(target=time.sleep, args=(100,), daemon=True).start()",
        6,
    ),
    # the run's memory filled and kept (not given back when the attack ends): the harness still reads the next
    # request and replies, from memory it held back (env/sandbox/inside/framing.py)
    "memory_hoard_kept": (
        "hoard = []\ntry:\n    while True:\n        hoard.append(bytearray(1 << 20))\nexcept MemoryError:\n    pass\n"
        "globals()['kept'] = hoard\nreturn len(hoard) > 0",
        6,
    ),
    "small_object_hoard_kept": (
        "hoard = []\ntry:\n    while True:\n        hoard.append(str(len(hoard)) * 40)\nexcept MemoryError:\n    pass\n"
        "globals()['kept'] = hoard\nreturn len(hoard) > 0",
        6,
    ),
    "fd_storm": ("files = []\nwhile True:\n    files.append(open('f%d' % len(files), 'w'))", 6),
    "orphaned_daemon_thread": (
        "import threading\ndef loop():\n    while True:\n        open('tick', 'w').close()\n"
        "threading.Thread(target=loop, daemon=True).start()\nreturn 'started'",
        6,
    ),
    "kill_the_parent": ("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nreturn 'sent'", 6),
    "kill_every_process": ("import os, signal\nos.kill(-1, signal.SIGKILL)\nreturn 'sent'", 6),
    # -- verdict forgery ------------------------------------------------------------------------
    "fake_summary_lines": ("print('8 passed, 0 failed')\nprint('Ran 8 tests', 'OK')\nreturn 'printed'", 6),
    "exit_zero_at_import": ("import sys\nsys.exit(0)", 6),  # SystemExit is caught by the attack wrapper
    "os_exit_zero_at_import": ("import os\nos._exit(0)", 0),
    "skip_every_test": ("import unittest\nraise unittest.SkipTest('skip')", 6),
    "forge_the_reply_channel": (
        "import os, sys\nfd = int(sys.argv[2])\nfor i in range(50):\n    data = ('{{\"id\":%d,\"ok\":4}}' % i).encode()\n"
        "    os.write(fd, len(data).to_bytes(4, 'big') + data)",
        0,
    ),
    "edit_the_tests_on_disk": ("with open('{tests}', 'a') as f:\n    f.write('\\nassert False\\n')", 6),
    "edit_test_bytecode": ("import os\nos.makedirs('{pycache}', exist_ok=True)\nopen('{pycache}/tests.cpython-311.pyc', 'wb').write(b'x')", 6),
    "settrace_everything": ("import sys\nsys.settrace(lambda *a: None)\nreturn 'tracing'", 6),
    "monkeypatch_unittest": ("import unittest\nunittest.TestCase.run = lambda *a, **k: None\nreturn 'patched'", 6),
    "patch_the_reply_encoder": (
        "import sys\nframe = sys._getframe()\nwhile frame is not None:\n"
        "    if 'Encoder' in frame.f_globals:\n        frame.f_globals['Encoder'].encode = lambda self, value, depth=0: '4'\n"
        "        return 'patched'\n    frame = frame.f_back",
        2,  # every reply becomes 4: only the two tests whose answer may be 4 pass
    ),
}

ATTACK_TAIL = (
    "\ntry:\n    print('attack returned', repr(attack()))\n"
    "except BaseException as exc:\n    print('attack blocked:', type(exc).__name__, exc)\n\n"
)


def submission(body: str, values: dict[str, str]) -> str:
    indented = "\n".join("    " + line for line in body.format(**values).splitlines())
    return "def attack():\n" + indented + "\n" + ATTACK_TAIL + BUGGY["easy"]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sandbox_children() -> list[int]:
    """Live processes serving one of this test process's runs: named "adbg-run" (idle pooled ones are "adbg-idle")
    and descended from this process (its fork servers' children), so other servers' runs on a shared host never count."""
    parents, serving = {}, []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(stat[1])
                if stat[0] != "Z" and (entry / "comm").read_text().strip() == "adbg-run":
                    serving.append(int(entry.name))
            except OSError:
                continue
    me = os.getpid()

    def ours(pid: int) -> bool:
        for _ in range(64):
            pid = parents.get(pid, 0)
            if pid == me:
                return True
            if pid <= 1:
                return False
        return False

    return [pid for pid in serving if ours(pid)]


@pytest.fixture(scope="module")
def world(tmp_path_factory, isolation, catalog):
    base = tmp_path_factory.mktemp("redteam")
    canary = base / "canary.txt"
    canary.write_text(CANARY)
    os.environ["ADBG_REDTEAM_SECRET"] = SECRET  # the server's environment holds a secret
    clients = {}
    for policy in (True, False):
        runtime = Runtime(catalog, Sandbox(Limits(wall_seconds=3, cpu_seconds=2), isolation), workers=4, static_check=policy)
        # one client ("testclient") leaves an unfinished episode per attack: its share is the whole store
        clients[policy] = TestClient(build_app(runtime=runtime, settings=Settings(sessions_per_client=Settings().http_episodes)))
    yield {"canary": canary, "base": base, "clients": clients}
    for client in clients.values():
        client.app.state.runtime.sandbox.close()
    del os.environ["ADBG_REDTEAM_SECRET"]


def check_aftermath(client: TestClient, response_text: str, marker: Path, before: dict[str, str], zygote: int | None = None) -> None:
    assert SECRET not in response_text and CANARY not in response_text
    if zygote is not None:  # nothing a run does may kill or replace the fork server
        assert client.app.state.runtime.sandbox.zygote.pid == zygote
        assert Path(f"/proc/{zygote}/stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    assert not marker.exists()
    assert {"tests": digest(TESTS_FILE), "gold": digest(GOLD_FILE)} == before
    started = time.monotonic()
    assert client.get("/health").json()["status"] == "healthy"
    assert time.monotonic() - started < 2.0
    deadline = time.monotonic() + 5
    while sandbox_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_children() == []


@pytest.mark.parametrize("policy", [True, False], ids=["policy_on", "policy_off"])
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_is_contained(world, live_server, name, policy):
    body, honest = ATTACKS[name]
    marker = world["base"] / f"marker-{name}-{policy}"
    values = {
        "canary": str(world["canary"]),
        "marker": str(marker),
        "port": str(live_server.port),
        "tests": str(TESTS_FILE),
        "gold": str(GOLD_FILE),
        "pycache": str(EASY.folder / "__pycache__"),
    }
    code = submission(body, values)
    try:
        check_source(code, EASY.allowed_imports)
        rejected = False
    except PolicyViolation:
        rejected = True
    before = {"tests": digest(TESTS_FILE), "gold": digest(GOLD_FILE)}
    client = world["clients"][policy]
    episode = client.post("/reset", json={"task_id": "easy", "seed": 1}).json()["observation"]["episode_id"]
    client.post("/step", json={"action": {"action_type": "submit_fix", "fixed_code": BUGGY["easy"], "hypothesis": "h"}, "episode_id": episode})
    zygote = client.app.state.runtime.sandbox.zygote.pid
    response = client.post("/step", json={"action": {"action_type": "submit_fix", "fixed_code": code, "hypothesis": "h"}, "episode_id": episode})
    assert response.status_code == 200
    obs = response.json()["observation"]
    expected = 0 if (policy and rejected) else honest
    assert obs["tests_passed"] == expected, obs["current_error_output"][-1500:]
    if policy and rejected:
        assert obs["current_error_output"].startswith("Not run: line ")
    check_aftermath(client, response.text, marker, before, zygote)


def test_the_suite_covers_at_least_fifty_attacks():
    assert len(ATTACKS) + len(HOSTILE_REQUESTS) >= 50


# -- hostile input to the server itself ------------------------------------------------------------

NESTED = b"[" * 100_000 + b"]" * 100_000


def _code_request(code: str, hypothesis: str = "h") -> dict:
    return {"json": {"action": {"action_type": "submit_fix", "fixed_code": code, "hypothesis": hypothesis}}}


HOSTILE_REQUESTS = {
    "huge_body": ({"content": b'{"action": {"action_type": "give_up", "final_diagnosis": "' + b"x" * (3 << 20) + b'"}}'}, 413, None),
    "hundred_thousand_nested_brackets": ({"content": NESTED}, 400, None),
    "deeply_nested_json_object": ({"content": b'{"action": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}"}, 400, None),
    "invalid_utf8": ({"content": b'{"action": {"action_type": "\xc3\x28"}}'}, 400, None),
    "lone_surrogate": ({"content": b'{"action": {"action_type": "give_up", "final_diagnosis": "\\udc80"}}'}, 400, None),
    "unary_operator_tower": (_code_request("x = " + "-" * 60_000 + "1\n"), 200, "Not run: "),
    "nul_bytes_in_code": (_code_request("x = 1\x00\n"), 200, "Not run: the code contains a NUL byte"),
    "code_over_the_size_limit": (_code_request("#" * 900_000 + "\n"), 200, "Not run: the code is 900001 bytes; the limit is 65536 bytes"),
    "huge_hypothesis": (_code_request("x = 1\n", "h" * 500_000), 200, None),
    "not_json_at_all": ({"content": b"\x00\x01\x02garbage"}, 400, None),
}


@pytest.mark.parametrize("policy", [True, False], ids=["policy_on", "policy_off"])
@pytest.mark.parametrize("name", sorted(HOSTILE_REQUESTS))
def test_hostile_request_gets_a_clear_answer(world, name, policy):
    kwargs, status, output_prefix = HOSTILE_REQUESTS[name]
    client = world["clients"][policy]
    client.post("/reset", json={"task_id": "easy"})
    headers = {"content-type": "application/json"}
    response = client.post("/step", headers=headers, **kwargs)
    assert response.status_code == status
    body = response.json()
    if status != 200:
        assert isinstance(body["detail"], str) and body["detail"]
    elif output_prefix:
        assert body["observation"]["current_error_output"].startswith(output_prefix)
        assert body["observation"]["tests_passed"] == 0
    if name == "huge_hypothesis":
        assert body["observation"]["error"] == "field 'hypothesis' is 500000 characters long; the limit is 8192"
    check_aftermath(client, response.text, world["base"] / "never", {"tests": digest(TESTS_FILE), "gold": digest(GOLD_FILE)})


def test_garbage_over_the_websocket_leaves_the_server_healthy(live_server):
    import asyncio
    import json

    from websockets.asyncio.client import connect

    async def main() -> list:
        replies = []
        async with connect(live_server.url.replace("http", "ws") + "/ws", max_size=None) as ws:
            for raw in ("not json", json.dumps({"type": "step", "data": {"action_type": 5}}), json.dumps({"type": "warp"})):
                await ws.send(raw)
                replies.append(json.loads(await ws.recv())["type"])
            await ws.send(json.dumps({"type": "reset", "data": {"task_id": "easy"}}))
            replies.append(json.loads(await ws.recv())["type"])
        return replies

    assert asyncio.run(main()) == ["error", "error", "error", "observation"]
    import httpx

    assert httpx.get(f"{live_server.url}/health").json()["status"] == "healthy"


# -- false-positive guards: correct code that merely looks suspicious must still pass --------------

LOOKS_SUSPICIOUS = {
    "easy": '''import bisect
from typing import NamedTuple

NOTE = "this module does not import os or call eval"


class _Window(NamedTuple):
    left: int
    right: int


class _Search:
    def __init__(self, arr):
        self._arr = arr
        self.__doc__ = "binary search over " + str(len(arr)) + " items"

    def __len__(self):
        return len(self._arr)

    def __repr__(self):
        return "_Search(%d)" % len(self)

    def find(self, target):
        window = _Window(0, len(self) - 1)
        while window.left <= window.right:
            mid = (window.left + window.right) // 2
            if self._arr[mid] == target:
                return mid
            if self._arr[mid] < target:
                window = window._replace(left=mid + 1)
            else:
                window = window._replace(right=mid - 1)
        return -1


def binary_search(arr, target):
    index = bisect.bisect_left(arr, target)
    found = _Search(arr).find(target)
    assert found == -1 or arr[found] == target
    return index if index < len(arr) and arr[index] == target else found
''',
    "medium": '''import hashlib


class _Cache:
    def __init__(self):
        self._store = {}

    def __contains__(self, key):
        return key in self._store

    def __getitem__(self, key):
        return self._store[key]

    def __setitem__(self, key, value):
        self._store[key] = value


_hashes = _Cache()
WARNING = "import os; eval('x')  <- text, not code"


def hash_password(password):
    if password not in _hashes:
        _hashes[password] = hashlib.md5(password.encode("utf-8")).hexdigest()
    return _hashes[password]


def validate_password(password, stored_hash):
    if not password or not stored_hash:
        return False
    return hash_password(password) == stored_hash


def authenticate_user(users, username, password):
    record = users.get(username.strip().lower())
    if record is None:
        return False
    return validate_password(password, record["password_hash"])
''',
    "hard": '''import threading


class _Base:
    def __init__(self):
        self._lock = threading.RLock()


class ConnectionCounter(_Base):
    def __init__(self):
        super().__init__()
        self.count = 0
        self.peak = 0

    def __enter__(self):
        self._lock.acquire()
        return self

    def __exit__(self, *exc):
        self._lock.release()
        return False

    def increment(self):
        with self:
            self.count += 1
            self.peak = max(self.peak, self.count)
            return self.count

    def decrement(self):
        with self:
            if self.count == 0:
                raise ValueError("no active connections")
            self.count -= 1
            return self.count

    def get_count(self):
        with self:
            return self.count

    def get_peak(self):
        with self:
            return self.peak

    def reset(self):
        with self:
            self.count = 0
''',
}


@pytest.mark.parametrize("policy", [True, False], ids=["policy_on", "policy_off"])
@pytest.mark.parametrize("task_id", ["easy", "medium", "hard"])
def test_correct_code_that_looks_suspicious_still_solves(world, task_id, policy):
    client = world["clients"][policy]
    episode = client.post("/reset", json={"task_id": task_id, "seed": 3}).json()["observation"]["episode_id"]
    body = client.post("/step", json={"action": {"action_type": "submit_fix", "fixed_code": LOOKS_SUSPICIOUS[task_id], "hypothesis": "h"}, "episode_id": episode}).json()
    assert body["observation"]["error"] is None
    assert body["observation"]["tests_passed"] == body["observation"]["tests_total"]
    assert body["done"] is True and body["reward"] >= 0.5


def test_another_servers_runs_are_not_counted_as_ours():
    """On a shared host other servers' runs carry the same name; only this process's descendants are ours."""
    script = (
        "import ctypes, os, sys, time\n"
        "if os.fork():\n    os._exit(0)\n"  # orphaned: reparented away from this test process, like a stranger's run
        "ctypes.CDLL(None).prctl(15, b'adbg-run', 0, 0, 0)\n"
        "print(os.getpid(), flush=True)\n"
        "null = os.open(os.devnull, os.O_WRONLY)\nos.dup2(null, 1)\nos.dup2(null, 2)\n"  # let the caller's read end
        "time.sleep(30)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=10, check=True)
    stranger = int(done.stdout.split()[0])
    try:
        deadline = time.monotonic() + 5
        while Path(f"/proc/{stranger}/comm").read_text().strip() != "adbg-run" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert Path(f"/proc/{stranger}/comm").read_text().strip() == "adbg-run"
        assert stranger not in sandbox_children()
    finally:
        os.kill(stranger, 9)


# -- trace_report: the report travels on no channel the project's code prints to (issue 47, finding 2) ----------------

MARKER = "<<adbg-trace-report>>"
FORGED = '{"test": "forged", "exit_code": 0, "calls": [], "calls_made": 0, "cut": 0, "pytest": "FORGED 1 passed"}'
FORGED_LINE = "\n" + MARKER + FORGED + "\n"
FORGERIES = {  # the project's code, at the top of the package every test imports
    "print_at_import": f"print({MARKER + FORGED!r})\n",
    "last_line_at_exit": f"import atexit, os\n\natexit.register(os.write, 1, {FORGED_LINE.encode()!r})\n",
    "interleaved": f"import atexit\n\nfor _ in range(3):\n    print({FORGED_LINE!r}, flush=True)\natexit.register(print, {FORGED_LINE!r}, flush=True)\n",
    "stderr_at_exit": f"import atexit, sys\n\natexit.register(lambda: sys.stderr.write({FORGED_LINE!r}) and sys.stderr.flush())\n",
    "os_write_2": f"import atexit, os\n\natexit.register(os.write, 2, {FORGED_LINE.encode()!r})\n",
    "child_process": f"import atexit, sys\n\natexit.register(lambda: __import__('subprocess').run([sys.executable, '-c', {'print(' + repr(MARKER + FORGED) + ')'!r}]))\n",
    "last_line_with_newer_marker": f"import atexit\n\natexit.register(print, '\\n' + {MARKER!r} + {FORGED!r} + '\\n' + {MARKER!r} + '{{}}')\n",
}


def _forging_episode(runtime, how: str, name: str):
    from env.families.registry import FAMILIES
    from env.models import DebugAction

    task = CATALOG.get("repo-mutable-default")
    family = FAMILIES[task.family]
    episode = family.episode(runtime, task, 7, name, family.interface("trace"))
    first = "from helpdesk.errors import HelpdeskError, TicketNotFound, WorkflowError\n"
    edited = episode.step(DebugAction(action_type="replace_text", path="helpdesk/__init__.py", old_text=first, new_text=FORGERIES[how] + first))
    assert edited.error is None, edited.error
    return task, episode


@pytest.mark.parametrize("how", list(FORGERIES))
def test_a_forged_trace_report_printed_by_the_project_is_never_parsed(runtime, how):
    """Printed at import or at exit, as the last line or between others, on stdout, on stderr, with os.write or from a
    child process: the report is the real one (its outcome from the trusted run, its calls from the record pipe)."""
    from env.models import DebugAction

    task, episode = _forging_episode(runtime, how, f"forge-{how}")
    try:
        obs = episode.step(DebugAction(action_type="trace_report", test=task.fail_to_pass[0]))
    finally:
        episode.close()
    assert obs.error is None, obs.error
    report = obs.tool_result["report"]
    assert report["test"] == task.fail_to_pass[0] and report["exit_code"] == 1
    assert report["calls"] and report["calls_made"] >= len(report["calls"])
    assert report["pytest"].startswith(f"{task.fail_to_pass[0]} FAILED\n")
    seen = obs.tool_output + json.dumps(obs.tool_result)
    assert "FORGED" not in seen and "forged" not in seen and MARKER not in seen
    assert obs.reward == 0.0 and not obs.done


def test_a_forged_trace_report_pays_nothing_and_moves_no_grade(runtime):
    from env.models import DebugAction

    graded = []
    for traced in (True, False):
        task, episode = _forging_episode(runtime, "last_line_at_exit", f"forge-grade-{traced}")
        try:
            if traced:
                assert episode.step(DebugAction(action_type="trace_report", test=task.fail_to_pass[0])).reward == 0.0
            final = episode.step(DebugAction(action_type="submit"))
            assert final.done
            graded.append((final.tests_passed, final.grader_score))
        finally:
            episode.close()
    assert graded[0] == graded[1] and graded[0][1] is not None and graded[0][1] < 0.5


# What the traced process writes on the record pipe itself is its own data (as the values its code computes are): it
# never sets the outcome or the failure, and a record that is not the tracer's shape, or names no project file, is refused.
RECORD_WRITES = {
    "appended_record": ("import os\nos.write(3, b'{\"calls\": [], \"calls_made\": 0, \"cut\": 0}')\n",
                        "trace_report: the traced run failed (exit status 0): its call record is not valid"),
    "record_then_exit": ("import os, sys\nif sys.gettrace() is not None:\n    os.write(3, " + repr(json.dumps({"calls": [{
        "id": 1, "function": "f", "path": "/etc/passwd", "line": 1, "thread": "t", "caller": None, "args": {}}], "calls_made": 1, "cut": 0}).encode())
        + ")\n    os._exit(0)\n", "trace_report: the traced run failed (exit status 0): its call record names 1 path(s) that are not project files of the workspace"),
    "free_text_as_a_name": ("import os, sys\nif sys.gettrace() is not None:\n    os.write(3, " + repr(json.dumps({"calls": [{
        "id": 1, "function": "any text at all", "path": "helpdesk/__init__.py", "line": 1, "thread": "t", "caller": None, "args": {}}],
        "calls_made": 1, "cut": 0}).encode()) + ")\n    os._exit(0)\n", "trace_report: the traced run failed (exit status 0): its call record is not valid"),
}  # fmt: skip


@pytest.mark.parametrize("how", list(RECORD_WRITES))
def test_what_the_project_writes_on_the_record_pipe_is_checked_and_never_the_outcome(runtime, how):
    from env.models import DebugAction

    FORGERIES[how], message = RECORD_WRITES[how]
    try:
        task, episode = _forging_episode(runtime, how, f"record-{how}")
    finally:
        del FORGERIES[how]
    try:
        obs = episode.step(DebugAction(action_type="trace_report", test=task.fail_to_pass[0]))
    finally:
        episode.close()
    # the run's output follows (a repository task shows every file), but never as the record
    assert obs.error is not None and obs.error.startswith(message + ": "), obs.error
    assert not obs.done and obs.reward == 0.0


# The finding as the review played it: a procedural task, no file opened, the agent's own conftest.py prints a report
# carrying three unopened files (or a frame of the failing test would quote the defect's line).
PROC_FORGERIES = {
    "print_at_exit": "atexit.register(print, {line!r}, flush=True)",
    "stderr_at_exit": "atexit.register(lambda: sys.stderr.write({line!r}) and sys.stderr.flush())",
    "child_process_at_exit": "atexit.register(lambda: __import__('subprocess').run([sys.executable, '-c', 'import sys; sys.stdout.write(' + repr({line!r}) + ')']))",
    "none": "pass",  # no forgery: the report of a failing test through unopened files
}


@pytest.mark.parametrize("how", list(PROC_FORGERIES))
def test_a_procedural_trace_carries_no_unopened_file_whatever_the_project_prints(runtime, how):
    from env.families.registry import FAMILIES
    from env.models import DebugAction

    task = CATALOG.get("proc-medium-test-0")
    family = FAMILIES[task.family]
    sources = [p for p in sorted(task.files) if p.endswith(".py") and not p.startswith("tests/")][-3:]
    report = {"test": task.fail_to_pass[0], "exit_code": 1, "calls": [], "calls_made": 0, "cut": 0, "pytest": "".join(task.files[p] for p in sources)}
    line = "\n" + MARKER + json.dumps(report) + "\n"
    conftest = "import atexit, sys\n" + PROC_FORGERIES[how].format(line=line) + "\n"
    episode = family.episode(runtime, task, 5, f"proc-forge-{how}", family.interface("trace"))
    try:
        assert episode.step(DebugAction(action_type="create_file", path="conftest.py", content=conftest)).error is None
        obs = episode.step(DebugAction(action_type="trace_report", test=task.fail_to_pass[0]))
    finally:
        episode.close()
    assert obs.error is None and obs.visible_files == {}
    assert obs.tool_result["report"]["calls"] and obs.tool_result["report"]["pytest"].startswith(task.fail_to_pass[0] + " FAILED\n")
    seen = json.dumps(obs.model_dump())
    shown = [(path, text.strip()) for path, content in task.files.items() for text in content.splitlines()
             if len(text.strip()) >= 12 and (text.strip() in seen or json.dumps(text.strip())[1:-1] in seen)]  # fmt: skip
    assert shown == [] and MARKER not in seen


# -- trace_report(race=true): the race check's interleaving as information; never the verdict's scenarios, never pay -----


@pytest.mark.parametrize("code", ["buggy", "gold"])
def test_a_race_report_pays_nothing_and_moves_no_grade(runtime, code):
    """Tracing the race (twice) and then submitting: the same grade, tests and rewards as submitting without it."""
    from env.families.registry import FAMILIES
    from env.models import DebugAction

    task = CATALOG.get("hard")
    family = FAMILIES[task.family]
    source = task.buggy_source if code == "buggy" else task.gold_source
    graded = []
    for traced in (True, False):
        episode = family.episode(runtime, task, 11, f"race-pay-{code}-{traced}", family.interface("trace"))
        try:
            (episode.bench.workspace.root / task.filename).write_text(source, encoding="utf-8")
            if traced:
                for _ in range(2):
                    obs = episode.step(DebugAction(action_type="trace_report", race=True))
                    assert obs.error is None and obs.reward == 0.0 and not obs.done, obs.error
                    assert obs.tool_result["report"]["exit_code"] == (1 if code == "buggy" else 0)
            final = episode.step(DebugAction(action_type="submit", hypothesis="the read and the write of count are two lock acquisitions"))
            graded.append((final.tests_passed, final.reward, final.grader_score, final.done))
        finally:
            episode.close()
    assert graded[0] == graded[1], graded


def test_a_race_report_never_shows_the_verdicts_scenarios(runtime):
    """The report's scenarios come from the secret under their own purpose: what the trace shows of the PCT scenarios
    (the thread counts and operations) is not a preview of the verdict's, for any seed."""
    from env.families.classic.concurrency import describe, explore_plan

    task = CATALOG.get("hard")
    assert task.stress is not None
    for seed in range(1, 6):
        verdict = explore_plan(task.stress, runtime.secret.rng("classic", task.id, seed, "verdict"))
        traced = explore_plan(task.stress, runtime.secret.rng("classic", task.id, seed, "trace"))
        pct = lambda plan: [describe(s) for s in plan["scenarios"] if "priorities" in s]  # noqa: E731
        assert pct(verdict) != pct(traced)


EVASIONS = {
    # past the import policy by name: the tracer goes, and the check sees it go
    "removes_the_tracer": ('        getattr(getattr(threading, "_s" + "ys"), "set" + "trace")(None)\n',
                           "trace_report: the code tried to change how it is traced: the tracer was removed"),
    # the policy's own refusal, before anything runs
    "names_settrace": ("        threading._sys.settrace(None)\n",
                       "trace_report: the race check cannot run this module: line 13: access to attribute 'settrace' is not allowed"),
    # new threads' trace hook only: the check's tracer stays, and the race is reported as it is
    "sets_new_threads_hook": ('        getattr(threading, "set" + "trace")(None)\n', None),
}


@pytest.mark.parametrize("how", list(EVASIONS))
def test_a_module_that_changes_its_own_tracing_gets_no_report_of_a_run_the_check_did_not_see(runtime, how):
    from env.families.registry import FAMILIES
    from env.models import DebugAction

    task = CATALOG.get("hard")
    family = FAMILIES[task.family]
    body, error = EVASIONS[how]
    evasive = task.buggy_source.replace("    def increment(self):\n", "    def increment(self):\n" + body)
    assert evasive != task.buggy_source
    episode = family.episode(runtime, task, 3, f"race-evasive-{how}", family.interface("trace"))
    try:
        (episode.bench.workspace.root / task.filename).write_text(evasive, encoding="utf-8")
        obs = episode.step(DebugAction(action_type="trace_report", race=True))
    finally:
        episode.close()
    assert obs.error == error and obs.reward == 0.0
    if error is None:
        assert obs.tool_result["report"]["exit_code"] == 1 and obs.tool_result["report"]["race"]["conflicts"]


# -- filling the host through a workspace (issue 47, finding 6) ------------------------------------------------------
# One run_bash wrote 480 MiB to the host's /dev/shm in 0.5 s: each file was capped (RLIMIT_FSIZE), their number was
# not. Each command below passes the episode's workspace quota (here 4 MiB and 200 files) its own way, over HTTP.

SHELL_FILLS = {
    "many_8mib_files": "for i in $(seq 60); do head -c 8M /dev/zero > fill$i; done",
    "many_empty_files": 'python -c \'for i in range(50000): open("e%d" % i, "w").close()\'',
    "wide_directories": "mkdir $(printf 'dir%d ' $(seq 500))",
    "deep_directories": "mkdir -p $(printf 'd/%.0s' $(seq 300))",
    "sparse_files": "truncate -s 8M s1 s2",
    "temporary_directory": 'for i in $(seq 8); do head -c 8M /dev/zero > "$TMPDIR/t$i"; done',
    "home_directory": 'head -c 8M /dev/zero > "$HOME/h1"; head -c 8M /dev/zero > ~/h2',
    "git_objects": "for i in $(seq 300); do echo $i | git hash-object -w --stdin; done > /dev/null",
    "python_threads": (
        'python -c \'import threading\ndef w(n):\n    for i in range(100):\n        open("t%d_%d" % (n, i), "wb").write(bytes(1 << 20))\n'
        "ts = [threading.Thread(target=w, args=(n,)) for n in range(8)]\n[t.start() for t in ts]\n[t.join() for t in ts]'"
    ),
    "background_after_the_foreground": "(for i in $(seq 100); do head -c 1M /dev/zero > bg$i; done) & echo started; sleep 1",
    "setsid_daemon": "setsid bash -c 'for i in $(seq 5000); do : > daemon$i; done' & sleep 1",
}
QUOTA_ERROR = (
    "run_bash: the command filled the workspace's quota of 4194304 bytes (SANDBOX_WORKSPACE_BYTES) and 200 files and "
    "directories (SANDBOX_WORKSPACE_FILES), its temporary directory counted with it (it reached "
)
UNDONE = "), so its changes were undone: the workspace is as it was before the command"
LOOK = "git status --short --untracked-files=all; find . -path ./.git -prune -o -print | wc -l; du -sk --apparent-size . | cut -f1"


@pytest.fixture(params=["tmpfs", "server count"])
def quota_client(request, runtime, client, monkeypatch):
    from env.sandbox.isolation import LayerState
    from env.sandbox.limits import WorkspaceQuota
    from env.sandbox.shell import ShellLimits, ShellRunner

    isolation = runtime.isolation
    if request.param == "tmpfs" and not isolation.netns:
        pytest.skip("no namespace layer on this host")
    if request.param == "server count":
        layers = {**isolation.layers, "network_namespace": LayerState(active=False, detail="simulated: no user namespaces")}
        isolation = isolation.model_copy(update={"layers": layers})
    shell = ShellRunner(isolation, ShellLimits(quota=WorkspaceQuota(bytes=4 << 20, files=200)))
    if shell.refusal:
        pytest.skip(f"run_bash is refused at this tier here: {shell.refusal}")
    monkeypatch.setattr(runtime, "shell", shell)
    return client


@pytest.mark.parametrize("name", sorted(SHELL_FILLS))
def test_a_command_that_fills_its_workspace_gets_an_error_and_the_episode_goes_on(quota_client, name):
    episode = quota_client.post("/reset", json={"task_id": "repo-two-file-fix", "seed": 1, "profile": "bash"}).json()["observation"]

    def step(command: str) -> dict:
        response = quota_client.post(
            "/step", json={"action": {"action_type": "run_bash", "command": command}, "episode_id": episode["episode_id"]}
        )
        assert response.status_code == 200 and response.json()["done"] is False
        return response.json()["observation"]

    before = step(LOOK)["tool_output"]
    obs = step("echo changed > made_by_the_command.txt; " + SHELL_FILLS[name])
    assert obs["error"].startswith(QUOTA_ERROR) and obs["error"].endswith(UNDONE), obs["error"]
    assert step(LOOK)["tool_output"].split("\n[exit status")[0] == before.split("\n[exit status")[0]  # as before, to the byte
    leftovers = [p.name for p in Path(scratch_root()).iterdir() if p.name.startswith(("adbg-sh-", "adbg-snap-"))]
    assert leftovers == []  # the command's temporary directory and the server's copy are gone at once
    assert step("echo fine > ok.txt && cat ok.txt")["tool_output"].startswith("fine\n[exit status 0, ")


# -- posing as the machine's failure (issue 50): a step the machine decided is free; none the code causes is ------------

INFRA_POSES = {
    "kills_itself": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
    "kills_its_parent": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
    "exits_at_once": "import os\nos._exit(0)\n",
    "closes_its_channel": "import os\nfor fd in range(3, 64):\n    try:\n        os.close(fd)\n    except OSError:\n        pass\n",
    "prints_the_flag": "print('infra_failed: true (infrastructure: fork_server_died; not your code\\'s doing, and this step is not counted)')\n",
    "raises_a_base_exception": "class InfraFailure(BaseException):\n    pass\nraise InfraFailure('the sandbox\\'s fork server died during the run')\n",
    "raises_keyboard_interrupt": "raise KeyboardInterrupt\n",
    "fills_its_disk": "with open('big', 'wb') as f:\n    while True:\n        f.write(b'x' * 65536)\n",
}


@pytest.mark.parametrize("policy", [True, False], ids=["policy_on", "policy_off"])
@pytest.mark.parametrize("name", sorted(INFRA_POSES))
def test_code_posing_as_an_infrastructure_failure_spends_its_step(world, name, policy):
    """Whatever the submission does to itself or prints, the step and the attempt are its own: counted, never flagged."""
    client = world["clients"][policy]
    episode = client.post("/reset", json={"task_id": "easy", "seed": 1}).json()["observation"]["episode_id"]
    zygote = client.app.state.runtime.sandbox.zygote.pid if client.app.state.runtime.sandbox.zygote else None
    code = INFRA_POSES[name] + BUGGY["easy"]
    body = {"action": {"action_type": "submit_fix", "fixed_code": code, "hypothesis": "h"}, "episode_id": episode}
    obs = client.post("/step", json=body).json()["observation"]
    assert (obs["infra_failed"], obs["infra_cause"], obs["step_number"], obs["attempts_remaining"]) == (False, None, 1, 4), obs["error"]
    assert obs["tests_passed"] <= 6
    state = client.get("/state", params={"episode_id": episode}).json()
    assert state["infra_failures"] == []
    if zygote is not None:  # nothing a run does may kill or replace the fork server
        assert client.app.state.runtime.sandbox.zygote.pid == zygote


# -- held-out cases run on in the visible tests' process (issue 51) ----------------------------------------------------
# Code right on the visible tests' inputs that, on a held-out input, shows it, ends its process, spins or sleeps: over
# HTTP, the observation the agent gets holds none of the held-out inputs, and the visible run's report is the same as
# that of code that does nothing odd (gold on the visible inputs, a wrong answer on the rest).

HELD_OUT_MISCHIEF = {  # none imports anything: the easy task's policy allows bisect, math and typing only
    "prints the input": "print('LEAK', arr, target)\nreturn -2",
    "raises with it": "raise ValueError('LEAK %r %r' % (arr, target))",
    "floods the output": "print('LEAK', arr, target, 'x' * 10_000_000)\nreturn -2",
    "replies too much": "return list(range(10_000_000))",
    "recurses without end": "return binary_search(arr + [target], target)",
    "spins": "while True:\n    pass",
    "answers wrong, quietly": "return -2",  # the baseline the others are compared with
}


def _held_out_inputs(seed: int) -> list[tuple[list[int], int]]:
    from tests.conftest import TEST_SECRET
    from tests.test_held_out_joined import EASY, _Log

    log = _Log()
    for _, case in EASY.held_out_cases(TEST_SECRET.rng("classic", "easy", seed, "held-out")):
        case(log)
    return [(list(arr), target) for arr, target in log.calls]


@pytest.mark.parametrize("name", sorted(HELD_OUT_MISCHIEF))
def test_nothing_a_submission_does_on_a_held_out_input_reaches_the_observation(client, name):
    from tests.test_held_out_joined import _spy

    def submitted(mischief: str) -> dict:
        episode = client.post("/reset", json={"task_id": "easy", "seed": 11}).json()["observation"]["episode_id"]
        action = {"action_type": "submit_fix", "fixed_code": _spy(mischief), "hypothesis": "off-by-one in the loop"}
        return client.post("/step", json={"action": action, "episode_id": episode}).json()["observation"]

    seen, quiet = submitted(HELD_OUT_MISCHIEF[name]), submitted(HELD_OUT_MISCHIEF["answers wrong, quietly"])
    text = json.dumps(seen)
    assert "LEAK" not in seen["current_error_output"]  # (the observation shows the submitted code, which says LEAK)
    for arr, target in _held_out_inputs(11):
        assert f"{arr}, {target}" not in text and f"{arr} {target}" not in text, (arr, target)
    assert (seen["tests_passed"], seen["error"]) == (8, quiet["error"]) == (8, None)
    assert seen["current_error_output"] == quiet["current_error_output"]  # every held-out case failed, and that is all it says
    assert seen["current_error_output"].endswith("13 held-out tests failed")
