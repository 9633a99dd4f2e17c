"""The product catalog.

The catalog keeps a ``revision`` counter that increases on every change to its
contents. Consumers that derive data from the catalog (such as the quoting
engine's memo cache) compare revisions to know when their data is out of date.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Iterator

from pricebook.errors import InvalidPrice, UnknownProduct
from pricebook.money import apply_percent, to_money


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    unit_price: Decimal
    category: str = "general"


def _normalise_sku(sku: str) -> str:
    return sku.strip().upper()


class Catalog:
    """A mutable set of products indexed by SKU."""

    def __init__(self) -> None:
        self._products: dict[str, Product] = {}
        self._revision = 0

    @property
    def revision(self) -> int:
        """A counter that increases whenever a product is added, removed or repriced."""
        return self._revision

    def _touch(self) -> None:
        self._revision += 1

    def add(self, sku: str, name: str, unit_price: Decimal | int | str, category: str = "general") -> Product:
        """Add a new product; adding an existing SKU replaces it."""
        price = to_money(unit_price)
        if price < 0:
            raise InvalidPrice(f"negative price for {sku!r}: {price}")
        product = Product(_normalise_sku(sku), name, price, category.lower())
        self._products[product.sku] = product
        self._touch()
        return product

    def remove(self, sku: str) -> Product:
        try:
            product = self._products.pop(_normalise_sku(sku))
        except KeyError:
            raise UnknownProduct(sku) from None
        self._touch()
        return product

    def get(self, sku: str) -> Product:
        try:
            return self._products[_normalise_sku(sku)]
        except KeyError:
            raise UnknownProduct(sku) from None

    def set_price(self, sku: str, unit_price: Decimal | int | str) -> Product:
        """Change the unit price of one product."""
        price = to_money(unit_price)
        if price < 0:
            raise InvalidPrice(f"negative price for {sku!r}: {price}")
        product = replace(self.get(sku), unit_price=price)
        self._products[product.sku] = product
        self._touch()
        return product

    def apply_markup(self, category: str, percent: Decimal | int | str) -> list[Product]:
        """Raise (or, with a negative ``percent``, lower) every price in ``category``.

        Returns the repriced products, sorted by SKU.
        """
        if Decimal(percent) <= -100:
            raise InvalidPrice(f"markup of {percent}% would make prices non-positive")
        category = category.lower()
        changed = []
        for product in self.products(category):
            updated = replace(product, unit_price=apply_percent(product.unit_price, percent))
            self._products[product.sku] = updated
            changed.append(updated)
        return changed

    def products(self, category: str | None = None) -> list[Product]:
        """All products (optionally only one category), sorted by SKU."""
        found = [p for p in self._products.values() if category is None or p.category == category.lower()]
        return sorted(found, key=lambda p: p.sku)

    def categories(self) -> list[str]:
        return sorted({p.category for p in self._products.values()})

    def __contains__(self, sku: object) -> bool:
        return isinstance(sku, str) and _normalise_sku(sku) in self._products

    def __iter__(self) -> Iterator[Product]:
        return iter(self.products())

    def __len__(self) -> int:
        return len(self._products)
