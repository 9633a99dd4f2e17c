"""What every sandbox run must be guaranteed, and which active layers give each guarantee.

    held = assess({"seccomp": True, "landlock": True, "netns": False}, landlock_abi=6, kind="run")
    held["no_network"].held        # True: seccomp denies socket() for every family
    missing(held)                  # [] -> the run may start; otherwise it is refused, naming these

A run starts only when every guarantee is held by at least one active layer (``kind`` "run": the
single-process child of verdicts, repository tests, the debugger and scripts; "shell": ``run_bash``,
whose commands fork). A network namespace alone is not "no network": a process in one can still
connect to Unix sockets on the host's paths, so only seccomp's socket denial counts. Landlock is
the only layer here that confines reads and writes (a separate uid can still read every
world-readable file and write every world-writable directory). Signals: the single-process child's
filter lets ``kill`` and ``tgkill`` reach its own pid only; a shell's processes need Landlock's
signal scoping (ABI 6 and later) or a PID namespace of their own (made inside the user namespace).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

RunKind = Literal["run", "shell"]
LANDLOCK_SIGNAL_ABI = 6  # LANDLOCK_SCOPE_SIGNAL and LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
LANDLOCK_TCP_ABI = 4  # LANDLOCK_ACCESS_NET_BIND_TCP / CONNECT_TCP


class GuaranteeState(BaseModel):
    """One guarantee on this host: held or not, by which layer, and what could give it."""

    held: bool
    by: str = ""
    needs: str


GUARANTEES = {
    "no_network": "no socket of any family, so no network and no Unix socket on the host",
    "read_confined": "no read outside the allowed system paths and the run's own directory",
    "write_confined": "no write outside the run's own directory",
    "processes_confined": "no signal, ptrace or /proc access to any process outside the run",
    "resources_bounded": "bounded CPU time, memory, file size, open files and output",
}


def _providers(active: dict[str, bool], abi: int, kind: RunKind, exposed: str) -> dict[str, list[tuple[bool, str]]]:
    """Each guarantee's alternatives: (held on this host, what holds it)."""
    seccomp, landlock, netns = active.get("seccomp", False), active.get("landlock", False), active.get("netns", False)
    if kind == "shell":
        signals = [
            (seccomp and landlock and abi >= LANDLOCK_SIGNAL_ABI,
             f"seccomp (ptrace, process_vm_*, pidfd denied) with Landlock ABI {abi} scoping signals and /proc out of reach"),
            (seccomp and landlock and netns,
             "seccomp (ptrace, process_vm_*, pidfd denied) with a PID namespace of the command's own and /proc out of reach"),
        ]
    else:
        signals = [(seccomp and landlock,
                    "seccomp (kill and tgkill to its own pid only; ptrace, process_vm_*, pidfd denied) with /proc out of Landlock's reach")]
    return {
        "no_network": [(seccomp, "seccomp: socket() denied for every family, socketpair not allowed")],
        "read_confined": [(landlock and not exposed, f"Landlock ABI {abi}: only system paths and the run's directory are readable")],
        "write_confined": [(landlock, f"Landlock ABI {abi}: only the run's directory is writable")],
        "processes_confined": signals,
        "resources_bounded": [(True, "rlimits: address space, CPU, file size, open files; output capped by the server")],
    }


NEEDS = {
    "no_network": "seccomp (libseccomp and a kernel that allows filters)",
    "read_confined": "Landlock (Linux 5.13 or later, enabled in the LSM list)",
    "write_confined": "Landlock (Linux 5.13 or later, enabled in the LSM list)",
    "processes_confined": "seccomp and Landlock",
    "resources_bounded": "rlimits",
}
SHELL_NEEDS = {**NEEDS, "processes_confined": "seccomp and Landlock, with Landlock ABI 6 (Linux 6.12) or user namespaces for a PID namespace"}


def assess(active: dict[str, bool], landlock_abi: int, kind: RunKind = "run", exposed: str = "") -> dict[str, GuaranteeState]:
    """Every guarantee for a run of ``kind``, given which layers are active.

    ``exposed`` says where the server's scratch directory (workspaces, generated tasks) lies inside a tree
    that runs may read ("" when it does not): Landlock cannot confine reads away from it then.
    """
    needs = SHELL_NEEDS if kind == "shell" else NEEDS
    if exposed:
        needs = {**needs, "read_confined": f"a scratch directory outside every path sandboxed code may read ({exposed}; set SANDBOX_TMPDIR)"}
    result = {}
    for name, alternatives in _providers(active, landlock_abi, kind, exposed).items():
        by = next((what for held, what in alternatives if held), "")
        result[name] = GuaranteeState(held=bool(by), by=by, needs=needs[name])
    return result


def missing(held: dict[str, GuaranteeState]) -> list[str]:
    return [name for name, state in held.items() if not state.held]


def refusal(held: dict[str, GuaranteeState], what: str = "code") -> str:
    """The message a refused run carries: each missing guarantee and what would give it; "" when none is missing."""
    gaps = missing(held)
    if not gaps:
        return ""
    named = "; ".join(f"{name} ({GUARANTEES[name]}) needs {held[name].needs}" for name in gaps)
    return f"refusing to run {what}: this host cannot guarantee {named}. Set SANDBOX_ALLOW_UNSAFE=1 only for local development"
