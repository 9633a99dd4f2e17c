"""catalog: product listing with filters, sorting and pagination."""

from catalog.api import list_products
from catalog.errors import CatalogError, PageNotFound
from catalog.pagination import Page, paginate
from catalog.products import Product
from catalog.repository import ProductRepository

__all__ = ["CatalogError", "Page", "PageNotFound", "Product", "ProductRepository", "list_products", "paginate"]
