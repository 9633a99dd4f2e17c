"""The world model of a generated service: every name and constant of one service (``draw_world``),
the reference arithmetic tests' expected values come from (``Ref``), and the types and text helpers
the kinds build their modules and tests with (``Test``, ``Module``, ``Kind``, ``render``, ``lit`` ...).

Everything here is shared by the kinds (``blocks.kinds``) and the defects (``bugs``); none of it
depends on which kinds a service holds.
"""

from __future__ import annotations

import json
import random
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from string import Template
from typing import Any

# -- the world: every name and constant of one generated service ------------------------------


@dataclass(frozen=True)
class Theme:
    shop: str
    packages: tuple[str, ...]
    prefix: str
    categories: tuple[str, str, str, str]
    items: tuple[str, ...]


THEMES: tuple[Theme, ...] = (
    Theme("bookshop", ("pagehouse", "folioworks", "inkstack"), "BK", ("fiction", "travel", "science", "children"),
          ("Night Ferry", "Atlas of Small Rivers", "The Salt Road", "Paper Moons", "Field Guide to Moss", "Quiet Engines",
           "The Lantern Keeper", "Winter Orchard", "Counting Stars", "Harbour Lights")),
    Theme("coffee roaster", ("roastwell", "cremalab", "beanledger"), "CF", ("espresso", "filter", "decaf", "equipment"),
          ("Yirgacheffe Light", "Sumatra Dark", "House Blend", "Hand Grinder", "Pour Over Kettle", "Swiss Water Decaf",
           "Colombia Huila", "Paper Filters", "Cold Brew Jar", "Kenya Peaberry")),
    Theme("bike parts shop", ("spokeline", "chainworks", "velodepot"), "BI", ("parts", "tyres", "lights", "tools"),
          ("Chain Eleven Speed", "Gravel Tyre", "Front Light", "Torque Wrench", "Brake Pads", "Inner Tube", "Rear Light",
           "Folding Multitool", "Cassette Wide Range", "Tyre Levers")),
    Theme("garden centre", ("greenbay", "sproutly", "mulchmart"), "GD", ("seeds", "tools", "soil", "pots"),
          ("Tomato Seeds", "Pruning Shears", "Potting Soil", "Terracotta Pot", "Basil Seeds", "Garden Trowel",
           "Peat Free Compost", "Hanging Basket", "Sunflower Seeds", "Watering Can")),
    Theme("pet supplies shop", ("pawpost", "kibbleco", "furnest"), "PT", ("food", "toys", "grooming", "beds"),
          ("Salmon Kibble", "Rope Toy", "Slicker Brush", "Donut Bed", "Chicken Pate", "Squeaky Ball", "Nail Clipper",
           "Travel Mat", "Duck Treats", "Feather Wand")),
    Theme("electronics store", ("voltcrate", "wirehaus", "ampstore"), "EL", ("cables", "audio", "power", "storage"),
          ("Braided Cable", "Studio Headphones", "Wall Charger", "Portable Drive", "Bluetooth Speaker", "Power Bank",
           "Memory Card", "Patch Cable", "Desk Microphone", "Travel Adapter")),
    Theme("stationery shop", ("inkwellery", "notebin", "quillhub"), "ST", ("paper", "pens", "art", "office"),
          ("Dotted Notebook", "Fountain Pen", "Watercolour Set", "Desk Organiser", "Sketch Pad", "Gel Pens",
           "Brush Markers", "Paper Clips", "Letter Paper", "Ink Cartridges")),
    Theme("tea merchant", ("leafline", "steepwise", "chaiworks"), "TE", ("green", "black", "herbal", "teaware"),
          ("Sencha Spring", "Assam Breakfast", "Rooibos Vanilla", "Glass Teapot", "Jasmine Pearls", "Earl Grey Blue",
           "Peppermint Leaf", "Tea Strainer", "Gyokuro Shade", "Chamomile Gold")),
)

