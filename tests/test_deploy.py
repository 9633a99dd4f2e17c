"""Replicas behind HAProxy (deploy/): the compose file, the balancer's configuration, and both run for real.

- ``deploy/compose.yaml`` is valid against the Compose Specification's JSON schema (read at test time from the
  ``docker-compose==1.29.2`` wheel on PyPI, cached in ENV_SDIST_CACHE; no Docker engine runs here) and agrees with
  ``deploy/haproxy/haproxy.cfg``: the same replica names, addresses and ports, one shared ENV_SECRET never written
  in the file.
- ``haproxy -c`` accepts the configuration.
- The routing rules, against stand-in replicas (threads in this process that answer with their name): a request
  naming an episode (body, query or cookie) reaches the replica its tag names; new episodes and unknown tags are
  balanced; a draining replica (``/health`` 503) keeps its episodes and takes no new ones; a dead replica's episodes
  reach a live one, never a 502 or 503 from the balancer.
- Two real replicas (``python -m env.server``) and HAProxy on loopback: WebSocket sessions and HTTP episodes
  through the balancer, HTTP episodes reaching their replica, and one replica killed.

HAProxy is Debian's package (2.6): ``make haproxy`` installs it (``make test`` does); without it and unable to
install it, the tests that run it fail and say so.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml

from env.authoring.sdist import sdist_cache

ROOT = Path(__file__).resolve().parents[1]
CFG = ROOT / "deploy" / "haproxy" / "haproxy.cfg"
COMPOSE = ROOT / "deploy" / "compose.yaml"
COMPOSE_PIN = "docker-compose==1.29.2"  # its wheel ships the Compose Specification's schema
SPEC_MEMBER = "compose/config/compose_spec.json"
REPLICA_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")  # ENV_REPLICA's spelling
TEST_SECRET = "the deploy test's own secret, shared by its two replicas"
DETECT_S = 3.0  # a replica killed or draining takes no new session after this long


# ---------------------------------------------------------------------------------------------------------------
# helpers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check: Callable[[], Any], timeout_s: float, every_s: float = 0.1) -> Any:
    """``check()`` once it is truthy; a failure naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            found = check()
        except (httpx.HTTPError, OSError):
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout_s:g} s")
        time.sleep(every_s)


class Balancer:
    """HAProxy with deploy/haproxy/haproxy.cfg, placed by its environment variables, on free loopback ports."""

    def __init__(self, binary: str, servers: dict[str, str], log_dir: Path) -> None:
        self.port, self.stats_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.stats_url = f"http://127.0.0.1:{self.stats_port}"
        self.env = {
            **os.environ,
            **cfg_env(f"127.0.0.1:{self.port}", servers),
            "ADBG_STATS_BIND": f"127.0.0.1:{self.stats_port}",
            "ADBG_LOG_LEVEL": "info",
        }
        self.log_path = log_dir / "haproxy.log"
        self.proc = spawn([binary, "-f", str(CFG)], self.env, self.log_path)
        self.servers = list(servers)

    def states(self) -> dict[str, str]:
        """Each server's state as HAProxy sees it (UP, DOWN, NOLB...), from its Prometheus exporter."""
        text = httpx.get(f"{self.stats_url}/metrics", timeout=2).text
        found = re.findall(r'^haproxy_server_status\{proxy="replicas",server="([^"]+)",state="([A-Z]+)"\} 1$', text, re.M)
        return dict(found)

    def wait_until(self, wanted: dict[str, str], timeout_s: float) -> float:
        """Seconds until every named server is in the wanted state."""
        start = time.monotonic()

        def reached() -> bool:
            if self.proc.poll() is not None:
                pytest.fail(f"haproxy exited with {self.proc.returncode}:\n{self.log()}")
            return all(self.states().get(k) == v for k, v in wanted.items())

        wait_for(f"HAProxy to see {wanted} (log: {self.log_path})", reached, timeout_s)
        return time.monotonic() - start

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        stop_group(self.proc)


def spawn(command: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    """A process of this test's own, in a process group of its own (so that stop_group ends all of it)."""
    with open(log_path, "wb") as log:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )


