"""Errors raised by invoicekit."""


class InvoiceError(ValueError):
    """An invoice or line item is invalid."""
