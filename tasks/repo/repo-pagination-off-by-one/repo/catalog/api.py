"""The product listing endpoint, independent of the web framework.

``params`` is the parsed query string: a dict of strings, e.g.
``{"category": "kitchen", "sort": "-price", "page": "2", "per_page": "10"}``.
"""

from catalog.errors import CatalogError
from catalog.filters import apply_filters
from catalog.pagination import paginate
from catalog.repository import ProductRepository
from catalog.sorting import sort_products

DEFAULT_PER_PAGE = 20


def _int_param(params: dict, name: str, default: int | None = None) -> int | None:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise CatalogError(f"{name} must be a whole number, got {raw!r}") from None


def list_products(repo: ProductRepository, params: dict) -> dict:
    """Filter, sort and paginate the catalog; return a JSON-ready dict."""
    products = apply_filters(
        repo.all(),
        category=params.get("category") or None,
        min_price=_int_param(params, "min_price"),
        max_price=_int_param(params, "max_price"),
        query=params.get("q"),
        in_stock_only=params.get("in_stock") in ("1", "true", "yes"),
    )
    products = sort_products(products, params.get("sort") or "name")
    page = paginate(products, _int_param(params, "page", 1), _int_param(params, "per_page", DEFAULT_PER_PAGE))
    return {
        "items": [p.to_dict() for p in page.items],
        "page": page.number,
        "per_page": page.per_page,
        "total": page.total,
        "total_pages": page.total_pages,
        "next_page": page.number + 1 if page.has_next else None,
        "previous_page": page.number - 1 if page.has_previous else None,
        "showing": f"{page.first_index}-{page.last_index} of {page.total}",
    }
