"""Kubernetes (deploy/k8s/): every manifest valid against the Kubernetes schemas, and true to the server it deploys.

- Every document of every file validates against the schemas of Kubernetes 1.33 (``kubernetes-validate``, strict:
  an unknown or misspelt field fails), the autoscaler's commented sessions metric too, once uncommented.
- What the manifests say about the server is what the code does: the probes' path is a route the app serves (200,
  503 while draining), the container port is the server's PORT, every environment variable set is one the code
  reads (found in env/ by reading its source), ENV_SECRET comes from a Secret and no file holds one, the grace
  period outlasts the drain, the scratch directories are writable under a read-only root.
- The pieces agree: Services, probes and Ingress reach the right ports; the autoscaler and the disruption budgets
  target the workloads; the balancer's servers are exactly the StatefulSet's pods the autoscaler may create.
- The balancer's configuration (a ConfigMap) is part 1's routing line for line; ``haproxy -c`` accepts it, and it
  runs on loopback against stand-in replicas found through a stand-in DNS server: a request naming a pod reaches
  it, absent pods are skipped, a pod that appears later joins, a draining one keeps its episodes.
- The prometheus-adapter rule of deploy/README.md serves a metric the server exports, under the name the
  autoscaler's sessions metric asks for, counting only the WebSocket sessions ENV_MAX_SESSIONS caps (not HTTP
  episodes), so that the autoscaler's target is 70 % of that cap.

HAProxy is Debian's package (2.6), found as tests/test_deploy.py finds it (``make haproxy`` installs it).
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import os
import re
import socket
import struct
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import kubernetes_validate
import pytest
import yaml
from fastapi.testclient import TestClient

from env.config import Settings
from env.runtime import Runtime
from env.sandbox.readable import exposure
from env.scratch import RAM_DIR
from env.server.app import build_app
from env.server.episodes import EpisodeStore
from env.server.metrics import ServerMetrics
from env.server.replica import Replica
from env.settings import DECLARED
from tests.test_deploy import StandIn, free_port, spawn, stop_group, wait_for

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
PART1_CFG = ROOT / "deploy" / "haproxy" / "haproxy.cfg"
COMPOSE = ROOT / "deploy" / "compose.yaml"
README = ROOT / "deploy" / "README.md"
DOCKERFILE = ROOT / "Dockerfile"
K8S_VERSION = "1.33"  # hostUsers, and the appArmorProfile field (1.30); user namespaces on by default
IMAGE_CONFIG_DIR = "/usr/local/etc/haproxy"  # where the haproxy image's command reads haproxy.cfg
DETECT_S = 5.0


# ---------------------------------------------------------------------------------------------------------------
# the manifests


@functools.cache
def documents() -> list[tuple[Path, dict[str, Any]]]:
    """Every document of every manifest (read once: callers copy what they change)."""
    found = [(path, doc) for path in sorted(K8S.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text()) if doc is not None]
    assert found, f"no manifest in {K8S}"
    return found


def the(kind: str, name: str | None = None) -> dict[str, Any]:
    """The one object of ``kind`` (named ``name``)."""
    matching = [doc for _, doc in documents() if doc["kind"] == kind and name in (None, doc["metadata"]["name"])]
    assert len(matching) == 1, f"{len(matching)} {kind} objects named {name or 'anything'}"
    return matching[0]


def statefulset() -> dict[str, Any]:
    return the("StatefulSet")


def server_container() -> dict[str, Any]:
    (container,) = statefulset()["spec"]["template"]["spec"]["containers"]
    return container


def balancer() -> dict[str, Any]:
    return the("Deployment", "adbg-haproxy")


def balancer_container() -> dict[str, Any]:
    (container,) = balancer()["spec"]["template"]["spec"]["containers"]
    return container


def headless_service() -> dict[str, Any]:
    return the("Service", statefulset()["spec"]["serviceName"])


def entry_service() -> dict[str, Any]:
    (service,) = [
        doc for _, doc in documents() if doc["kind"] == "Service" and doc["spec"].get("clusterIP") != "None" and doc["metadata"]["name"] != "adbg-store"
    ]
    return service


def env_of(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


def literal_env(container: dict[str, Any]) -> dict[str, str]:
    return {name: e["value"] for name, e in env_of(container).items() if "value" in e}


def port_number(container: dict[str, Any], port: int | str) -> int:
    """A container port given by number or by name."""
    if isinstance(port, int):
        return port
    (found,) = [p["containerPort"] for p in container["ports"] if p.get("name") == port]
    return found


def service_target(service: dict[str, Any], container: dict[str, Any]) -> int:
    (port,) = service["spec"]["ports"]
    return port_number(container, port.get("targetPort", port["port"]))


def haproxy_cfg() -> str:
    (cfg,) = [doc["data"]["haproxy.cfg"] for _, doc in documents() if doc["kind"] == "ConfigMap" and "haproxy.cfg" in doc.get("data", {})]
    return cfg


def dockerfile_env() -> dict[str, str]:
    found: dict[str, str] = {}
    for line in DOCKERFILE.read_text().splitlines():
        if line.startswith("ENV "):
            found.update(dict(pair.split("=", 1) for pair in line[4:].split()))
    return found


def drain_seconds() -> float:
    """ENV_DRAIN_SECONDS as the server will read it: the manifest's value, else the code's default."""
    value = literal_env(server_container()).get("ENV_DRAIN_SECONDS")
    return Settings(drain_seconds=value).drain_seconds if value is not None else Settings.model_fields["drain_seconds"].default


def readme_section() -> str:
    text = README.read_text()
    assert "\n## Kubernetes" in text, "deploy/README.md has no Kubernetes section"
    return text[text.index("\n## Kubernetes") :]


def hpa_with_sessions_metric() -> dict[str, Any]:
    """hpa.yaml with its commented metric uncommented, as deploy/README.md tells the reader to do."""
    lines = (K8S / "hpa.yaml").read_text().splitlines()
    start = next(n for n, line in enumerate(lines) if "uncomment" in line) + 1
    block = []
    for line in lines[start:]:
        found = re.match(r"^(\s*)# ?(.*)$", line)
        if not found:
            break
        block.append(found.group(1) + found.group(2))
    assert block, "hpa.yaml has no commented metric after the line saying to uncomment it"
    return yaml.safe_load("\n".join(lines[:start] + block + lines[start + len(block) :]))


def test_every_manifest_is_valid_against_the_kubernetes_schemas():
    errors = []
    for path, doc in documents():
        try:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{path.name}: {doc['kind']}/{doc['metadata']['name']}: {'/'.join(map(str, exc.absolute_path))}: {exc.message}")
    assert not errors, "\n".join(errors)
    kinds = sorted(doc["kind"] for _, doc in documents())
    assert kinds == sorted([  # the store (store.yaml) is the second Deployment and the third Service
        "ConfigMap", "Deployment", "Deployment", "HorizontalPodAutoscaler", "Ingress", "PodDisruptionBudget", "PodDisruptionBudget",
        "Service", "Service", "Service", "StatefulSet",
    ])
    kubernetes_validate.validate(hpa_with_sessions_metric(), K8S_VERSION, strict=True)
    broken = copy.deepcopy(statefulset())
    broken["spec"]["template"]["spec"]["terminationGracePeriod"] = 45  # strict: a misspelt field is an error
    with pytest.raises(kubernetes_validate.ValidationError, match="terminationGracePeriod"):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


# ---------------------------------------------------------------------------------------------------------------
# the manifests and the server they run


def _environ(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (isinstance(node, ast.Name) and node.id == "environ")


class _EnvironReads(ast.NodeVisitor):
    """The variables a module reads: ``os.environ.get("X")``, ``os.getenv("X")``, ``os.environ["X"]``; and where a
    function reads ``os.environ[var]`` with a variable (the ``from_env`` mappings), the names its dicts map to."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.functions: list[tuple[list[bool], set[str]]] = []  # per enclosing function: (reads by variable, dict values)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(([False], set()))
        self.generic_visit(node)
        by_variable, values = self.functions.pop()
        if by_variable[0]:
            self.names |= values

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Dict(self, node: ast.Dict) -> None:
        if self.functions:
            self.functions[-1][1].update(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
        self.generic_visit(node)

    def read(self, key: ast.expr) -> None:
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            self.names.add(key.value)
        elif self.functions:
            self.functions[-1][0][0] = True

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if node.args and isinstance(func, ast.Attribute) and ((func.attr == "get" and _environ(func.value)) or func.attr == "getenv"):
            self.read(node.args[0])
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Load) and _environ(node.value):
            self.read(node.slice)
        self.generic_visit(node)