def stop_group(proc: subprocess.Popen[Any]) -> None:
    """Ends a process this test started and its process group. The leader is reaped last: until then its id cannot
    be reused, so the signals reach this test's own processes only."""
    if proc.returncode is not None:
        return  # reaped already: its id may be someone else's by now
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        time.sleep(0.05)
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # what is left of the group (a replica's sandbox children)
    except ProcessLookupError:
        pass
    proc.wait(timeout=10)


def cfg_env(bind: str, servers: dict[str, str]) -> dict[str, str]:
    return {"ADBG_BIND": bind, **{f"ADBG_{name.upper()}": address for name, address in servers.items()}}


def cfg_servers() -> dict[str, str]:
    """The servers of haproxy.cfg's backend: name -> the variable holding its address."""
    backend = re.search(r"^backend replicas\n(.*?)(?=^\S|\Z)", CFG.read_text(), re.M | re.S)
    assert backend, "haproxy.cfg has no `backend replicas`"
    return dict(re.findall(r'^\s+server\s+(\S+)\s+"\$\{(\w+)\}"', backend.group(1), re.M))


def cfg_required_variables() -> set[str]:
    """The variables haproxy.cfg uses without a default: whoever starts it must set them."""
    text = "\n".join(line.split("#", 1)[0] for line in CFG.read_text().splitlines())
    return set(re.findall(r"\$\{(\w+)\}", text))


# ---------------------------------------------------------------------------------------------------------------
# the files


def compose_spec() -> dict[str, Any]:
    """The Compose Specification's JSON schema, from the docker-compose 1.29.2 wheel (or sdist) on PyPI, cached."""
    cache = sdist_cache()
    spec = cache / "compose-spec" / f"{COMPOSE_PIN.replace('==', '-')}-compose_spec.json"
    if spec.is_file():
        return json.loads(spec.read_text())
    downloads = cache / "compose-spec" / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)

    def archives() -> list[Path]:
        return sorted(p for p in downloads.iterdir() if p.name.lower().startswith("docker") and "1.29.2" in p.name)

    if not archives():
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            COMPOSE_PIN,
            "-d",
            str(downloads),
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
            said = [line for line in (done.stderr or done.stdout).splitlines() if "WARNING" not in line][-5:]
        except subprocess.TimeoutExpired:
            said = ["pip download took more than 300 s"]
        if not archives():
            pytest.fail(
                f"the Compose Specification's JSON schema ({SPEC_MEMBER} in {COMPOSE_PIN}) is missing: "
                f"`pip download {COMPOSE_PIN}` into {downloads} failed (is PyPI reachable?): {' '.join(said)}"
            )
    archive = archives()[0]
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as zipped:
            names = [n for n in zipped.namelist() if n.endswith(SPEC_MEMBER)]
            data = zipped.read(names[0]) if names else None
    else:
        with tarfile.open(archive) as tarred:
            members = [m for m in tarred.getmembers() if m.name.endswith(SPEC_MEMBER)]
            extracted = tarred.extractfile(members[0]) if members else None
            data = extracted.read() if extracted else None
    if data is None:
        pytest.fail(f"{archive} has no {SPEC_MEMBER}: the Compose Specification's JSON schema is missing")
    fd, partial = tempfile.mkstemp(dir=spec.parent, suffix=".partial")
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(partial, spec)  # complete or absent
    return json.loads(data)


def load_compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def replica_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: s for name, s in compose["services"].items() if "ENV_REPLICA" in (s.get("environment") or {})}


def test_compose_file_is_valid_against_the_compose_specification():
    schema = compose_spec()
    validator = jsonschema.Draft201909Validator(schema)  # its $schema names draft 2019-09
    errors = sorted(validator.iter_errors(load_compose()), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors)
    broken = load_compose()
    broken["services"]["r1"]["envirnoment"] = {}  # the schema does catch a misspelt key
    assert any("envirnoment" in e.message for e in validator.iter_errors(broken))


