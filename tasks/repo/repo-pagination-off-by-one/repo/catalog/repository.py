"""In-memory product storage."""

from catalog.errors import CatalogError
from catalog.products import Product


class ProductRepository:
    """Products by SKU, kept in insertion order."""

    def __init__(self) -> None:
        self._by_sku: dict[str, Product] = {}

    def add(self, product: Product) -> None:
        if product.sku in self._by_sku:
            raise CatalogError(f"duplicate SKU {product.sku!r}")
        self._by_sku[product.sku] = product

    def get(self, sku: str) -> Product:
        try:
            return self._by_sku[sku]
        except KeyError:
            raise CatalogError(f"unknown SKU {sku!r}") from None

    def all(self) -> list[Product]:
        return list(self._by_sku.values())

    def __len__(self) -> int:
        return len(self._by_sku)
