"""Errors of the billing package."""


class BillingError(ValueError):
    """An operation that would leave the books inconsistent."""


class UnknownInvoice(BillingError, KeyError):
    """No invoice with that number."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown invoice"
