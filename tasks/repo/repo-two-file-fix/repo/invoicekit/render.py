"""Plain-text rendering of invoices for e-mail receipts."""

from invoicekit.invoice import Invoice
from invoicekit.money import format_money

WIDTH = 44


def _row(label: str, amount: str) -> str:
    return f"{label:<{WIDTH - len(amount)}}{amount}"


def render_lines(invoice: Invoice) -> list[str]:
    rows = []
    for line in invoice.lines:
        label = f"{line.quantity} x {line.description}"
        if line.discount_percent:
            label += f" (-{line.discount_percent}%)"
        rows.append(_row(label, format_money(line.net, invoice.currency)))
    return rows


def render_totals(invoice: Invoice) -> list[str]:
    rows = [_row("Net", format_money(invoice.net_total, invoice.currency))]
    for rate, (_net, tax) in invoice.breakdown().items():
        rows.append(_row(f"VAT {rate}%", format_money(tax, invoice.currency)))
    rows.append(_row("Total", format_money(invoice.gross_total, invoice.currency)))
    return rows


def render_invoice(invoice: Invoice) -> str:
    """The full receipt: header, one row per line, then net, VAT rows and total."""
    header = [f"Invoice {invoice.number} ({invoice.country})", "-" * WIDTH]
    body = render_lines(invoice)
    footer = ["-" * WIDTH, *render_totals(invoice)]
    return "\n".join(header + body + footer)