def test_compose_and_the_balancer_name_the_same_replicas():
    compose, servers = load_compose(), cfg_servers()
    replicas = replica_services(compose)
    assert len(replicas) >= 2 and set(replicas) == set(servers), (set(replicas), servers)
    balancer = next(s for s in compose["services"].values() if str(s.get("image", "")).startswith("haproxy:2.6"))
    benv = balancer["environment"]
    mounts = {(COMPOSE.parent / v.split(":")[0]).resolve(): v.split(":")[1] for v in balancer["volumes"]}
    assert mounts.get(CFG) == "/usr/local/etc/haproxy/haproxy.cfg", mounts  # this very file, where the image reads it
    assert cfg_required_variables() <= set(benv), f"the balancer's service leaves unset: {cfg_required_variables() - set(benv)}"
    secrets = set()
    for name, service in replicas.items():
        env = service["environment"]
        assert REPLICA_NAME.match(name) and env["ENV_REPLICA"] == name  # the server named as its replica
        assert benv[servers[name]] == f"{name}:{env['PORT']}"  # the balancer reaches it where it listens
        assert str(env["PORT"]) in [str(p) for p in service.get("expose", [])]
        assert "/health" in " ".join(service["healthcheck"]["test"])
        assert (COMPOSE.parent / service["build"]["context"]).resolve() == ROOT and service["build"]["dockerfile"] == "Dockerfile"
        assert balancer["depends_on"][name]  # compose starts every replica with the balancer
        secret = str(env["ENV_SECRET"])
        assert re.fullmatch(r"\$\{ENV_SECRET(:?\?[^}]*)?\}", secret), f"{name}: ENV_SECRET must come from the environment, not {secret!r}"
        secrets.add(secret)
    assert len(secrets) == 1  # one secret, the same episode on every replica
    bind_port = benv["ADBG_BIND"].rsplit(":", 1)[1]
    assert any(str(p).split(":")[-1] == bind_port and str(p).count(":") == 1 for p in balancer["ports"]), balancer["ports"]
    assert "ENV_SECRET" not in json.dumps(balancer)  # the balancer never sees it


