"""Splitting a result list into numbered pages (numbered from 1)."""

from dataclasses import dataclass

from catalog.errors import CatalogError, PageNotFound

MAX_PER_PAGE = 100


def page_count(total: int, per_page: int) -> int:
    """Number of pages needed for ``total`` items. An empty result still has one (empty) page."""
    return max(1, total // per_page)


@dataclass(frozen=True)
class Page:
    items: list
    number: int
    per_page: int
    total: int

    @property
    def total_pages(self) -> int:
        return page_count(self.total, self.per_page)

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.number < self.total_pages

    @property
    def first_index(self) -> int:
        """1-based position of the first item on this page (0 when the page is empty)."""
        return (self.number - 1) * self.per_page + 1 if self.items else 0

    @property
    def last_index(self) -> int:
        return self.first_index + len(self.items) - 1 if self.items else 0


def paginate(items: list, page: int = 1, per_page: int = 20) -> Page:
    """Return page ``page`` of ``items``."""
    if per_page < 1 or per_page > MAX_PER_PAGE:
        raise CatalogError(f"per_page must be between 1 and {MAX_PER_PAGE}")
    if page < 1:
        raise CatalogError("page numbers start at 1")
    if page > page_count(len(items), per_page):
        raise PageNotFound(f"page {page} does not exist")
    start = (page - 1) * per_page
    return Page(items[start : start + per_page], page, per_page, len(items))
