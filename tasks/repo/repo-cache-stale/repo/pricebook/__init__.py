"""pricebook: catalog, tiered pricing and order totals."""

from pricebook.catalog import Catalog, Product
from pricebook.errors import InvalidPrice, PricebookError, UnknownProduct, UnknownTier
from pricebook.orders import Order, OrderSummary
from pricebook.pricing import PriceEngine, Quote

__all__ = [
    "Catalog",
    "InvalidPrice",
    "Order",
    "OrderSummary",
    "PriceEngine",
    "PricebookError",
    "Product",
    "Quote",
    "UnknownProduct",
    "UnknownTier",
]
