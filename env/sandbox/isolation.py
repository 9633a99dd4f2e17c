"""Start-up probe: which isolation layers this host lets a sandbox child apply.

    iso = probe_isolation()
    iso.tier            # "namespaces+landlock" on a root VM, "landlock" on a HF Space ...
    iso.can_execute     # False when nothing beyond rlimits is available (fail closed)

Layers are measured, never assumed: the probe starts the real child bootstrap with ``--probe``
and it tries each layer on itself. ``SANDBOX_DISABLE_LAYERS`` (comma separated: ``netns``,
``landlock``, ``seccomp``, ``uid``) simulates a host without them; ``SANDBOX_ALLOW_UNSAFE=1`` is
the explicitly named development setting that lets a host with only rlimits run code anyway.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field

from env.sandbox.seccomp import compile_filter

CHILD = Path(__file__).with_name("child.py")
PYTHON_FLAGS = ("-I", "-S", "-B", "-X", "utf8")
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
    seccomp_bpf: bytes | None = Field(None, exclude=True)

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

    def for_child(self, disk_bytes: int) -> dict:
        return {"netns": self.netns, "tmpfs": disk_bytes if self.netns else 0, "landlock": self.landlock, "seccomp": self.seccomp, "uid": self.uid}


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
                [sys.executable, *PYTHON_FLAGS, str(CHILD), "--probe", bpf_path, uid],
                cwd=cwd,
                env={},
                capture_output=True,
                timeout=20,
                check=False,
            )
            return json.loads(done.stdout.decode() or "{}")
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            return {"errors": [f"probe failed: {exc}"]}


def probe_isolation(disabled: set[str] | None = None, allow_unsafe: bool | None = None) -> Isolation:
    if disabled is None:
        disabled = {x.strip() for x in os.environ.get("SANDBOX_DISABLE_LAYERS", "").split(",") if x.strip()}
    if allow_unsafe is None:
        allow_unsafe = os.environ.get("SANDBOX_ALLOW_UNSAFE", "") == "1"
    bpf = compile_filter() if "seccomp" not in disabled else None
    found = _run_probe(bpf)
    errors = {e.split(":", 1)[0]: e for e in found.get("errors", [])}
    active = {key: bool(found.get(key)) and key not in disabled for key in LAYER_NAMES}
    if bpf is None and "seccomp" not in disabled:
        errors["seccomp"] = "seccomp: libseccomp (pyseccomp) is not available to compile the filter"
    dumpable_off = set_server_undumpable()
    abi = int(found.get("landlock_abi", 0))
    works = {
        "netns": "user, network and mount namespaces: no interface but a downed loopback; the run's directory is a size-capped tmpfs",
        "landlock": f"ABI {abi}: read-only system paths, own directory writable, no TCP, scoped signals",
        "seccomp": "no exec, no fork (threads only), no inet/netlink/packet sockets, no ptrace, mount, namespaces, links or device nodes",
        "uid": f"runs as uid {SANDBOX_UID}, not as the server's uid",
    }

    def state(key: str) -> LayerState:
        if key in disabled:
            return LayerState(active=False, detail="disabled by SANDBOX_DISABLE_LAYERS")
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
    kernel = [name for key, name in (("netns", "namespaces"), ("landlock", "landlock"), ("seccomp", "seccomp"), ("uid", "uid")) if active[key]]
    tier = "+".join(kernel) if kernel else "rlimits-only"
    can_execute = bool(kernel) or allow_unsafe
    reason = ""
    if not kernel:
        reason = (
            "unsafe: only rlimits are available and SANDBOX_ALLOW_UNSAFE=1 is set"
            if allow_unsafe
            else "refusing to run code: no kernel isolation layer (namespaces, Landlock or seccomp) is available on this host; "
            "set SANDBOX_ALLOW_UNSAFE=1 only for local development"
        )
    return Isolation(
        tier=tier, can_execute=can_execute, reason=reason, landlock_abi=abi if active["landlock"] else 0, layers=layers, seccomp_bpf=bpf
    )
