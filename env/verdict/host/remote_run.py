"""What the proxies, the local classes, the stand-ins and the importer use of a run's conversation (``RemoteRun``).

``conversation.Remote`` is the one implementation; it imports those modules, so they name it through this protocol
instead of importing it: the test host's modules form no import circle.

    def class_proxy(remote: RemoteRun, number: int, info: dict) -> RemoteClass: ...
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class RemoteRun(Protocol):
    """One sandbox run seen from the test process: requests about project objects, and the proxies made for them."""

    proxies: dict[int, Any]  # a handle -> its proxy, in the order they were made (``classes.made_now`` counts them)
    shims: dict[int, type]  # a project class's handle -> the local base standing for it beside local bases

    def op(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """One operation on the sandbox's objects: its decoded value."""
        ...

    def request(self, name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[Any, int]:
        """One operation: its decoded value and the epoch its containers are current at (``fresh``)."""
        ...

    def fresh(self, stamp: int) -> bool:
        """Whether a container copied from a reply stamped ``stamp`` is still the project's container as it is."""
        ...

    def iterated(self, iterator: Any, caller: types.FrameType) -> Any:
        """What the caller of ``iter()`` of a project object gets, ``iterator`` being what the sandbox gave."""
        ...

    def next(self, iterator: Any, caller: types.FrameType) -> Any:
        """``next()`` of a project iterator by anyone but a consumer that takes every item (the items a pull brought first)."""
        ...

    def iter_feeding(self, obj: Any, caller: types.FrameType) -> Any:
        """``iter()`` of a project object for a consumer that takes every item: its first pull comes with it."""
        ...

    def size(self, obj: Any, caller: types.FrameType) -> Any:
        """``len()`` of a project object (the size an "iterpull" brought for this caller, if it did)."""
        ...

    def call_feeding(self, feeding: tuple[str, tuple[int, ...]], caller: types.FrameType, target: Any, name: str | None,
                     args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        """A call whose result a consumer takes right after: the call and the consumer's first pull in one request."""
        ...

    def retype(self, known: Any, kind: Any) -> None:
        """The proxy ``known`` becomes an instance of ``kind``, its object's class now."""
        ...

    def test_defined(self, kind: type) -> bool:
        """Whether ``kind`` is a class the tests define (in this task's tests tree)."""
        ...

    def sandbox_class(self, cls: type) -> int:
        """The handle of ``cls``'s twin in the sandbox (a class the tests define)."""
        ...
