"""Building registries for an application."""

from __future__ import annotations

from measure.definitions import DEFAULT_DEFINITIONS
from measure.registry import UnitRegistry


def create_registry(extra: str = "", include_defaults: bool = True) -> UnitRegistry:
    """A registry with the built-in units and the definitions in ``extra``.

    ``extra`` is the text of a units file; its definitions are applied in
    order and take precedence over the built-in ones.
    """
    registry = UnitRegistry(DEFAULT_DEFINITIONS if include_defaults else None)
    if extra:
        registry.load(extra)
    return registry
