"""Customer tiers and volume breaks.

A quote's discount is the tier discount plus the best volume break the
quantity qualifies for, capped at ``MAX_DISCOUNT``.
"""

from __future__ import annotations

from decimal import Decimal

from pricebook.errors import UnknownTier

TIER_DISCOUNTS: dict[str, Decimal] = {
    "standard": Decimal("0"),
    "silver": Decimal("5"),
    "gold": Decimal("10"),
}

# (minimum quantity, extra discount percent), highest threshold first
VOLUME_BREAKS: tuple[tuple[int, Decimal], ...] = (
    (100, Decimal("8")),
    (50, Decimal("5")),
    (10, Decimal("2")),
)

MAX_DISCOUNT = Decimal("15")


def tier_discount(tier: str) -> Decimal:
    try:
        return TIER_DISCOUNTS[tier.lower()]
    except KeyError:
        raise UnknownTier(tier) from None


def volume_discount(quantity: int) -> Decimal:
    for threshold, extra in VOLUME_BREAKS:
        if quantity >= threshold:
            return extra
    return Decimal("0")


def discount_for(tier: str, quantity: int) -> Decimal:
    """Total discount percent for ``quantity`` units bought by a ``tier`` customer."""
    return min(tier_discount(tier) + volume_discount(quantity), MAX_DISCOUNT)
