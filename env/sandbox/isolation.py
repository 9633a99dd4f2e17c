"""Start-up probe: which isolation layers this host lets a sandbox child apply.

    iso = probe_isolation()
    iso.tier            # "namespaces+landlock+seccomp" on a root VM, "landlock+seccomp" in Docker ...
    iso.can_execute     # False unless every guarantee of env.sandbox.guarantees is held (fail closed)
    iso.shell_refusal   # "" when run_bash's commands are confined too, else why not

Layers are measured, never assumed: the probe starts the real child bootstrap with ``--probe``
and it tries each layer on itself. A run needs every guarantee (no network, reads and writes
confined, no reach into other processes, bounded resources), each held by some active layer; a host
that cannot give one refuses to run code and names what is missing. ``SANDBOX_ALLOW_UNSAFE=1`` is the
one way to run anyway ("tier": "unsafe", logged as a warning). Tests simulate a host without some
layers with ``probe_isolation(disabled={...})``; production never disables a layer.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field

from env import settings
from env.sandbox.guarantees import LANDLOCK_SIGNAL_ABI, LANDLOCK_TCP_ABI, GuaranteeState, assess, refusal
from env.sandbox.launch import CHILD, python_command, python_env
from env.sandbox.readable import exposure
from env.sandbox.seccomp import compile_filter
from env.scratch import scratch_root

SANDBOX_UID = 65534  # nobody: where the server runs as root and the standard library allows it
LAYER_NAMES = {"netns": "network_namespace", "landlock": "landlock", "seccomp": "seccomp", "uid": "separate_uid"}


class LayerState(BaseModel):
    active: bool
    detail: str = ""


class Isolation(BaseModel):
    """What the sandbox applies to every run on this host."""

    tier: str
    can_execute: bool
    reason: str = ""
    landlock_abi: int = 0
    layers: dict[str, LayerState]
    guarantees: dict[str, GuaranteeState] = Field(default_factory=dict)
    shell_guarantees: dict[str, GuaranteeState] = Field(default_factory=dict)
    shell_refusal: str = Field("", description="Why run_bash refuses here although other runs may start")
    seccomp_bpf: bytes | None = Field(None, exclude=True)

    def active(self) -> dict[str, bool]:
        """Which kernel layers runs apply, by short name (netns, landlock, seccomp, uid)."""
        return {key: self.layers[name].active for key, name in LAYER_NAMES.items()}

    @property
    def netns(self) -> bool:
        return self.layers["network_namespace"].active

    @property
    def landlock(self) -> int:
        return self.landlock_abi if self.layers["landlock"].active else 0

    @property
    def seccomp(self) -> bytes | None:
        return self.seccomp_bpf if self.layers["seccomp"].active else None

    @property
    def uid(self) -> int | None:
        return SANDBOX_UID if self.layers["separate_uid"].active else None

    def for_child(self, disk_bytes: int, disk_files: int = 0) -> dict:
        return {
            "netns": self.netns, "tmpfs": disk_bytes if self.netns else 0, "tmpfs_files": disk_files if self.netns else 0,
            "landlock": self.landlock, "seccomp": self.seccomp, "uid": self.uid,
        }  # fmt: skip


def set_server_undumpable() -> bool:
    """PR_SET_DUMPABLE=0: a same-uid child can no longer read /proc/<server>/environ or mem."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE
    except OSError:
        return False


def _run_probe(bpf: bytes | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="adbg-probe-") as cwd:
        bpf_path = ""
        if bpf:
            bpf_path = os.path.join(cwd, "filter.bpf")
            Path(bpf_path).write_bytes(bpf)
        uid = str(SANDBOX_UID) if os.geteuid() == 0 else ""
        try:
            done = subprocess.run(
                python_command(CHILD, "--probe", bpf_path, uid),
                cwd=cwd,
                env=python_env({}),
                capture_output=True,
                timeout=20,
                check=False,
            )
            return json.loads(done.stdout.decode() or "{}")
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            return {"errors": [f"probe failed: {exc}"]}


def landlock_detail(abi: int) -> str:
    """What Landlock confines at this ABI (each ABI adds to the one before)."""
    parts = ["reads and writes confined to the system paths and the run's directory"]
    parts.append("renames and links across them refused" if abi >= 2 else "no refer right (ABI 1)")
    parts.append("TCP bind and connect denied" if abi >= LANDLOCK_TCP_ABI else "no TCP rules (ABI < 4)")
    parts.append("signals and abstract Unix sockets scoped to the run" if abi >= LANDLOCK_SIGNAL_ABI else "no signal scoping (ABI < 6)")
    return f"ABI {abi}: " + ", ".join(parts)


