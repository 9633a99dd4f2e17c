"""Start-up probe: which isolation layers this host lets a sandbox child apply.

    iso = probe_isolation()
    iso.tier            # "namespaces+landlock" on a root VM, "landlock" on a HF Space ...
    iso.can_execute     # False when nothing beyond rlimits is available (fail closed)

Layers are measured, never assumed: the probe starts the real child bootstrap with ``--probe``
and it tries each layer on itself. ``SANDBOX_DISABLE_LAYERS`` (comma separated: ``netns``,
``landlock``) simulates a host without them; ``SANDBOX_ALLOW_UNSAFE=1`` is the explicitly named
development setting that lets a host with only rlimits run code anyway.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel

CHILD = Path(__file__).with_name("child.py")
PYTHON_FLAGS = ("-I", "-S", "-B", "-X", "utf8")


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

    @property
    def netns(self) -> bool:
        return self.layers["network_namespace"].active

    @property
    def landlock(self) -> int:
        return self.landlock_abi if self.layers["landlock"].active else 0


def set_server_undumpable() -> bool:
    """PR_SET_DUMPABLE=0: a same-uid child can no longer read /proc/<server>/environ or mem."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE
    except OSError:
        return False


def _run_probe() -> dict:
    with tempfile.TemporaryDirectory(prefix="adbg-probe-") as cwd:
        try:
            done = subprocess.run(
                [sys.executable, *PYTHON_FLAGS, str(CHILD), "--probe"],
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
    found = _run_probe()
    errors = "; ".join(found.get("errors", []))
    netns = bool(found.get("netns")) and "netns" not in disabled
    landlock = bool(found.get("landlock")) and "landlock" not in disabled
    dumpable_off = set_server_undumpable()

    def state(active: bool, name: str, ok: str) -> LayerState:
        if name in disabled:
            return LayerState(active=False, detail="disabled by SANDBOX_DISABLE_LAYERS")
        return LayerState(active=active, detail=ok if active else (errors or "not available on this host"))

    abi = int(found.get("landlock_abi", 0))
    layers = {
        "process": LayerState(active=True, detail="separate process group, stripped environment, private directory"),
        "rlimits": LayerState(active=True, detail="address space, CPU, file size, open files, core dumps"),
        "network_namespace": state(netns, "netns", "user + network namespace: no interface but a downed loopback"),
        "landlock": state(landlock, "landlock", f"ABI {abi}: read-only system paths, own directory writable, no TCP, scoped signals"),
        "server_not_dumpable": LayerState(active=dumpable_off, detail="PR_SET_DUMPABLE=0 in the server"),
    }
    if netns and landlock:
        tier = "namespaces+landlock"
    elif landlock:
        tier = "landlock"
    elif netns:
        tier = "namespaces"
    else:
        tier = "rlimits-only"
    can_execute = tier != "rlimits-only" or allow_unsafe
    reason = ""
    if tier == "rlimits-only":
        reason = (
            "unsafe: only rlimits are available and SANDBOX_ALLOW_UNSAFE=1 is set"
            if allow_unsafe
            else "refusing to run code: no kernel isolation layer (namespaces or Landlock) is available on this host; "
            "set SANDBOX_ALLOW_UNSAFE=1 only for local development"
        )
    return Isolation(tier=tier, can_execute=can_execute, reason=reason, landlock_abi=abi if landlock else 0, layers=layers)
