"""The invoice document."""

from decimal import Decimal

from invoicekit.errors import InvoiceError
from invoicekit.lines import LineItem
from invoicekit.rates import supported_countries
from invoicekit.tax import tax_breakdown, total_tax


class Invoice:
    """An invoice to a customer in ``country`` (ISO code such as ``"DE"``)."""

    def __init__(self, number: str, country: str, currency: str = "EUR") -> None:
        country = country.upper()
        if country not in supported_countries():
            raise InvoiceError(f"cannot invoice customers in {country!r}")
        self.number = number
        self.country = country
        self.currency = currency
        self.lines: list[LineItem] = []

    def add(self, line: LineItem) -> "Invoice":
        self.lines.append(line)
        return self

    def __len__(self) -> int:
        return len(self.lines)

    @property
    def net_total(self) -> Decimal:
        return sum((line.net for line in self.lines), Decimal("0.00"))

    @property
    def tax_total(self) -> Decimal:
        return total_tax(self.lines, self.country)

    @property
    def gross_total(self) -> Decimal:
        return self.net_total + self.tax_total

    def breakdown(self) -> dict[Decimal, tuple[Decimal, Decimal]]:
        """VAT rate -> ``(net, tax)``, highest rate first."""
        return tax_breakdown(self.lines, self.country)