def scratch_exposure(scratch: str) -> str:
    """Why sandboxed code could read the server's scratch directory, or "" when no readable tree holds it."""
    tree = exposure(scratch)
    return f"the scratch directory {scratch} lies under {tree}, which runs may read" if tree else ""


def probe_isolation(disabled: set[str] | None = None, allow_unsafe: bool | None = None, scratch: str | None = None) -> Isolation:
    """The layers this host gives a run; ``disabled`` simulates a host without some of them (tests only).

    ``scratch`` is where workspaces and generated tasks live (``scratch_root()`` unless given).
    """
    disabled = set(disabled or ())
    exposed = scratch_exposure(scratch or scratch_root())
    if allow_unsafe is None:
        allow_unsafe = settings.switch("SANDBOX_ALLOW_UNSAFE")
    bpf = compile_filter() if "seccomp" not in disabled else None
    found = _run_probe(bpf)
    errors = {e.split(":", 1)[0]: e for e in found.get("errors", [])}
    active = {key: bool(found.get(key)) and key not in disabled for key in LAYER_NAMES}
    if bpf is None and "seccomp" not in disabled:
        errors["seccomp"] = "seccomp: libseccomp (pyseccomp) is not available to compile the filter"
    dumpable_off = set_server_undumpable()
    abi = int(found.get("landlock_abi", 0)) if active["landlock"] else 0
    works = {
        "netns": "user, network and mount namespaces: no interface but a downed loopback; the run's directory is a size-capped tmpfs; "
        "run_bash gets a PID namespace",
        "landlock": landlock_detail(abi),
        "seccomp": "an allow-list of system calls: no socket of any family, no exec or fork (threads only; run_bash may fork), "
        "no ptrace, process_vm_*, pidfd, mount, namespaces, bpf, io_uring, perf_event_open, userfaultfd or keyrings; "
        "signals only to the run's own process",
        "uid": f"runs as uid {SANDBOX_UID}, not as the server's uid",
    }

    def state(key: str) -> LayerState:
        if key in disabled:
            return LayerState(active=False, detail="disabled (a simulated host without this layer)")
        if active[key]:
            return LayerState(active=True, detail=works[key])
        if key == "uid" and os.geteuid() != 0:
            return LayerState(active=False, detail="the server does not run as root, so runs keep its uid")
        return LayerState(active=False, detail=errors.get(key, "x: not available on this host").split(": ", 1)[1])

    layers = {
        "process": LayerState(active=True, detail="own process group, stripped environment, private directory, lower CPU priority"),
        "rlimits": LayerState(active=True, detail="address space, CPU, file size, open files, core dumps"),
        **{LAYER_NAMES[key]: state(key) for key in LAYER_NAMES},
        "server_not_dumpable": LayerState(active=dumpable_off, detail="PR_SET_DUMPABLE=0 in the server"),
    }
    guarantees = assess(active, abi, "run", exposed)
    shell_guarantees = assess(active, abi, "shell", exposed)
    kernel = [name for key, name in (("netns", "namespaces"), ("landlock", "landlock"), ("seccomp", "seccomp"), ("uid", "uid")) if active[key]]
    reason = refusal(guarantees)
    shell_reason = refusal(shell_guarantees, "shell commands")
    if allow_unsafe and (reason or shell_reason):
        gaps = [f"{what} without " + ", ".join(k for k, v in held.items() if not v.held)
                for what, held in (("code", guarantees), ("shell commands", shell_guarantees)) if any(not v.held for v in held.values())]
        return Isolation(
            tier="unsafe", can_execute=True, landlock_abi=abi, layers=layers, seccomp_bpf=bpf, guarantees=guarantees,
            shell_guarantees=shell_guarantees, reason="unsafe: SANDBOX_ALLOW_UNSAFE=1 runs " + "; ".join(gaps),
        )
    return Isolation(
        tier="+".join(kernel) if not reason else "refused", can_execute=not reason, reason=reason, landlock_abi=abi,
        layers=layers, seccomp_bpf=bpf, guarantees=guarantees, shell_guarantees=shell_guarantees, shell_refusal=shell_reason,
    )