REGIONS = ("DE", "FR", "NL", "AT", "BE", "ES", "IT", "PL", "SE", "DK", "IE", "PT", "FI", "CZ")
CURRENCIES = ("EUR", "GBP", "SEK", "CHF", "DKK", "PLN")
PEOPLE = ("ada", "bruno", "chen", "dara", "emil", "farah", "goran", "hana", "ines", "jonas", "kemal", "lena", "milo", "nora")
FLAGS = ("new_checkout", "fast_search", "gift_cards", "one_click", "smart_reorder", "live_chat", "beta_reports", "dark_mode")
JOBS = ("sync-stock", "send-digest", "expire-carts", "rebuild-search", "close-day", "retry-webhooks")
COUPON_WORDS = ("WELCOME", "SPRING", "LOYAL", "FRIENDS", "AUTUMN", "THANKS", "HELLO", "SUMMER")
PASSWORD_WORDS = ("amber", "otter", "cobalt", "willow", "ember", "harbor", "maple", "quartz", "saffron", "tundra")


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    category: str
    price: int
    weight: int


@dataclass(frozen=True)
class Account:
    email: str
    name: str
    password: str
    tier: str


@dataclass(frozen=True)
class World:
    theme: Theme
    pkg: str
    currency: str
    other_currency: str
    products: tuple[Product, ...]
    doubles: tuple[str, str]  # categories holding two products
    reduced_category: str
    regions: tuple[str, str, str, str]  # home (domestic), two EU neighbours, one far away
    vat: dict[str, int]
    reduced: dict[str, int]
    zone_base: dict[str, int]
    per_kg: int
    express_per_kg: int
    free_over: int  # whole currency units
    tiers: dict[str, int]  # percent
    breaks: tuple[tuple[int, int], tuple[int, int]]  # (minimum quantity, bp), ascending
    coupons: dict[str, int]
    stock: dict[str, int]
    low_threshold: int
    retry_attempts: int
    retry_base_ms: int
    retry_cap_s: int
    flags: tuple[str, str, str]
    flag_percent: dict[str, int]
    accounts: tuple[Account, Account, Account]
    password_min: int
    max_failures: int
    sender: str
    outbox_limit: int
    order_prefix: str
    fee_bp: int
    fee_fixed: int
    earn: dict[str, int]
    redeem_step: int
    voucher_cents: int
    jobs: tuple[str, str, str]
    staff: tuple[str, ...]

    # -- product roles: which product a test uses for what ---------------------------------

    @property
    def reduced_product(self) -> Product:
        return next(p for p in self.products if p.category == self.reduced_category)

    @property
    def normal(self) -> list[Product]:
        """Products at the standard VAT rate, main test products first, the two low-stock ones last."""
        return [p for p in self.products if p.category != self.reduced_category]

    @property
    def a(self) -> Product:
        return self.normal[0]

    @property
    def b(self) -> Product:
        return self.normal[1]

    @property
    def low(self) -> list[Product]:
        return self.normal[3:5]

    @property
    def home(self) -> str:
        return self.regions[0]

    @property
    def zones(self) -> dict[str, str]:
        return {self.regions[0]: "domestic", self.regions[1]: "eu", self.regions[2]: "eu"}

    def in_category(self, category: str) -> list[Product]:
        return sorted((p for p in self.products if p.category == category), key=lambda p: p.sku)

    def unused_sku(self) -> str:
        taken = {p.sku for p in self.products}
        return next(f"{self.theme.prefix}-{n}" for n in range(999, 99, -1) if f"{self.theme.prefix}-{n}" not in taken)


