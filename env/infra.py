"""Infrastructure failures: what decided a step when the machine, not the agent, did.

    raise InfraFailure("fork_server_died", "the sandbox's fork server died during the run")
    infra_cause(exc)          # the cause of an exception the trusted side raised, when it is the machine's

A step that meets one pays nothing, is not counted against the episode's steps or attempts, and is marked
(``infra_failed`` and ``infra_cause`` in the observation, its metadata and ORS's output); /metrics counts them by
cause, and the evaluation leaves their episodes out of every statistic, reporting the rate. The agent's own code
never raises one: what it does happens in the sandbox child and comes back as a test outcome (a crash, a time-out,
a memory error are its failures).

It derives from BaseException, as ``KeyboardInterrupt`` does, so that the many ``except Exception`` that turn
whatever a test run raised into that test's error cannot turn the machine's failure into the agent's.
"""

from __future__ import annotations

import errno
from typing import Literal, get_args

InfraCause = Literal["fork_server_died", "sandbox_start", "scratch_full", "replica_stopping", "test_host_crashed", "slot_wait", "trusted_memory", "trusted_time", "run_starved"]
CAUSES: tuple[InfraCause, ...] = get_args(InfraCause)

RETRIES = 3  # an agent's loop (env.eval, inference.py) ends an episode after this many such steps in a row

# OSErrors of the trusted side that say the machine is out of something, not that a path or an argument was wrong
FULL = (errno.ENOSPC, errno.EDQUOT)
OUT_OF = (errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.ENOMEM)


class InfraFailure(BaseException):  # noqa: N818 - named for what it is, like KeyboardInterrupt
    def __init__(self, cause: InfraCause, message: str):
        super().__init__(f"{message} (infrastructure: {cause}; not your code's doing, and this step is not counted)")
        self.cause: InfraCause = cause
        self.message = str(self.args[0])


def from_os_error(exc: OSError, doing: str) -> InfraFailure | None:
    """The infrastructure failure an OSError of the trusted side is, while ``doing`` something, or None."""
    if exc.errno in FULL:
        return InfraFailure("scratch_full", f"the server's scratch space is full while {doing}: {exc.strerror}")
    if exc.errno in OUT_OF:
        return InfraFailure("sandbox_start", f"the server ran out of processes, files or memory while {doing}: {exc.strerror}")
    return None
