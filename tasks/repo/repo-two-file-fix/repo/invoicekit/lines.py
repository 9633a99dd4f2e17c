"""Invoice line items."""

from dataclasses import dataclass
from decimal import Decimal

from invoicekit.errors import InvoiceError
from invoicekit.money import quantize
from invoicekit.rates import STANDARD


@dataclass(frozen=True)
class LineItem:
    """``quantity`` units of a product at a net ``unit_price``.

    ``discount_percent`` is a percentage taken off the line (``10`` means 10 %).
    """

    description: str
    quantity: int
    unit_price: Decimal
    category: str = STANDARD
    discount_percent: Decimal = Decimal("0")

    def __post_init__(self) -> None:
        if self.quantity <= 0:
            raise InvoiceError(f"quantity must be positive for {self.description!r}")
        if Decimal(self.unit_price) < 0:
            raise InvoiceError(f"negative price for {self.description!r}")
        if not 0 <= Decimal(self.discount_percent) <= 100:
            raise InvoiceError(f"discount out of range for {self.description!r}")

    @property
    def net(self) -> Decimal:
        """Net amount of the line after discount, rounded to cents."""
        gross_before_discount = Decimal(self.unit_price) * self.quantity
        discount = gross_before_discount * Decimal(self.discount_percent) / 100
        return quantize(gross_before_discount - discount)
