"""Exceptions raised by pricebook."""


class PricebookError(Exception):
    """Base class for every error raised by this package."""


class UnknownProduct(PricebookError, LookupError):
    """No product with the requested SKU exists in the catalog."""

    def __init__(self, sku: str):
        super().__init__(f"unknown product {sku!r}")
        self.sku = sku


class UnknownTier(PricebookError, LookupError):
    """The customer tier is not one of the configured tiers."""

    def __init__(self, tier: str):
        super().__init__(f"unknown customer tier {tier!r}")
        self.tier = tier


class InvalidPrice(PricebookError, ValueError):
    """A price or percentage could not be parsed or is out of range."""
