"""Sort orders offered by the listing endpoint."""

from catalog.errors import CatalogError
from catalog.products import Product

SORT_KEYS = {
    "name": lambda p: (p.name.lower(), p.sku),
    "price": lambda p: (p.price, p.name.lower(), p.sku),
    "sku": lambda p: p.sku,
}


def sort_products(products: list[Product], order: str = "name") -> list[Product]:
    """Sort by ``order``; a leading ``-`` reverses it (``"-price"``)."""
    descending = order.startswith("-")
    key = SORT_KEYS.get(order.lstrip("-"))
    if key is None:
        raise CatalogError(f"cannot sort by {order!r}")
    return sorted(products, key=key, reverse=descending)
