"""What a defect site is: the one-line change into a kind's gold code, and the tests (witnesses) that
reveal it. Shared by every bug type's module, which lists its sites with ``Sites.add``.
"""

from __future__ import annotations

from dataclasses import dataclass

from env.families.procedural.blocks import Test, closure
from env.families.procedural.model import BugType


@dataclass(frozen=True)
class Witness:
    kind: str  # the test file it lives in: tests/test_<kind>.py
    test: Test
    needs: tuple[str, ...]  # kinds that must be in the service for this test
    direct: bool  # calls the faulty function itself
    symptom: str  # the incident report this test stands for


@dataclass(frozen=True)
class Site:
    id: str
    bug: BugType
    kind: str
    function: str  # "volume_bp", or "Cart.__init__" for a method
    gold: str
    buggy: str
    title: str
    witnesses: tuple[Witness, ...]

    def carried(self, kinds: frozenset[str]) -> list[Witness]:
        """The site's tests a service of ``kinds`` carries: the downstream ones when any fits, else the direct one.

        The same rule holds for every site, chosen or not, so which tests a suite has never tells which
        site holds the defect (the held-out suite follows it too).
        """
        present = [w for w in self.witnesses if closure(w.needs) <= kinds]
        if any(not w.direct for w in present):
            present = [w for w in present if not w.direct]  # the symptom shows in a caller
        return present


class Sites:
    """Sites in the order they are added (the order is part of the output: generation picks by index)."""

    def __init__(self) -> None:
        self.found: list[Site] = []

    def add(self, name: str, bug: BugType, kind: str, function: str, gold: str, buggy: str, title: str, *witnesses: Witness) -> None:
        self.found.append(Site(name, bug, kind, function, gold, buggy, title, tuple(witnesses)))
