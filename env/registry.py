"""A name -> item table that refuses a second item under a name: task families, tools, profiles and agents
each plug into one.

    TOOLS = Registry("tool")
    TOOLS.add("view_file", ViewFile())     # a second "view_file" raises DuplicateName, naming both
    TOOLS["view_file"], "view_file" in TOOLS, list(TOOLS)   # a read-only mapping otherwise

Registration happens at import, where the item is defined; silently replacing one would change an episode's
behaviour depending on import order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")


class DuplicateName(ValueError):
    pass


class Registry(Mapping[str, T], Generic[T]):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> T:
        if name in self._items:
            article = "an" if self.kind[:1] in "aeiou" else "a"
            raise DuplicateName(f"{article} {self.kind} named {name!r} is already registered ({self._items[name]!r}); not adding {item!r}")
        self._items[name] = item
        return item

    def __getitem__(self, name: str) -> T:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._items)})"