def variables_the_server_reads() -> set[str]:
    """Every environment variable the code under env/ reads: the settings it declares (``env.settings``, read through
    it), and what the rest reads directly, found in its source."""
    reads = _EnvironReads()
    for path in sorted((ROOT / "env").rglob("*.py")):
        source = path.read_text()
        if "environ" in source or "getenv" in source:
            reads.visit(ast.parse(source))
    return reads.names | set(DECLARED)


def test_every_environment_variable_set_is_one_the_server_reads():
    read = variables_the_server_reads()
    assert {"PORT", "ENV_REPLICA", "ENV_SECRET", "ENV_DRAIN_SECONDS", "SANDBOX_WALL_SECONDS", "ENV_CPU_SLOTS"} <= read  # found
    assert "ENV_REPLIKA" not in read and "SANDBOX_ALLOW_UNSAFE" in read
    env = env_of(server_container())
    assert set(env) <= read, f"set in server.yaml but read nowhere in env/: {sorted(set(env) - read)}"
    assert "SANDBOX_ALLOW_UNSAFE" not in env  # development only: the deployment fails closed
    assert env["ENV_REPLICA"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}  # each pod its own name
    assert env["ENV_CPU_SLOTS"]["valueFrom"]["resourceFieldRef"] == {"containerName": server_container()["name"], "resource": "requests.cpu", "divisor": "1"}
    for name, value in literal_env(server_container()).items():
        field = next((f for f, spec in Settings.model_fields.items() if (spec.description or "").startswith(f"{name}:")), None)
        if field is not None:
            Settings(**{field: value})  # a value the server accepts


