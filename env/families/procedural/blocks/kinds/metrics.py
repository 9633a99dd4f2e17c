"""The ``metrics`` kind: in-process counters.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, render, t


def build(w: World, present: frozenset[str]) -> Module:
    source = render(
        '''
        """In-process counters of $pkg: how often things happened since start (or the last reset).

            incr("orders.placed")        # 1
            value("orders.placed")       # 1
            snapshot("orders.")          # {"orders.placed": 1}
        """

        from __future__ import annotations

        import logging

        log = logging.getLogger(__name__)

        _COUNTERS: dict[str, int] = {}


        def incr(name: str, by: int = 1) -> int:
            """Add ``by`` to a counter and return its new value."""
            if by < 0:
                log.error("counter %s cannot go down (by=%d)", name, by)
                raise ValueError(f"counters only go up, got {by}")
            _COUNTERS[name] = _COUNTERS.get(name, 0) + by
            return _COUNTERS[name]


        def value(name: str) -> int:
            return _COUNTERS.get(name, 0)


        def snapshot(prefix: str = "") -> dict[str, int]:
            """The counters whose names start with ``prefix``, by name."""
            return {name: _COUNTERS[name] for name in sorted(_COUNTERS) if name.startswith(prefix)}


        def reset() -> None:
            """Every counter back to zero."""
            _COUNTERS.clear()
            log.info("counters reset")
        ''',
        pkg=w.pkg,
    )
    tests = [
        t("test_counters_count_up", """
            assert metrics.incr("test.widgets") == 1
            assert metrics.incr("test.widgets", 4) == 5
            assert metrics.value("test.widgets") == 5
            assert metrics.value("test.never") == 0
        """, ("metrics",)),
        t("test_counters_never_go_down", """
            with pytest.raises(ValueError):
                metrics.incr("test.gadgets", -1)
            assert metrics.value("test.gadgets") == 0
        """, ("metrics",)),
        t("test_snapshot_filters_by_prefix", """
            metrics.incr("http.ok")
            metrics.incr("http.error", 2)
            metrics.incr("db.query")
            assert metrics.snapshot("http.") == {"http.error": 2, "http.ok": 1}
        """, ("metrics",)),
    ]
    return Module(source, tests)
