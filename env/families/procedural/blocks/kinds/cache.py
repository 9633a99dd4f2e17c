"""The ``cache`` kind: a least-recently-used cache with hit/miss counters.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, render, t


def build(w: World, present: frozenset[str]) -> Module:
    source = render(
        '''
        """A small least-recently-used cache; hits and misses are counted in metrics.

            quotes = Cache("quotes", capacity=128)
            quotes.put(key, value)
            quotes.get(key)        # the value, or None (a miss)
            quotes.stats()         # {"hits": ..., "misses": ..., "size": ...}
        """

        from __future__ import annotations

        import logging
        from collections import OrderedDict
        from typing import Any

        from $pkg import metrics

        log = logging.getLogger(__name__)


        class Cache:
            def __init__(self, name: str, capacity: int) -> None:
                if capacity < 1:
                    log.error("cache %s: capacity %d is too small", name, capacity)
                    raise ValueError(f"capacity must be at least 1, got {capacity}")
                self.name = name
                self.capacity = capacity
                self._data: OrderedDict[Any, Any] = OrderedDict()

            def get(self, key: Any) -> Any:
                if key in self._data:
                    self._data.move_to_end(key)
                    metrics.incr(f"cache.{self.name}.hits")
                    return self._data[key]
                metrics.incr(f"cache.{self.name}.misses")
                return None

            def put(self, key: Any, value: Any) -> None:
                self._data[key] = value
                self._data.move_to_end(key)
                while len(self._data) > self.capacity:
                    evicted, _ = self._data.popitem(last=False)
                    log.info("cache %s full: evicted %r", self.name, evicted)

            def invalidate(self, key: Any = None) -> None:
                """Forget one key, or everything."""
                if key is None:
                    self._data.clear()
                    log.info("cache %s cleared", self.name)
                else:
                    self._data.pop(key, None)

            def __len__(self) -> int:
                return len(self._data)

            def stats(self) -> dict[str, int]:
                return {
                    "hits": metrics.value(f"cache.{self.name}.hits"),
                    "misses": metrics.value(f"cache.{self.name}.misses"),
                    "size": len(self._data),
                }
        ''',
        pkg=w.pkg,
    )
    tests = [
        t("test_put_and_get", """
            quotes = cache.Cache("test-basic", 3)
            quotes.put("a", 1)
            assert quotes.get("a") == 1
            assert quotes.get("zz") is None
            assert quotes.stats() == {"hits": 1, "misses": 1, "size": 1}
        """, ("cache",)),
        t("test_invalidate_one_key_or_all", """
            quotes = cache.Cache("test-invalidate", 5)
            quotes.put("a", 1)
            quotes.put("b", 2)
            quotes.invalidate("a")
            assert quotes.get("a") is None
            assert len(quotes) == 1
            quotes.invalidate()
            assert len(quotes) == 0
        """, ("cache",)),
        t("test_capacity_must_be_positive", """
            with pytest.raises(ValueError):
                cache.Cache("test-empty", 0)
        """, ("cache",)),
    ]
    return Module(source, tests)