def test_the_container_port_is_where_the_server_listens():
    container = server_container()
    default_port = Settings.model_fields["port"].default
    assert dockerfile_env()["PORT"] == str(default_port) and dockerfile_env()["HOST"] == "0.0.0.0"  # the image's
    assert literal_env(container).get("PORT", str(default_port)) == str(default_port)
    assert [p["containerPort"] for p in container["ports"]] == [default_port]
    assert service_target(headless_service(), container) == default_port
    assert literal_env(balancer_container())["ADBG_REPLICA_PORT"] == str(default_port)  # where HAProxy reaches it
    annotations = statefulset()["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(default_port)
    # The image's command, which drains on SIGTERM (uvicorn env.server.main:app would not).
    assert "command" not in container and "args" not in container
    assert 'CMD ["python", "-m", "env.server"]' in DOCKERFILE.read_text()


@pytest.fixture()
def replica_app(runtime: Runtime) -> Iterator[TestClient]:
    with TestClient(build_app(runtime=runtime, settings=Settings(replica=f"{statefulset()['metadata']['name']}-0"))) as client:
        yield client


def test_the_probes_ask_routes_the_server_serves(replica_app: TestClient):
    container = server_container()
    probes = {kind: container[kind]["httpGet"] for kind in ("startupProbe", "readinessProbe", "livenessProbe")}
    assert {p["path"] for p in probes.values()} == {"/health"}
    assert {port_number(container, p["port"]) for p in probes.values()} == {Settings.model_fields["port"].default}
    routes = {getattr(r, "path", None) for r in replica_app.app.routes}
    scraped = statefulset()["spec"]["template"]["metadata"]["annotations"]["prometheus.io/path"]
    assert {"/health", scraped} <= routes
    assert "adbg_capacity_left" in replica_app.get(scraped).text
    health = replica_app.get("/health")
    assert health.status_code == 200 and health.json()["status"] == "healthy" and health.json()["replica"] == "adbg-0"
    replica_app.app.state.replica.drain()  # SIGTERM
    assert replica_app.get("/health").status_code == 503  # not ready; liveness must outlast this (next test)


def test_the_grace_period_outlasts_the_drain():
    spec = statefulset()["spec"]["template"]["spec"]
    grace, drain = spec["terminationGracePeriodSeconds"], drain_seconds()
    assert drain == 30 and grace == 45, (drain, grace)  # compose's stop_grace_period for the same drain
    assert grace >= drain + 10  # the server stops at the deadline, then needs a moment
    liveness = server_container()["livenessProbe"]
    assert liveness["failureThreshold"] * liveness["periodSeconds"] > grace  # a drain's 503s never restart it


def test_env_secret_comes_from_a_secret_and_no_manifest_holds_one():
    secret = env_of(server_container())["ENV_SECRET"]
    assert set(secret) == {"name", "valueFrom"} and set(secret["valueFrom"]) == {"secretKeyRef"}
    ref = secret["valueFrom"]["secretKeyRef"]
    assert not ref.get("optional", False)  # no secret, no pod: replicas never run on secrets of their own
    assert all(doc["kind"] != "Secret" for _, doc in documents())
    for path, doc in documents():
        for container in doc.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
            for e in container.get("env", []):
                assert not (e["name"] == "ENV_SECRET" and "value" in e), f"{path.name} writes ENV_SECRET"
    assert "ENV_SECRET" not in json.dumps(balancer())  # the balancer never sees it
    command = re.search(r"kubectl create secret generic (\S+)\s*\\?\s*--from-literal=(\w+)=", readme_section())
    assert command and command.groups() == (ref["name"], ref["key"]), "deploy/README.md must say how to create the Secret"


def test_the_security_context_gives_the_sandbox_its_layers():
    pod = statefulset()["spec"]["template"]["spec"]
    container = server_container()
    uid = int(re.search(r"useradd .*--uid (\d+) app", DOCKERFILE.read_text()).group(1))
    assert pod["hostUsers"] is False  # a user namespace of its own, in which the sandbox nests its own
    security = pod["securityContext"]
    assert security["runAsNonRoot"] is True and security["runAsUser"] == uid
    # RuntimeDefault refuses unshare(CLONE_NEWUSER) and its AppArmor profile refuses mount: the namespace layer needs
    # either profile relaxed (Unconfined) or replaced (a Localhost profile).
    assert security["seccompProfile"]["type"] in ("Unconfined", "Localhost")
    assert security["appArmorProfile"]["type"] in ("Unconfined", "Localhost")
    context = container["securityContext"]
    assert context["allowPrivilegeEscalation"] is False and context["capabilities"] == {"drop": ["ALL"]}
    assert context["readOnlyRootFilesystem"] is True
    # A read-only root leaves the server its temporary directory and its scratch base (env/scratch.py) writable.
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    scratch = literal_env(container).get("SANDBOX_TMPDIR", RAM_DIR)
    assert set(mounts) == {"/tmp", scratch}
    assert volumes[mounts[scratch]]["emptyDir"]["medium"] == "Memory"  # RAM, as the scratch base is on a host
    assert "emptyDir" in volumes[mounts["/tmp"]]
    assert exposure(f"{scratch}/adbg-1-x") == ""  # outside every tree sandboxed code may read
    assert pod["automountServiceAccountToken"] is False and pod["enableServiceLinks"] is False


def test_services_ingress_autoscaler_and_budgets_target_the_right_things():
    sts, pods = statefulset(), statefulset()["spec"]["template"]["metadata"]["labels"]
    assert sts["spec"]["selector"]["matchLabels"] == pods and "replicas" not in sts["spec"]  # the autoscaler owns it
    headless = headless_service()
    assert headless["spec"]["clusterIP"] == "None" and headless["spec"]["publishNotReadyAddresses"] is True
    assert headless["spec"]["selector"] == pods
    balancer_pods = balancer()["spec"]["template"]["metadata"]["labels"]
    entry = entry_service()
    assert entry["spec"]["selector"] == balancer_pods and balancer()["spec"]["selector"]["matchLabels"] == balancer_pods
    bind_port = int(literal_env(balancer_container())["ADBG_BIND"].rsplit(":", 1)[1])
    assert service_target(entry, balancer_container()) == bind_port
    ingress = the("Ingress")
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    backend = path["backend"]["service"]
    assert (path["path"], path["pathType"]) == ("/", "Prefix") and backend["name"] == entry["metadata"]["name"]
    assert backend["port"]["name"] in [p["name"] for p in entry["spec"]["ports"]]
    timeouts = dict(re.findall(r"^\s*timeout (server|tunnel) (\S+)", PART1_CFG.read_text(), re.M))
    notes = ingress["metadata"]["annotations"]
    assert notes["haproxy.org/timeout-server"] == notes["haproxy-ingress.github.io/timeout-server"] == timeouts["server"] == "300s"
    assert notes["haproxy-ingress.github.io/timeout-tunnel"] == timeouts["tunnel"] == "1h"

    hpa = the("HorizontalPodAutoscaler")
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"], target["name"]) == ("apps/v1", "StatefulSet", sts["metadata"]["name"])
    (cpu,) = hpa["spec"]["metrics"]
    assert cpu["resource"]["name"] == "cpu" and cpu["resource"]["target"] == {"type": "Utilization", "averageUtilization": 70}
    assert "cpu" in server_container()["resources"]["requests"]  # Utilization is a share of the request
    assert hpa["spec"]["minReplicas"] >= 2
    workloads = {"StatefulSet": pods, "Deployment": balancer_pods}
    budgets = [doc for _, doc in documents() if doc["kind"] == "PodDisruptionBudget"]
    covered = []
    for pdb in budgets:
        selector = pdb["spec"]["selector"]["matchLabels"]
        matched = [kind for kind, labels in workloads.items() if selector.items() <= labels.items()]
        assert len(matched) == 1, (pdb["metadata"]["name"], matched)  # one budget, one workload
        assert pdb["spec"]["maxUnavailable"] == 1
        covered += matched
    assert sorted(covered) == sorted(workloads)


# ---------------------------------------------------------------------------------------------------------------
# the balancer's configuration


def cfg_sections(text: str) -> dict[str, list[str]]:
    """Each section (its header line) -> its lines, comments and blank lines left out."""
    sections: dict[str, list[str]] = {}
    current = ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        if not line[0].isspace():
            current = line.strip()
            sections[current] = []
        else:
            sections[current].append(" ".join(line.split()))
    return sections


def cfg_servers(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^\s+server\s+(\S+)\s+(\S+)\s*$", text, re.M)


def test_the_balancer_routes_as_part_1_with_the_statefulsets_pods_as_servers():
    part1, k8s = cfg_sections(PART1_CFG.read_text()), cfg_sections(haproxy_cfg())
    assert "acl names_replica var(txn.episode) -m reg ^[a-z0-9][a-z0-9-]{0,31}[.]" in k8s["frontend agentdebugger"]  # comments cut well
    (resolvers,) = [name for name in k8s if name.startswith("resolvers ")]
    assert k8s[resolvers] == ["parse-resolv-conf", "hold valid 5s"]  # the cluster's DNS server
    (docker,) = [name for name in part1 if name.startswith("resolvers ")]
    assert set(part1) - {docker} == set(k8s) - {resolvers}
    for section in ("global", "defaults", "frontend agentdebugger", "listen stats"):
        assert k8s[section] == part1[section], section  # the routing, timeouts and checks of part 1, line for line

    def backend(lines: list[str], resolver: str) -> list[str]:
        kept = [line for line in lines if not line.startswith("server ")]
        return [line.replace(f"resolvers {resolver}", "resolvers R").replace("init-addr none", "init-addr last,libc,none") for line in kept]

    assert backend(k8s["backend replicas"], resolvers.split()[1]) == backend(part1["backend replicas"], docker.split()[1])

    sts, hpa = statefulset()["metadata"]["name"], the("HorizontalPodAutoscaler")["spec"]
    pods = [f"{sts}-{n}" for n in range(hpa["maxReplicas"])]  # every pod the autoscaler may make, and no other
    assert [name for name, _ in cfg_servers(haproxy_cfg())] == pods
    headless = headless_service()["metadata"]["name"]
    for name, address in cfg_servers(haproxy_cfg()):
        assert Settings(replica=name).replica == name  # a valid ENV_REPLICA: the pod's name is its replica's
        assert address == f'"{name}.{headless}.${{ADBG_NAMESPACE}}.svc.${{ADBG_CLUSTER_DOMAIN-cluster.local}}:${{ADBG_REPLICA_PORT}}"'

    container, env = balancer_container(), env_of(balancer_container())
    code = "\n".join(line.split("#", 1)[0] for line in haproxy_cfg().splitlines())
    assert set(re.findall(r"\$\{(\w+)\}", code)) <= set(env)  # every variable without a default is set
    assert env["ADBG_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    stats_port = int(env["ADBG_STATS_BIND"]["value"].rsplit(":", 1)[1])
    assert port_number(container, container["livenessProbe"]["httpGet"]["port"]) == stats_port
    assert balancer()["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"] == str(stats_port)
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"  # ready once a replica answers through it
    compose_image = next(s["image"] for s in yaml.safe_load(COMPOSE.read_text())["services"].values() if str(s.get("image", "")).startswith("haproxy:"))
    assert container["image"] == compose_image == "haproxy:2.6"
    (mount,) = container["volumeMounts"]
    (volume,) = balancer()["spec"]["template"]["spec"]["volumes"]
    assert mount["mountPath"] == IMAGE_CONFIG_DIR and volume["configMap"]["name"] == the("ConfigMap")["metadata"]["name"]


def balancer_env(**placed: str) -> dict[str, str]:
    """The balancer container's environment as the pod has it, its downward-API values given here."""
    env = {**os.environ, **literal_env(balancer_container()), "ADBG_NAMESPACE": "test"}
    return {**env, **placed}


def test_haproxy_accepts_the_kubernetes_configuration(haproxy: str, tmp_path: Path):
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(haproxy_cfg())
    done = subprocess.run([haproxy, "-c", "-f", str(cfg)], env=balancer_env(), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "Configuration file is valid" in done.stdout, done.stdout + done.stderr


class StandInDNS:
    """A DNS server on loopback answering A queries for the names it holds (others: NXDOMAIN; AAAA: no record)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while not self.stopped.is_set():
            try:
                query, peer = self.sock.recvfrom(4096)
            except TimeoutError:
                continue
            ident, flags = struct.unpack("!HH", query[:4])
            end, labels = 12, []
            while query[end]:
                labels.append(query[end + 1 : end + 1 + query[end]].decode())
                end += 1 + query[end]
            qtype = struct.unpack("!H", query[end + 1 : end + 3])[0]
            address = self.names.get(".".join(labels).lower())
            answer, rcode = b"", 3  # NXDOMAIN
            if address is not None:
                rcode = 0
                if qtype == 1:  # A, 5 s TTL
                    answer = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 5, 4) + socket.inet_aton(address)
            header = struct.pack("!HHHHHH", ident, 0x8400 | (flags & 0x0100) | rcode, 1, 1 if answer else 0, 0, 0)
            self.sock.sendto(header + query[12 : end + 5] + answer, peer)

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
        self.sock.close()


class Cluster:
    """The Kubernetes configuration's HAProxy on loopback, its resolvers pointed at a stand-in DNS server."""

    POD_IPS = {n: f"127.0.71.{n + 1}" for n in range(3)}

    def __init__(self, binary: str, log_dir: Path) -> None:
        self.dns, self.pods = StandInDNS(), {}
        self.sts, self.headless = statefulset()["metadata"]["name"], headless_service()["metadata"]["name"]
        for _ in range(5):  # one port free on every pod address
            self.port = free_port()
            try:
                self.add(0)
                self.add(1)
                break
            except OSError:
                self.stop_pods()
        cfg = haproxy_cfg()
        assert cfg.count("parse-resolv-conf") == 1
        (log_dir / "haproxy.cfg").write_text(cfg.replace("parse-resolv-conf", f"nameserver standin 127.0.0.1:{self.dns.port}"))
        bind, stats = free_port(), free_port()
        self.url, self.stats_url = f"http://127.0.0.1:{bind}", f"http://127.0.0.1:{stats}"
        env = balancer_env(
            ADBG_BIND=f"127.0.0.1:{bind}", ADBG_STATS_BIND=f"127.0.0.1:{stats}", ADBG_REPLICA_PORT=str(self.port),
            ADBG_CLUSTER_DOMAIN="cluster.test", ADBG_LOG_LEVEL="info",
        )  # fmt: skip
        self.log_path = log_dir / "haproxy.log"
        self.proc = spawn([binary, "-f", str(log_dir / "haproxy.cfg")], env, self.log_path)

    def pod(self, n: int) -> str:
        return f"{self.sts}-{n}"

    def add(self, n: int) -> None:
        """Pod n starts, and its name resolves (as the headless Service publishes it)."""
        self.pods[self.pod(n)] = StandIn(self.pod(n), self.POD_IPS[n], self.port)  # a pod IP, as each pod has its own
        self.dns.names[f"{self.pod(n)}.{self.headless}.test.svc.cluster.test"] = self.POD_IPS[n]

    def states(self) -> dict[str, str]:
        text = httpx.get(f"{self.stats_url}/metrics", timeout=2).text
        return dict(re.findall(r'^haproxy_server_status\{proxy="replicas",server="([^"]+)",state="([A-Z]+)"\} 1$', text, re.M))

    def wait_until(self, wanted: dict[str, str]) -> None:
        def reached() -> bool:
            if self.proc.poll() is not None:
                pytest.fail(f"haproxy exited with {self.proc.returncode}:\n{self.log_path.read_text()[-3000:]}")
            return all(self.states().get(k) == v for k, v in wanted.items())

        wait_for(f"HAProxy to see {wanted} (log: {self.log_path})", reached, DETECT_S)

    def stop_pods(self) -> None:
        for pod in self.pods.values():
            pod.stop()
        self.pods.clear()

    def close(self) -> None:
        stop_group(self.proc)
        self.stop_pods()
        self.dns.close()


@pytest.fixture()
def cluster(haproxy: str, tmp_path: Path) -> Iterator[Cluster]:
    made = Cluster(haproxy, tmp_path)
    try:
        yield made
    finally:
        made.close()


def served_by(response: httpx.Response) -> str:
    assert response.status_code == 200, f"the balancer answered {response.status_code}: {response.text[:300]}"
    return response.json()["replica"]


def test_the_kubernetes_configuration_routes_requests_to_the_pod_their_episode_names(cluster: Cluster):
    url, pod = cluster.url, cluster.pod
    cluster.wait_until({pod(0): "UP", pod(1): "UP", pod(2): "MAINT", pod(15): "MAINT"})  # absent pods: maintenance

    def step(episode: str | None = None, cookie: str | None = None) -> httpx.Response:
        body = {"action": {"action_type": "give_up"}, **({"episode_id": episode} if episode else {})}
        return httpx.post(f"{url}/step", json=body, cookies={"adbg_episode": cookie} if cookie else None, timeout=10)

    for n in (0, 1, 1, 0):  # leastconn alternates: a request not routed would land wrong
        episode = f"{pod(n)}.6f1c2b7e-0000-4000-8000-000000000000"
        assert served_by(step(episode)) == pod(n)  # the body's episode_id
        assert served_by(httpx.get(f"{url}/state", params={"episode_id": episode}, timeout=10)) == pod(n)
        assert served_by(step(cookie=episode)) == pod(n)  # the adbg_episode cookie
        assert served_by(step(episode, cookie=f"{pod(1 - n)}.77ab")) == pod(n)  # the body before the cookie
    # A pod that does not exist (yet) or a new episode: the least loaded live pod.
    assert {served_by(step(f"{pod(2)}.6f1c")) for _ in range(4)} == {pod(0), pod(1)}

    def reset() -> httpx.Response:  # a new episode, whatever cookie it carries
        return httpx.post(f"{url}/reset", json={"task_id": "easy"}, cookies={"adbg_episode": f"{pod(0)}.6f1c"}, timeout=10)

    assert {served_by(reset()) for _ in range(4)} == {pod(0), pod(1)}

    cluster.add(2)  # the autoscaler made it: its name resolves, and no reload is needed
    cluster.wait_until({pod(2): "UP"})
    assert served_by(step(f"{pod(2)}.6f1c")) == pod(2)

    cluster.pods[pod(0)].draining = True  # SIGTERM: /health 503; the headless Service keeps its name
    cluster.wait_until({pod(0): "NOLB"})
    for _ in range(4):
        assert served_by(reset()) != pod(0)  # no new sessions there
        assert served_by(step(f"{pod(0)}.6f1c")) == pod(0)  # its open episodes still reach it
    assert f"{{{pod(2)}}}" in cluster.log_path.read_text()  # the log names the pod a request named


# ---------------------------------------------------------------------------------------------------------------
# autoscaling on sessions


def adapter_rule() -> dict[str, Any]:
    """The prometheus-adapter rule deploy/README.md gives (its Helm values' rules.custom)."""
    blocks = re.findall(r"```yaml\n(.*?)```", readme_section(), re.S)
    (values,) = [yaml.safe_load(b) for b in blocks if "seriesQuery" in b]
    (rule,) = values["rules"]["custom"]
    return rule


def test_the_adapter_rule_serves_a_metric_the_server_exports_as_the_autoscaler_asks():
    rule = adapter_rule()
    settings = Settings()
    metrics = ServerMetrics(Replica(f"{statefulset()['metadata']['name']}-0"), EpisodeStore(settings.http_episodes, settings.session_timeout_s), settings)
    exported = {family.name for family in metrics.registry.collect()}
    named = set(re.findall(r"\badbg_\w+", rule["seriesQuery"] + " " + rule["metricsQuery"]))
    assert named and named <= exported, f"not exported by env/server/metrics.py: {named - exported}"
    assert rule["name"]["as"] == "adbg_active_sessions" in exported
    assert rule["resources"]["overrides"] == {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}
    # The series it discovers pods by has a sample on an idle replica too: every pod has a value (0 when idle).
    series = re.match(r"(\w+)\{", rule["seriesQuery"]).group(1)
    assert re.search(rf"^{series}\{{.*\}} \d", metrics.render().decode(), re.M)
    (sessions,) = [m for m in hpa_with_sessions_metric()["spec"]["metrics"] if m["type"] == "Pods"]
    assert sessions["pods"]["metric"]["name"] == rule["name"]["as"]
    max_sessions = int(literal_env(server_container()).get("ENV_MAX_SESSIONS", Settings.model_fields["max_sessions"].default))
    assert int(sessions["pods"]["target"]["averageValue"]) == int(0.7 * max_sessions)  # 70 %, as the CPU target


def selector(query: str, metric: str) -> dict[str, str]:
    """The label matchers a PromQL query puts on `metric`, besides the adapter's <<.LabelMatchers>> (namespace, pod)."""
    (matchers,) = re.findall(rf"\b{metric}\{{([^}}]*)\}}", query)
    assert re.sub(r'\w+="[^"]*"', "", matchers).strip(" ,") == "<<.LabelMatchers>>", matchers  # equality matchers only
    return dict(re.findall(r'(\w+)="([^"]*)"', matchers))


def picked(exposition: str, metric: str, matchers: dict[str, str]) -> list[float]:
    """The values of the samples of `metric` in one pod's /metrics that `matchers` select."""
    values = []
    for line in exposition.splitlines():
        found = re.match(r"^(\w+)(?:\{([^}]*)\})? (\S+)$", line)
        if found and found.group(1) == metric and matchers.items() <= dict(re.findall(r'(\w+)="([^"]*)"', found.group(2) or "")).items():
            values.append(float(found.group(3)))
    return values


def test_the_adapter_rule_counts_the_sessions_env_max_sessions_caps(replica_app: TestClient):
    counted = selector(adapter_rule()["metricsQuery"], "adbg_active_sessions")
    for seed in (1, 2):  # two HTTP episodes
        assert replica_app.post("/reset", json={"task_id": "easy", "seed": seed}).json()["observation"]["error"] is None
    with replica_app.websocket_connect("/ws") as ws:  # and one WebSocket session
        ws.send_json({"type": "reset", "data": {"task_id": "easy", "seed": 3}})
        assert ws.receive_json()["data"]["observation"]["error"] is None
        exposition = replica_app.get("/metrics").text
    assert sum(picked(exposition, "adbg_active_sessions", {})) == 3  # all three are open
    assert sum(picked(exposition, "adbg_active_sessions", counted)) == 1  # the rule counts the session only
    # The transport it counts is the one ENV_MAX_SESSIONS caps (hpa.yaml's target is 70 % of it), not ENV_HTTP_EPISODES.
    assert picked(exposition, "adbg_capacity_left", counted) == [Settings.model_fields["max_sessions"].default - 1]


def test_the_replicas_record_their_episodes_in_the_store_the_manifests_run():
    """Issue 50, item 3: ENV_STORE names the store's Service, which selects the store's pods on Redis's port."""
    env = {e["name"]: e.get("value") for e in server_container()["env"]}
    store, service = the("Deployment", "adbg-store"), the("Service", "adbg-store")
    assert env["ENV_STORE"] == "redis://adbg-store:6379/0"
    assert service["spec"]["selector"] == store["spec"]["template"]["metadata"]["labels"] == store["spec"]["selector"]["matchLabels"]
    (container,) = store["spec"]["template"]["spec"]["containers"]
    assert [p["containerPort"] for p in container["ports"]] == [6379] and service["spec"]["ports"][0]["port"] == 6379
    assert "--save" in container["args"] and container["args"][container["args"].index("--save") + 1] == ""  # nothing on disk
