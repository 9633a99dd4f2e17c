"""Errors of the catalog package. The web layer maps them to HTTP responses."""


class CatalogError(ValueError):
    """A bad request parameter (HTTP 400)."""

    status = 400


class PageNotFound(CatalogError):
    """The requested page lies beyond the last page (HTTP 404)."""

    status = 404
