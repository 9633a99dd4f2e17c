"""The product record."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Product:
    """A product; ``price`` is in cents."""

    sku: str
    name: str
    price: int
    category: str
    tags: frozenset[str] = field(default_factory=frozenset)
    in_stock: bool = True

    def to_dict(self) -> dict:
        return {
            "sku": self.sku,
            "name": self.name,
            "price": self.price,
            "category": self.category,
            "tags": sorted(self.tags),
            "in_stock": self.in_stock,
        }