def draw_world(rng: random.Random) -> World:
    """Every constant of one service, drawn in a fixed order from ``rng``."""
    theme = THEMES[rng.randrange(len(THEMES))]
    pkg = rng.choice(theme.packages)
    currency, other_currency = rng.sample(CURRENCIES, 2)
    numbers = sorted(rng.sample(range(100, 990), 6))
    names = rng.sample(theme.items, 6)
    cats = rng.sample(theme.categories, 4)
    assign = [cats[0], cats[0], cats[1], cats[1], cats[2], cats[3]]
    rng.shuffle(assign)
    products = [
        Product(f"{theme.prefix}-{n}", name, cat, rng.randrange(3, 60) * 100 + rng.choice((0, 49, 50, 90, 95, 99)), rng.randrange(12, 240) * 10)
        for n, name, cat in zip(numbers, names, assign, strict=True)
    ]
    reduced_category = cats[3]
    normal = [p for p in products if p.category != reduced_category]
    rng.shuffle(normal)
    ordered = tuple(normal + [p for p in products if p.category == reduced_category])
    regions = tuple(rng.sample(REGIONS, 4))
    vat = {r: rng.choice((1700, 1900, 2000, 2100, 2200, 2300, 2400, 2500)) for r in regions}
    reduced = {r: rng.choice((500, 600, 700, 900, 1000, 1200)) for r in regions}
    domestic = rng.choice((390, 450, 490, 590))
    eu = domestic + rng.choice((300, 400, 500))
    zone_base = {"domestic": domestic, "eu": eu, "world": eu + rng.choice((600, 800, 1000))}
    low_threshold = rng.randint(2, 5)
    low_skus = {p.sku for p in normal[3:5]}
    stock = {p.sku: rng.randint(1, low_threshold) if p.sku in low_skus else rng.randint(low_threshold + 18, low_threshold + 60) for p in products}
    q1 = rng.randint(5, 12)
    bp1 = rng.choice((200, 250, 300, 400))
    breaks = ((q1, bp1), (q1 + rng.randint(8, 20), bp1 + rng.choice((200, 300, 400, 500))))
    words = rng.sample(COUPON_WORDS, 2)
    coupons = {f"{word}{rate // 100}": rate for word, rate in ((words[0], rng.choice((500, 1000))), (words[1], rng.choice((1200, 1500, 2000))))}
    flags = tuple(rng.sample(FLAGS, 3))
    people = rng.sample(PEOPLE, 3)
    domain = rng.choice(("example.org", "example.com", "example.net"))
    tiers_of = ["gold", "silver", "standard"]
    rng.shuffle(tiers_of)
    accounts = tuple(
        Account(f"{person}@{domain}", person.title(), "-".join(rng.sample(PASSWORD_WORDS, 2)) + f"-{rng.randint(10, 99)}", tier)
        for person, tier in zip(people, tiers_of, strict=True)
    )
    return World(
        theme=theme,
        pkg=pkg,
        currency=currency,
        other_currency=other_currency,
        products=ordered,
        doubles=(cats[0], cats[1]),
        reduced_category=reduced_category,
        regions=regions,  # type: ignore[arg-type]
        vat=vat,
        reduced=reduced,
        zone_base=zone_base,
        per_kg=rng.choice((80, 100, 120, 150)),
        express_per_kg=rng.choice((150, 200, 250)),
        free_over=rng.choice((29, 39, 49, 59, 75, 99)),
        tiers={"standard": 0, "silver": rng.randint(2, 4), "gold": rng.randint(6, 12)},
        breaks=breaks,
        coupons=coupons,
        stock=stock,
        low_threshold=low_threshold,
        retry_attempts=rng.randint(3, 6),
        retry_base_ms=rng.choice((100, 150, 200, 250, 300, 400)),
        retry_cap_s=rng.randint(2, 8),
        flags=flags,  # type: ignore[arg-type]
        flag_percent={flags[0]: 0, flags[1]: rng.choice((10, 25, 50)), flags[2]: 100},
        accounts=accounts,  # type: ignore[arg-type]
        password_min=rng.randint(8, 12),
        max_failures=rng.randint(3, 5),
        sender=f"orders@{pkg}.example",
        outbox_limit=rng.randint(5, 12),
        order_prefix=pkg[:3].upper(),
        fee_bp=rng.choice((140, 175, 190, 250, 290)),
        fee_fixed=rng.choice((10, 20, 25, 30, 35)),
        earn={"standard": 1, "silver": 2, "gold": rng.choice((3, 4, 5))},
        redeem_step=rng.choice((100, 200, 250, 500)),
        voucher_cents=rng.choice((100, 200, 500)),
        jobs=tuple(rng.sample(JOBS, 3)),  # type: ignore[arg-type]
        staff=tuple(rng.sample(PEOPLE, 5)),
    )


# -- the reference arithmetic tests' expected values come from ------------------------------


