"""Quoting engine.

Computing a quote is cheap here, but in production the engine sits behind a
storefront that asks for the same (sku, quantity, tier) triple many times per
page, so results are memoised. Cache entries are tagged with the catalog
revision they were computed from and are ignored once the catalog moves on.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pricebook.catalog import Catalog
from pricebook.money import percent_of, to_money
from pricebook.tiers import discount_for, tier_discount


@dataclass(frozen=True)
class Quote:
    sku: str
    quantity: int
    unit_price: Decimal
    discount_pct: Decimal
    discount: Decimal
    total: Decimal


class PriceEngine:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._cache: dict[tuple[str, int, str], tuple[int, Quote]] = {}
        self.hits = 0
        self.misses = 0

    def quote(self, sku: str, quantity: int, tier: str = "standard") -> Quote:
        """Price ``quantity`` units of ``sku`` for a customer of ``tier``."""
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        tier_discount(tier)  # validate before touching the cache
        key = (sku.strip().upper(), quantity, tier.lower())
        revision = self.catalog.revision
        cached = self._cache.get(key)
        if cached is not None and cached[0] == revision:
            self.hits += 1
            return cached[1]
        self.misses += 1
        quote = self._compute(key[0], quantity, key[2])
        self._cache[key] = (revision, quote)
        return quote

    def _compute(self, sku: str, quantity: int, tier: str) -> Quote:
        product = self.catalog.get(sku)
        gross = to_money(product.unit_price * quantity)
        pct = discount_for(tier, quantity)
        discount = percent_of(gross, pct)
        return Quote(
            sku=product.sku,
            quantity=quantity,
            unit_price=product.unit_price,
            discount_pct=pct,
            discount=discount,
            total=gross - discount,
        )

    def clear_cache(self) -> None:
        self._cache.clear()
        self.hits = 0
        self.misses = 0

    def cache_info(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "size": len(self._cache)}
