"""invoicekit: VAT invoices for small EU web shops."""

from invoicekit.errors import InvoiceError
from invoicekit.invoice import Invoice
from invoicekit.lines import LineItem
from invoicekit.render import render_invoice

__version__ = "3.0.1"

__all__ = ["Invoice", "InvoiceError", "LineItem", "render_invoice"]