class Ref:
    """The service's rules, restated: what a correct service returns (integer cents, bp)."""

    def __init__(self, w: World):
        self.w = w

    @staticmethod
    def pct(cents: int, bp: int) -> int:
        return (cents * bp + 5000) // 10000

    @staticmethod
    def div(numerator: int, denominator: int) -> int:
        return (2 * numerator + denominator) // (2 * denominator)

    def volume(self, quantity: int) -> int:
        rate = 0
        for minimum, bp in self.w.breaks:
            if quantity >= minimum:
                rate = bp
        return rate

    def quote(self, p: Product, quantity: int, tier: str = "standard") -> tuple[int, int]:
        """(discount, total) of a quote."""
        discount = self.pct(p.price * quantity, max(self.w.tiers[tier] * 100, self.volume(quantity)))
        return discount, p.price * quantity - discount

    def zone(self, region: str) -> str:
        return self.w.zones.get(region.strip().upper(), "world")

    def shipping(self, weight: int, region: str, subtotal: int = 0, express: bool = False) -> int:
        zone = self.zone(region)
        if not express and zone == "domestic" and subtotal >= self.w.free_over * 100:
            return 0
        kilos = -(-weight // 1000)
        return self.w.zone_base[zone] + kilos * (self.w.per_kg + (self.w.express_per_kg if express else 0))

    def tax(self, cents: int, region: str, category: str | None = None) -> int:
        rates = self.w.reduced if category == self.w.reduced_category else self.w.vat
        return self.pct(cents, rates[region])

    def checkout(self, lines: list[tuple[Product, int]], region: str, tier: str = "standard", coupon: str = "") -> tuple[int, int, int, int, int]:
        """(subtotal, shipping, tax, coupon, total) of a cart checked out in ``region``."""
        totals = [(p, self.quote(p, q, tier)[1]) for p, q in lines]
        subtotal = sum(t for _, t in totals)
        goods_tax = sum(self.tax(t, region, p.category) for p, t in totals)
        ship = self.shipping(sum(p.weight * q for p, q in lines), region, subtotal)
        ship_tax = self.tax(ship, region)
        gross = subtotal + goods_tax + ship + ship_tax
        off = self.pct(gross, self.w.coupons[coupon.strip().upper()]) if coupon else 0
        return subtotal, ship, goods_tax + ship_tax, off, gross - off

    def money(self, cents: int) -> str:
        sign = "-" if cents < 0 else ""
        units, rest = divmod(abs(cents), 100)
        return f"{sign}{units}.{rest:02d} {self.w.currency}"

    def fee(self, cents: int) -> int:
        return self.pct(cents, self.w.fee_bp) + self.w.fee_fixed

    @staticmethod
    def words(text: str) -> list[str]:
        return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]

    def index(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for category in sorted({p.category for p in self.w.products}):
            for p in self.w.in_category(category):
                for word in self.words(p.name) + [category]:
                    skus = found.setdefault(word, [])
                    if p.sku not in skus:
                        skus.append(p.sku)
        return found

    def split(self, cents: int, parts: int) -> list[int]:
        base, remainder = divmod(cents, parts)
        return [base + 1 if i < remainder else base for i in range(parts)]


# -- modules and tests --------------------------------------------------------------------------


@dataclass(frozen=True)
class Test:
    """One test function of a test file; ``body`` is its code after the fresh-state call."""

    name: str
    body: str
    uses: tuple[str, ...]  # modules of the package the test imports
    raises: bool = False  # uses pytest.raises

    def source(self, fresh: bool) -> str:
        lines = [f"def {self.name}():"]
        if fresh:
            lines.append("    fresh()")
        lines += ["    " + line if line else "" for line in textwrap.dedent(self.body).strip("\n").splitlines()]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Module:
    source: str
    tests: list[Test] = field(default_factory=list)


@dataclass(frozen=True)
class Kind:
    name: str
    deps: tuple[str, ...]
    stateful: bool  # has module-level state and a reset()
    summary: str
    build: Callable[[World, frozenset[str]], Module]


def q(value: str) -> str:
    """A string literal with double quotes."""
    return json.dumps(value)


def lit(value: Any) -> str:
    """A Python literal, deterministic, double-quoted strings."""
    if isinstance(value, str):
        return q(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(lit(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(lit(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{lit(k)}: {lit(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no literal for {type(value).__name__}")


def block(items: list[Any], closing: str) -> str:
    """A multi-line dict (``items`` are pairs, ``closing`` is "}") or tuple literal, one entry a line."""
    if closing == "}":
        rows = [f"    {lit(key)}: {lit(value)}," for key, value in items]
        return "{\n" + "\n".join(rows) + "\n}"
    return "(\n" + "\n".join(f"    {lit(item)}," for item in items) + "\n)"


def render(template: str, **values: Any) -> str:
    return Template(textwrap.dedent(template).lstrip("\n")).substitute(values)


def t(name: str, body: str, uses: tuple[str, ...], raises: bool = False) -> Test:
    return Test(name, body, uses, raises or "pytest.raises" in body)
