"""Tax computation for a set of invoice lines."""

from decimal import Decimal

from invoicekit.lines import LineItem
from invoicekit.money import quantize
from invoicekit.rates import vat_rate


def group_by_rate(lines: list[LineItem], country: str) -> dict[Decimal, Decimal]:
    """Sum of line nets for each VAT rate that occurs, highest rate first."""
    nets: dict[Decimal, Decimal] = {}
    for line in lines:
        rate = vat_rate(country, line.category)
        nets[rate] = nets.get(rate, Decimal("0")) + line.net
    return dict(sorted(nets.items(), reverse=True))


def tax_breakdown(lines: list[LineItem], country: str) -> dict[Decimal, tuple[Decimal, Decimal]]:
    """Map each VAT rate to ``(net, tax)`` for the lines taxed at that rate.

    Tax is computed on the summed net of each rate and rounded once, as
    required for EU invoices (not per line).
    """
    return {rate: (net, quantize(net * rate / 100)) for rate, net in group_by_rate(lines, country).items()}


def total_tax(lines: list[LineItem], country: str) -> Decimal:
    return sum((tax for _, tax in tax_breakdown(lines, country).values()), Decimal("0.00"))