def test_haproxy_accepts_the_configuration(haproxy: str):
    env = {**os.environ, **cfg_env("127.0.0.1:18000", {"r1": "127.0.0.1:18001", "r2": "127.0.0.1:18002"})}
    done = subprocess.run([haproxy, "-c", "-f", str(CFG)], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "Configuration file is valid" in done.stdout, done.stdout + done.stderr
    del env["ADBG_R1"]  # the file is placed by its variables: one missing is an error, not a default
    assert subprocess.run([haproxy, "-c", "-f", str(CFG)], env=env, capture_output=True, timeout=30).returncode != 0


# ---------------------------------------------------------------------------------------------------------------
# the routing rules, with stand-in replicas


class StandIn:
    """A stand-in replica: every request answers with its name, ``GET /health`` 200 or, draining, 503. Dying, it
    still passes its health checks but closes every other connection without an answer, as a process killed while
    it holds a request (deterministic: no health check races the test)."""

    def __init__(self, name: str, host: str = "127.0.0.1", port: int = 0) -> None:
        self.name, self.draining, self.dying = name, False, False
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.answer()

            def do_POST(self) -> None:
                self.answer()

            def answer(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                if stand_in.dying and self.path != "/health":
                    self.close_connection = True
                    return
                status = 503 if self.path == "/health" and stand_in.draining else 200
                body = json.dumps({"replica": stand_in.name}).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except ConnectionError:  # a health check reads the status line and hangs up
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.address = f"{host}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop(self) -> None:
        """As a killed replica: its port refuses connections."""
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def stand_ins(haproxy: str, tmp_path: Path) -> Iterator[tuple[Balancer, dict[str, StandIn]]]:
    replicas = {name: StandIn(name) for name in cfg_servers()}
    balancer = Balancer(haproxy, {name: r.address for name, r in replicas.items()}, tmp_path)
    try:
        balancer.wait_until(dict.fromkeys(replicas, "UP"), 10)
        yield balancer, replicas
    finally:
        balancer.stop()
        for r in replicas.values():
            if r.server.socket.fileno() != -1:
                r.stop()


def served_by(response: httpx.Response) -> str:
    assert response.status_code == 200, f"the balancer answered {response.status_code}: {response.text[:300]}"
    return response.json()["replica"]


def step(url: str, episode_id: str | None = None, cookie: str | None = None, action: dict[str, Any] | None = None) -> httpx.Response:
    body: dict[str, Any] = {"action": action or {"action_type": "give_up"}}
    if episode_id is not None:
        body["episode_id"] = episode_id
    return httpx.post(f"{url}/step", json=body, cookies={"adbg_episode": cookie} if cookie else None, timeout=30)


def test_a_request_naming_an_episode_reaches_the_replica_its_tag_names(stand_ins):
    balancer, _ = stand_ins
    url = balancer.url
    big = {"action_type": "submit_fix", "fixed_code": "x = 1\n" * 100_000}  # 600 kB: the episode_id comes after it
    for name in ("r1", "r2", "r1", "r2", "r2", "r1"):  # leastconn alternates: a request not routed would land wrong
        episode = f"{name}.6f1c2b7e-0000-4000-8000-000000000000"
        assert served_by(step(url, episode)) == name  # the body's episode_id
        assert served_by(httpx.get(f"{url}/state", params={"episode_id": episode})) == name  # ?episode_id=
        assert served_by(step(url, cookie=episode)) == name  # the adbg_episode cookie
        assert served_by(httpx.get(f"{url}/state", cookies={"adbg_episode": episode})) == name
        other = "r2" if name == "r1" else "r1"
        assert served_by(step(url, episode, cookie=f"{other}.77ab")) == name  # the body before the cookie, as the server
        assert served_by(step(url, episode, action=big)) == name
    assert "{r1}" in balancer.log() and "{r2}" in balancer.log()  # the log names the replica a request named


def test_new_episodes_and_unknown_tags_are_balanced_over_the_live_replicas(stand_ins):
    balancer, replicas = stand_ins
    url = balancer.url
    cookie = {"adbg_episode": "r1.6f1c"}
    upgrade = {
        "connection": "upgrade",
        "upgrade": "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    }
    kinds: dict[str, Callable[[], httpx.Response]] = {
        "POST /reset with an episode's cookie": lambda: httpx.post(f"{url}/reset", json={"task_id": "easy"}, cookies=cookie),
        "WebSocket /ws with an episode's cookie": lambda: httpx.get(f"{url}/ws", headers=upgrade, cookies=cookie),
        "an unknown replica's tag": lambda: step(url, "r9.6f1c"),
        "an id with no tag": lambda: step(url, "6f1c2b7e"),
        "a tag that is not a replica name": lambda: step(url, "R1..6f1c"),
        "no episode": lambda: step(url),
        "GET /health": lambda: httpx.get(f"{url}/health"),
    }
    for what, request in kinds.items():
        seen = {served_by(request()) for _ in range(4)}
        assert seen == set(replicas), f"{what}: served by {seen} only"


def test_a_draining_replica_keeps_its_episodes_and_takes_no_new_ones(stand_ins):
    balancer, replicas = stand_ins
    replicas["r1"].draining = True  # GET /health answers 503, as after SIGTERM
    took = balancer.wait_until({"r1": "NOLB", "r2": "UP"}, DETECT_S)
    for _ in range(4):
        assert served_by(httpx.post(f"{balancer.url}/reset", json={"task_id": "easy"})) == "r2"
        assert served_by(step(balancer.url)) == "r2"
        assert served_by(step(balancer.url, "r1.6f1c")) == "r1"  # its open episodes still reach it
        assert served_by(step(balancer.url, cookie="r1.6f1c")) == "r1"
    replicas["r1"].draining = False
    balancer.wait_until({"r1": "UP"}, DETECT_S)
    assert took < DETECT_S


def test_a_dead_replicas_episodes_reach_a_live_one_never_a_balancer_error(stand_ins):
    balancer, replicas = stand_ins
    replicas["r2"].dying = True  # closes the requests it holds without an answer; its health checks still pass
    for _ in range(2):
        assert served_by(step(balancer.url, "r2.6f1c")) == "r1"  # retried, then sent to the live replica
        assert served_by(step(balancer.url, cookie="r2.6f1c")) == "r1"
        assert served_by(httpx.post(f"{balancer.url}/reset", json={"task_id": "easy"})) == "r1"
    replicas["r2"].stop()  # killed: its port refuses connections
    start = time.monotonic()
    assert served_by(step(balancer.url, "r2.6f1c")) == "r1"
    assert served_by(httpx.get(f"{balancer.url}/state", params={"episode_id": "r2.6f1c"})) == "r1"
    balancer.wait_until({"r2": "DOWN"}, DETECT_S)
    assert time.monotonic() - start < DETECT_S
    for _ in range(4):
        assert served_by(step(balancer.url, cookie="r2.6f1c")) == "r1"
        assert served_by(httpx.post(f"{balancer.url}/reset", json={"task_id": "easy"})) == "r1"


# ---------------------------------------------------------------------------------------------------------------
# two real replicas and HAProxy on loopback


class Cluster:
    def __init__(self, balancer: Balancer, replicas: dict[str, subprocess.Popen[bytes]], ports: dict[str, int], log_dir: Path) -> None:
        self.balancer, self.replicas, self.ports, self.log_dir = balancer, replicas, ports, log_dir

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(self.log_dir.glob("*.log")))


def start_replica(name: str, port: int, log_dir: Path) -> subprocess.Popen[bytes]:
    env = {"HOST": "127.0.0.1", "PORT": str(port), "ENV_REPLICA": name, "ENV_SECRET": TEST_SECRET, "ENV_DRAIN_SECONDS": "2"}
    return spawn([sys.executable, "-m", "env.server"], {**os.environ, **env, "PYTHONUNBUFFERED": "1"}, log_dir / f"{name}.log")


@pytest.fixture(scope="module")
def cluster(haproxy: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    log_dir = tmp_path_factory.mktemp("deploy")
    ports = {name: free_port() for name in cfg_servers()}
    replicas = {name: start_replica(name, port, log_dir) for name, port in ports.items()}
    balancer: Balancer | None = None
    try:
        for name, port in ports.items():

            def healthy(name: str = name, port: int = port) -> bool:
                if replicas[name].poll() is not None:
                    pytest.fail(f"replica {name} exited with {replicas[name].returncode}: {(log_dir / f'{name}.log').read_text()[-2000:]}")
                return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200

            wait_for(f"replica {name} to answer /health", healthy, 120, every_s=0.2)
        balancer = Balancer(haproxy, {name: f"127.0.0.1:{port}" for name, port in ports.items()}, log_dir)
        balancer.wait_until(dict.fromkeys(ports, "UP"), 10)
        yield Cluster(balancer, replicas, ports, log_dir)
    finally:
        if balancer is not None:
            balancer.stop()
        for proc in replicas.values():
            stop_group(proc)


def reset_http(url: str, seed: int = 1) -> str:
    """A new HTTP episode through the balancer (no cookie kept): its episode_id."""
    response = httpx.post(f"{url}/reset", json={"task_id": "easy", "seed": seed}, timeout=60)
    assert response.status_code == 200, response.text[:500]
    episode_id = response.json()["observation"]["episode_id"]
    assert isinstance(episode_id, str) and episode_id
    assert response.cookies.get("adbg_episode") == episode_id
    return episode_id


def tagged_episodes(url: str) -> dict[str, str]:
    """One HTTP episode started on each replica: {replica: episode_id}."""
    found: dict[str, str] = {}
    for seed in range(12):
        episode_id = reset_http(url, seed)
        tag = episode_id.partition(".")[0]
        assert tag in cfg_servers(), f"/reset through the balancer gave {episode_id!r}, which names no replica"
        found.setdefault(tag, episode_id)
        if len(found) == len(cfg_servers()):
            return found
    pytest.fail(f"12 resets through the balancer reached only {sorted(found)}")


def test_health_through_the_balancer(cluster: Cluster):
    response = httpx.get(f"{cluster.balancer.url}/health", timeout=10)
    assert response.status_code == 200 and response.json()["status"] == "healthy", f"{response.text[:500]}\n{cluster.logs()}"
    fingerprints = {
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).json()["secret_fingerprint"] for port in cluster.ports.values()
    }
    assert len(fingerprints) == 1  # one ENV_SECRET on every replica


def test_websocket_sessions_through_the_balancer(cluster: Cluster):
    from openenv.core.generic_client import GenericEnvClient

    def session(seed: int) -> tuple[bool, str | None, str]:
        with GenericEnvClient(base_url=cluster.balancer.url) as client:
            first = client.reset(task_id="easy", seed=seed)
            assert first.observation["error"] is None and not first.done
            hold.wait(timeout=30)  # all 8 open at once: leastconn spreads them over both replicas
            last = client.step({"action_type": "give_up", "final_diagnosis": "the deploy test gives up"})
            return last.done, last.observation["error"], str(first.observation.get("episode_id") or "")

    hold = threading.Barrier(8)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(session, range(8)))
    assert all(done and error is None for done, error, _ in results), results
    tags = {episode_id.partition(".")[0] for _, _, episode_id in results}
    if tags <= set(cfg_servers()):  # ids carry their replica: the sessions were spread
        assert tags == set(cfg_servers()), tags


def test_an_http_episode_through_the_balancer(cluster: Cluster):
    episode_id = reset_http(cluster.balancer.url)
    response = step(cluster.balancer.url, episode_id, action={"action_type": "give_up", "final_diagnosis": "no"})
    assert response.status_code == 200
    observation = response.json()["observation"]
    assert observation["error"] is None and response.json()["done"] is True


def test_http_episodes_reach_their_replica(cluster: Cluster):
    url = cluster.balancer.url
    query = {"action_type": "query_context", "query_type": "function_signature", "query_target": "binary_search"}
    for replica, episode_id in tagged_episodes(url).items():
        for n in range(1, 4):  # leastconn alternates: every request reaching the other replica would fail
            by_body = step(url, episode_id, action=query)
            assert by_body.status_code == 200 and by_body.json()["observation"]["error"] is None, (replica, by_body.text[:300])
            by_query = httpx.get(f"{url}/state", params={"episode_id": episode_id}, timeout=30)
            assert by_query.status_code == 200 and by_query.json()["episode_id"] == episode_id, by_query.text[:300]
            by_cookie = httpx.get(f"{url}/state", cookies={"adbg_episode": episode_id}, timeout=30)
            assert by_cookie.status_code == 200 and by_cookie.json()["step_count"] == n, by_cookie.text[:300]
    assert "{r1}" in cluster.balancer.log() and "{r2}" in cluster.balancer.log()


def test_a_killed_replicas_episodes_get_a_clear_error_and_new_ones_land_on_the_survivor(cluster: Cluster):
    """Last in this module: it kills r2."""
    url = cluster.balancer.url
    episodes = tagged_episodes(url)
    victim = cluster.replicas["r2"]
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait(timeout=10)
    start = time.monotonic()
    lost = step(url, episodes["r2"])
    assert lost.status_code == 200, f"the balancer answered {lost.status_code}: {lost.text[:300]}\n{cluster.logs()}"
    error = lost.json()["observation"]["error"] or ""
    assert episodes["r2"] in error, error  # names the episode, never serves another one
    state = httpx.get(f"{url}/state", params={"episode_id": episodes["r2"]}, timeout=30)
    assert state.status_code in (200, 404) and episodes["r2"] in state.text, state.text[:300]
    cluster.balancer.wait_until({"r2": "DOWN"}, DETECT_S)
    assert time.monotonic() - start < DETECT_S
    assert httpx.get(f"{url}/health", timeout=10).status_code == 200
    alive = step(url, episodes["r1"], action={"action_type": "give_up"})
    assert alive.status_code == 200 and alive.json()["observation"]["error"] is None
    assert {reset_http(url, seed).partition(".")[0] for seed in range(4)} == {"r1"}
