"""The ``settings`` kind: runtime settings: defaults, overrides, snapshots.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from typing import Any

from env.families.procedural.blocks.world import Module, World, block, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
    values: list[tuple[str, Any]] = [("service", f"{w.pkg}-api"), ("currency", w.currency), ("default_region", w.home)]
    if "tax" in present:
        values += [("vat_rates_bp", dict(w.vat)), ("reduced_rates_bp", dict(w.reduced)), ("reduced_categories", [w.reduced_category])]
    if "shipping" in present:
        values += [("free_shipping_over", w.free_over), ("zone_base_cents", dict(w.zone_base)), ("per_kg_cents", w.per_kg), ("express_per_kg_cents", w.express_per_kg)]
    if "retry" in present:
        values += [("retry_attempts", w.retry_attempts), ("retry_base_ms", w.retry_base_ms), ("retry_cap_s", w.retry_cap_s)]
    if "rollout" in present:
        values += [("rollout_percent", dict(w.flag_percent))]
    if "inventory" in present:
        values += [("low_stock_threshold", w.low_threshold)]
    if "users" in present:
        values += [("password_min_length", w.password_min), ("max_login_failures", w.max_failures)]
    if "notifications" in present:
        values += [("sender", w.sender), ("outbox_limit", w.outbox_limit)]
    source = render(
        '''
        """Runtime settings of the $pkg service.

            get("currency")                  # the current value
            previous = override(currency="X")  # tools and tests change settings at runtime
            reset()                          # back to DEFAULTS

        Other modules read settings through get() or, to work on a private copy, snapshot().
        """

        from __future__ import annotations

        import copy
        import logging
        from typing import Any

        log = logging.getLogger(__name__)

        DEFAULTS: dict[str, Any] = $defaults

        _current: dict[str, Any] = copy.deepcopy(DEFAULTS)


        def get(key: str) -> Any:
            """The current value of one setting (KeyError for a name that is not a setting)."""
            return _current[key]


        def snapshot() -> dict[str, Any]:
            """A private copy of every setting, safe to modify."""
            return copy.deepcopy(_current)


        def override(**values: Any) -> dict[str, Any]:
            """Change settings at runtime; returns the values they had before."""
            unknown = sorted(name for name in values if name not in DEFAULTS)
            if unknown:
                log.error("refusing unknown settings: %s", ", ".join(unknown))
                raise KeyError(unknown[0])
            previous = {name: _current[name] for name in values}
            _current.update(copy.deepcopy(values))
            log.info("settings changed: %s", ", ".join(sorted(values)))
            return previous


        def reset() -> None:
            """Every setting back to its default."""
            _current.clear()
            _current.update(copy.deepcopy(DEFAULTS))
            log.info("settings reset to defaults")
        ''',
        pkg=w.pkg,
        defaults=block(values, "}"),
    )
    tests = [
        t("test_defaults_are_loaded", f"""
            assert settings.get("currency") == {q(w.currency)}
            assert settings.get("service") == {q(w.pkg + "-api")}
            assert settings.get("default_region") == {q(w.home)}
        """, ("settings",)),
        t("test_override_returns_previous_values_and_reset_restores", f"""
            previous = settings.override(currency={q(w.other_currency)})
            assert previous == {{"currency": {q(w.currency)}}}
            assert settings.get("currency") == {q(w.other_currency)}
            settings.reset()
            assert settings.get("currency") == {q(w.currency)}
        """, ("settings",)),
        t("test_unknown_settings_are_refused", f"""
            with pytest.raises(KeyError):
                settings.override(colour="teal")
            with pytest.raises(KeyError):
                settings.get("colour")
            assert settings.get("currency") == {q(w.currency)}
        """, ("settings",)),
    ]
    return Module(source, tests)
