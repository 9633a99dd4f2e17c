"""Selecting products by request criteria."""

from catalog.products import Product


def matches_text(product: Product, query: str) -> bool:
    """Every word of ``query`` occurs in the name, category or a tag (ignoring case)."""
    haystack = " ".join([product.name, product.category, *product.tags]).lower()
    return all(word in haystack for word in query.lower().split())


def apply_filters(
    products: list[Product],
    *,
    category: str | None = None,
    min_price: int | None = None,
    max_price: int | None = None,
    query: str | None = None,
    in_stock_only: bool = False,
) -> list[Product]:
    """The products that satisfy every given criterion, in their original order."""
    selected = []
    for product in products:
        if category is not None and product.category != category:
            continue
        if min_price is not None and product.price < min_price:
            continue
        if max_price is not None and product.price > max_price:
            continue
        if query and not matches_text(product, query):
            continue
        if in_stock_only and not product.in_stock:
            continue
        selected.append(product)
    return selected
