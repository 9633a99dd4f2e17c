"""The building blocks of a generated service: 25 kinds of module, each real code with its own tests.

    world = draw_world(random.Random("seed"))            # names, SKUs, rates, thresholds of one service
    module = KINDS["pricing"].build(world, present)      # Module(source=..., tests=[Test, ...])
    closure(["checkout"])                                # checkout and everything it imports

A kind is one module of an online shop's back end (settings, catalog, pricing, orders, retry ...):
its code imports and calls the kinds in ``deps`` (``from <pkg> import catalog``), so any
dependency-closed set of kinds is a connected import DAG; state shared between modules lives in
module-level registries (catalog, inventory, settings, metrics, audit ...) that tests reset through
each stateful module's ``reset()``. Every module logs through ``logging.getLogger(__name__)`` and
never configures logging. Only the standard library is used.

Expected values in tests are computed here, from the world, by the small reference arithmetic at
the end of this module (``Ref``), never by running the generated code.
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


# Each kind below returns its module's source and its regular tests (the tests every service of
# that kind carries; the tests that reveal a particular defect live with the defect, in bugs.py).


def _settings(w: World, present: frozenset[str]) -> Module:
    values: list[tuple[str, Any]] = [("service", f"{w.pkg}-api"), ("currency", w.currency), ("default_region", w.home)]
    if "tax" in present:
        values += [("vat_rates_bp", dict(w.vat)), ("reduced_rates_bp", dict(w.reduced)), ("reduced_categories", [w.reduced_category])]
    if "shipping" in present:
        values += [("free_shipping_over", w.free_over), ("zone_base_cents", dict(w.zone_base)), ("per_kg_cents", w.per_kg), ("express_per_kg_cents", w.express_per_kg)]
    if "retry" in present:
        values += [("retry_attempts", w.retry_attempts), ("retry_base_ms", w.retry_base_ms), ("retry_cap_s", w.retry_cap_s)]
    if "rollout" in present:
        values += [("rollout_percent", dict(w.flag_percent))]
    if "inventory" in present:
        values += [("low_stock_threshold", w.low_threshold)]
    if "users" in present:
        values += [("password_min_length", w.password_min), ("max_login_failures", w.max_failures)]
    if "notifications" in present:
        values += [("sender", w.sender), ("outbox_limit", w.outbox_limit)]
    source = render(
        '''
        """Runtime settings of the $pkg service.

            get("currency")                  # the current value
            previous = override(currency="X")  # tools and tests change settings at runtime
            reset()                          # back to DEFAULTS

        Other modules read settings through get() or, to work on a private copy, snapshot().
        """

        from __future__ import annotations

        import copy
        import logging
        from typing import Any

        log = logging.getLogger(__name__)

        DEFAULTS: dict[str, Any] = $defaults

        _current: dict[str, Any] = copy.deepcopy(DEFAULTS)


        def get(key: str) -> Any:
            """The current value of one setting (KeyError for a name that is not a setting)."""
            return _current[key]


        def snapshot() -> dict[str, Any]:
            """A private copy of every setting, safe to modify."""
            return copy.deepcopy(_current)


        def override(**values: Any) -> dict[str, Any]:
            """Change settings at runtime; returns the values they had before."""
            unknown = sorted(name for name in values if name not in DEFAULTS)
            if unknown:
                log.error("refusing unknown settings: %s", ", ".join(unknown))
                raise KeyError(unknown[0])
            previous = {name: _current[name] for name in values}
            _current.update(copy.deepcopy(values))
            log.info("settings changed: %s", ", ".join(sorted(values)))
            return previous


        def reset() -> None:
            """Every setting back to its default."""
            _current.clear()
            _current.update(copy.deepcopy(DEFAULTS))
            log.info("settings reset to defaults")
        ''',
        pkg=w.pkg,
        defaults=block(values, "}"),
    )
    tests = [
        t("test_defaults_are_loaded", f"""
            assert settings.get("currency") == {q(w.currency)}
            assert settings.get("service") == {q(w.pkg + "-api")}
            assert settings.get("default_region") == {q(w.home)}
        """, ("settings",)),
        t("test_override_returns_previous_values_and_reset_restores", f"""
            previous = settings.override(currency={q(w.other_currency)})
            assert previous == {{"currency": {q(w.currency)}}}
            assert settings.get("currency") == {q(w.other_currency)}
            settings.reset()
            assert settings.get("currency") == {q(w.currency)}
        """, ("settings",)),
        t("test_unknown_settings_are_refused", f"""
            with pytest.raises(KeyError):
                settings.override(colour="teal")
            with pytest.raises(KeyError):
                settings.get("colour")
            assert settings.get("currency") == {q(w.currency)}
        """, ("settings",)),
    ]
    return Module(source, tests)


def _money(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    source = render(
        '''
        """Money arithmetic for $pkg: integer cents, rates in basis points.

            percent_of(1999, 1900)       # 380: 19 % of 19.99, rounded half up
            format_cents(-1205, "EUR")   # "-12.05 EUR"
            parse_amount("12,5")         # 1250

        Amounts are integer cents everywhere in the service; a rate of 1 bp is 0.01 %.
        """

        from __future__ import annotations

        import logging

        log = logging.getLogger(__name__)


        def percent_of(cents: int, rate_bp: int) -> int:
            """``rate_bp`` basis points of ``cents``, rounded half up to a whole cent."""
            return (cents * rate_bp + 5000) // 10000


        def divide_round(numerator: int, denominator: int) -> int:
            """``numerator / denominator`` rounded half up, for amounts that are not negative."""
            if denominator <= 0:
                log.error("division by a non-positive amount: %d / %d", numerator, denominator)
                raise ValueError(f"denominator must be positive, got {denominator}")
            return (2 * numerator + denominator) // (2 * denominator)


        def split_evenly(cents: int, parts: int) -> list[int]:
            """``cents`` in ``parts`` instalments that add up exactly; the first ones carry the odd cents."""
            if parts <= 0:
                log.error("cannot split %d cents into %d parts", cents, parts)
                raise ValueError(f"parts must be positive, got {parts}")
            base, remainder = divmod(cents, parts)
            return [base + 1 if index < remainder else base for index in range(parts)]


        def format_cents(cents: int, currency: str) -> str:
            """Display form of an amount: ``12.05 EUR``, ``-0.40 EUR``."""
            sign = "-" if cents < 0 else ""
            units, rest = divmod(abs(cents), 100)
            return f"{sign}{units}.{rest:02d} {currency}"


        def parse_amount(text: str) -> int:
            """Cents from an amount as people type it: ``"12.5"``, ``"12,50"``, ``" 7 "``."""
            cleaned = text.strip().replace(",", ".")
            units, _, fraction = cleaned.partition(".")
            if not units.isdigit() or len(fraction) > 2 or (fraction and not fraction.isdigit()):
                log.warning("unparseable amount %r", text)
                raise ValueError(f"not an amount: {text!r}")
            return int(units) * 100 + int(fraction.ljust(2, "0"))
        ''',
        pkg=w.pkg,
    )
    price, rate = w.a.price, w.vat[w.home]
    tests = [
        t("test_percent_of_rounds_half_up", f"""
            assert money.percent_of({price}, {rate}) == {ref.pct(price, rate)}
            assert money.percent_of(250, 1900) == 48
            assert money.percent_of(1000, 0) == 0
        """, ("money",)),
        t("test_divide_round", """
            assert money.divide_round(7, 2) == 4
            assert money.divide_round(10, 4) == 3
            assert money.divide_round(9, 4) == 2
            with pytest.raises(ValueError):
                money.divide_round(1, 0)
        """, ("money",)),
        t("test_format_cents", f"""
            assert money.format_cents({price}, {q(w.currency)}) == {q(ref.money(price))}
            assert money.format_cents(7, {q(w.currency)}) == {q(ref.money(7))}
            assert money.format_cents(0, {q(w.currency)}) == {q(ref.money(0))}
        """, ("money",)),
        t("test_parse_amount", """
            assert money.parse_amount("12.5") == 1250
            assert money.parse_amount(" 7 ") == 700
            assert money.parse_amount("3,05") == 305
            with pytest.raises(ValueError):
                money.parse_amount("12.345")
            with pytest.raises(ValueError):
                money.parse_amount("ten")
        """, ("money",)),
    ]
    return Module(source, tests)


def _models(w: World, present: frozenset[str]) -> Module:
    p = w.a
    source = render(
        '''
        """The records $pkg passes around: products and order lines.

            product = Product("$sku", "$name", "$category", $price, $weight)
            line = make_line("$sku", 3, $price)      # validated
            line.total_cents()                       # $total3
        """

        from __future__ import annotations

        import logging
        from dataclasses import dataclass

        log = logging.getLogger(__name__)


        @dataclass(frozen=True)
        class Product:
            sku: str
            name: str
            category: str
            price_cents: int
            weight_g: int

            def label(self) -> str:
                return f"{self.name} ({self.sku})"


        @dataclass(frozen=True)
        class Line:
            sku: str
            quantity: int
            unit_cents: int

            def total_cents(self) -> int:
                return self.unit_cents * self.quantity


        def make_line(sku: str, quantity: int, unit_cents: int) -> Line:
            """An order line, checked: a positive quantity and a price that is not negative."""
            if quantity <= 0:
                log.warning("rejected line for %s with quantity %d", sku, quantity)
                raise ValueError(f"quantity must be positive, got {quantity}")
            if unit_cents < 0:
                log.warning("rejected line for %s with price %d", sku, unit_cents)
                raise ValueError(f"price must not be negative, got {unit_cents}")
            return Line(sku, quantity, unit_cents)
        ''',
        pkg=w.pkg, sku=p.sku, name=p.name, category=p.category, price=p.price, weight=p.weight, total3=3 * p.price,
    )
    tests = [
        t("test_product_label", f"""
            product = models.Product({q(p.sku)}, {q(p.name)}, {q(p.category)}, {p.price}, {p.weight})
            assert product.label() == {q(f"{p.name} ({p.sku})")}
            assert product.weight_g == {p.weight}
        """, ("models",)),
        t("test_line_total", f"""
            line = models.make_line({q(p.sku)}, 3, {p.price})
            assert line.total_cents() == {3 * p.price}
            assert line.quantity == 3
        """, ("models",)),
        t("test_invalid_lines_are_rejected", f"""
            with pytest.raises(ValueError):
                models.make_line({q(p.sku)}, 0, {p.price})
            with pytest.raises(ValueError):
                models.make_line({q(p.sku)}, 1, -5)
        """, ("models",)),
    ]
    return Module(source, tests)


def _metrics(w: World, present: frozenset[str]) -> Module:
    source = render(
        '''
        """In-process counters of $pkg: how often things happened since start (or the last reset).

            incr("orders.placed")        # 1
            value("orders.placed")       # 1
            snapshot("orders.")          # {"orders.placed": 1}
        """

        from __future__ import annotations

        import logging

        log = logging.getLogger(__name__)

        _COUNTERS: dict[str, int] = {}


        def incr(name: str, by: int = 1) -> int:
            """Add ``by`` to a counter and return its new value."""
            if by < 0:
                log.error("counter %s cannot go down (by=%d)", name, by)
                raise ValueError(f"counters only go up, got {by}")
            _COUNTERS[name] = _COUNTERS.get(name, 0) + by
            return _COUNTERS[name]


        def value(name: str) -> int:
            return _COUNTERS.get(name, 0)


        def snapshot(prefix: str = "") -> dict[str, int]:
            """The counters whose names start with ``prefix``, by name."""
            return {name: _COUNTERS[name] for name in sorted(_COUNTERS) if name.startswith(prefix)}


        def reset() -> None:
            """Every counter back to zero."""
            _COUNTERS.clear()
            log.info("counters reset")
        ''',
        pkg=w.pkg,
    )
    tests = [
        t("test_counters_count_up", """
            assert metrics.incr("test.widgets") == 1
            assert metrics.incr("test.widgets", 4) == 5
            assert metrics.value("test.widgets") == 5
            assert metrics.value("test.never") == 0
        """, ("metrics",)),
        t("test_counters_never_go_down", """
            with pytest.raises(ValueError):
                metrics.incr("test.gadgets", -1)
            assert metrics.value("test.gadgets") == 0
        """, ("metrics",)),
        t("test_snapshot_filters_by_prefix", """
            metrics.incr("http.ok")
            metrics.incr("http.error", 2)
            metrics.incr("db.query")
            assert metrics.snapshot("http.") == {"http.error": 2, "http.ok": 1}
        """, ("metrics",)),
    ]
    return Module(source, tests)


def _audit(w: World, present: frozenset[str]) -> Module:
    a, b = w.accounts[0].email, w.accounts[1].email
    source = render(
        '''
        """The audit trail of $pkg: who did what, in order.

            record("order.placed", "ada@example.org", {"order": "PH-00001"})
            entries(action="order.placed")     # copies of the matching entries, oldest first
            entries(area="order")              # everything about orders
            last("order.placed")               # the newest one, or None
        """

        from __future__ import annotations

        import logging
        from typing import Any

        log = logging.getLogger(__name__)

        _ENTRIES: list[dict[str, Any]] = []


        def record(action: str, actor: str, details: dict[str, Any] | None = None, tags: list[str] | None = None) -> dict[str, Any]:
            """Append one entry (``details`` plus seq, action, actor and tags) and return it.

            Every entry is tagged with the area of its action ("order" for "order.placed").
            """
            tags = [] if tags is None else tags
            tags.append(action.split(".")[0])
            entry = dict(details or {})
            entry.update(seq=len(_ENTRIES) + 1, action=action, actor=actor, tags=tags)
            _ENTRIES.append(entry)
            log.info("audit #%d: %s by %s", entry["seq"], action, actor)
            return entry


        def entries(action: str | None = None, actor: str | None = None, area: str | None = None) -> list[dict[str, Any]]:
            """Copies of the entries matching ``action``, ``actor`` and ``area`` (None matches any), oldest first."""
            return [
                dict(entry)
                for entry in _ENTRIES
                if (action is None or entry["action"] == action)
                and (actor is None or entry["actor"] == actor)
                and (area is None or area in entry["tags"])
            ]


        def last(action: str) -> dict[str, Any] | None:
            found = entries(action)
            return found[-1] if found else None


        def reset() -> None:
            _ENTRIES.clear()
            log.info("audit trail cleared")
        ''',
        pkg=w.pkg,
    )
    tests = [
        t("test_record_returns_the_entry", f"""
            entry = audit.record("user.login", {q(a)}, {{"ip": "10.0.0.7"}})
            assert (entry["seq"], entry["action"], entry["actor"], entry["ip"]) == (1, "user.login", {q(a)}, "10.0.0.7")
        """, ("audit",)),
        t("test_entries_filter_by_action_and_actor", f"""
            audit.record("login", {q(a)})
            audit.record("login", {q(b)})
            audit.record("logout", {q(a)})
            assert [entry["seq"] for entry in audit.entries(action="login")] == [1, 2]
            assert [entry["action"] for entry in audit.entries(actor={q(a)})] == ["login", "logout"]
            assert audit.last("logout")["actor"] == {q(a)}
            assert audit.last("refund") is None
        """, ("audit",)),
    ]
    return Module(source, tests)


def _cache(w: World, present: frozenset[str]) -> Module:
    source = render(
        '''
        """A small least-recently-used cache; hits and misses are counted in metrics.

            quotes = Cache("quotes", capacity=128)
            quotes.put(key, value)
            quotes.get(key)        # the value, or None (a miss)
            quotes.stats()         # {"hits": ..., "misses": ..., "size": ...}
        """

        from __future__ import annotations

        import logging
        from collections import OrderedDict
        from typing import Any

        from $pkg import metrics

        log = logging.getLogger(__name__)


        class Cache:
            def __init__(self, name: str, capacity: int) -> None:
                if capacity < 1:
                    log.error("cache %s: capacity %d is too small", name, capacity)
                    raise ValueError(f"capacity must be at least 1, got {capacity}")
                self.name = name
                self.capacity = capacity
                self._data: OrderedDict[Any, Any] = OrderedDict()

            def get(self, key: Any) -> Any:
                if key in self._data:
                    self._data.move_to_end(key)
                    metrics.incr(f"cache.{self.name}.hits")
                    return self._data[key]
                metrics.incr(f"cache.{self.name}.misses")
                return None

            def put(self, key: Any, value: Any) -> None:
                self._data[key] = value
                self._data.move_to_end(key)
                while len(self._data) > self.capacity:
                    evicted, _ = self._data.popitem(last=False)
                    log.info("cache %s full: evicted %r", self.name, evicted)

            def invalidate(self, key: Any = None) -> None:
                """Forget one key, or everything."""
                if key is None:
                    self._data.clear()
                    log.info("cache %s cleared", self.name)
                else:
                    self._data.pop(key, None)

            def __len__(self) -> int:
                return len(self._data)

            def stats(self) -> dict[str, int]:
                return {
                    "hits": metrics.value(f"cache.{self.name}.hits"),
                    "misses": metrics.value(f"cache.{self.name}.misses"),
                    "size": len(self._data),
                }
        ''',
        pkg=w.pkg,
    )
    tests = [
        t("test_put_and_get", """
            quotes = cache.Cache("test-basic", 3)
            quotes.put("a", 1)
            assert quotes.get("a") == 1
            assert quotes.get("zz") is None
            assert quotes.stats() == {"hits": 1, "misses": 1, "size": 1}
        """, ("cache",)),
        t("test_invalidate_one_key_or_all", """
            quotes = cache.Cache("test-invalidate", 5)
            quotes.put("a", 1)
            quotes.put("b", 2)
            quotes.invalidate("a")
            assert quotes.get("a") is None
            assert len(quotes) == 1
            quotes.invalidate()
            assert len(quotes) == 0
        """, ("cache",)),
        t("test_capacity_must_be_positive", """
            with pytest.raises(ValueError):
                cache.Cache("test-empty", 0)
        """, ("cache",)),
    ]
    return Module(source, tests)


def _catalog(w: World, present: frozenset[str]) -> Module:
    rows = [(p.sku, p.name, p.category, p.price, p.weight) for p in sorted(w.products, key=lambda p: p.sku)]
    cat = w.doubles[0]
    new = w.unused_sku()
    source = render(
        '''
        """The product catalog of $pkg: every product we sell, by SKU.

            get(" $lower ")        # Product(sku="$sku", ...): SKUs are trimmed and upper-cased
            in_category("$cat")    # the category's products, by SKU
            set_price("$sku", 1500)
        """

        from __future__ import annotations

        import dataclasses
        import logging

        from $pkg import models

        log = logging.getLogger(__name__)

        # (sku, name, category, price in cents, weight in grams)
        DEFAULT_PRODUCTS = $rows

        _PRODUCTS: dict[str, models.Product] = {}


        class UnknownProduct(LookupError):
            """No product has that SKU."""


        def normalise(sku: str) -> str:
            return sku.strip().upper()


        def add(sku: str, name: str, category: str, price_cents: int, weight_g: int) -> models.Product:
            if price_cents < 0:
                log.error("refusing a negative price for %s: %d", sku, price_cents)
                raise ValueError(f"price must not be negative, got {price_cents}")
            product = models.Product(normalise(sku), name, category, price_cents, weight_g)
            if product.sku in _PRODUCTS:
                log.warning("replacing product %s", product.sku)
            _PRODUCTS[product.sku] = product
            return product


        def get(sku: str) -> models.Product:
            key = normalise(sku)
            if key not in _PRODUCTS:
                log.warning("unknown product %s", key)
                raise UnknownProduct(key)
            return _PRODUCTS[key]


        def in_category(category: str) -> list[models.Product]:
            return [product for _, product in sorted(_PRODUCTS.items()) if product.category == category]


        def categories() -> list[str]:
            return sorted({product.category for product in _PRODUCTS.values()})


        def set_price(sku: str, price_cents: int) -> models.Product:
            key = normalise(sku)
            product = dataclasses.replace(_PRODUCTS[key], price_cents=price_cents)
            _PRODUCTS[key] = product
            log.info("price of %s set to %d", key, price_cents)
            return product


        def reset() -> None:
            """Back to the default product list."""
            _PRODUCTS.clear()
            for row in DEFAULT_PRODUCTS:
                add(*row)


        reset()
        ''',
        pkg=w.pkg, lower=w.a.sku.lower(), sku=w.a.sku, cat=cat, rows=block(rows, ")"),
    )
    tests = [
        t("test_get_normalises_the_sku", f"""
            product = catalog.get({q(" " + w.a.sku.lower() + " ")})
            assert product.sku == {q(w.a.sku)}
            assert product.name == {q(w.a.name)}
            assert product.price_cents == {w.a.price}
        """, ("catalog",)),
        t("test_unknown_product", f"""
            with pytest.raises(catalog.UnknownProduct):
                catalog.get({q(new)})
        """, ("catalog",)),
        t("test_products_by_category", f"""
            assert [product.sku for product in catalog.in_category({q(cat)})] == {lit([p.sku for p in w.in_category(cat)])}
            assert catalog.categories() == {lit(sorted({p.category for p in w.products}))}
        """, ("catalog",)),
        t("test_added_products_go_away_on_reset", f"""
            catalog.add({q(new.lower())}, "Sample", {q(cat)}, 500, 100)
            assert catalog.get({q(new)}).price_cents == 500
            catalog.reset()
            with pytest.raises(catalog.UnknownProduct):
                catalog.get({q(new)})
        """, ("catalog",)),
        t("test_set_price", f"""
            catalog.set_price({q(w.b.sku)}, {w.b.price + 100})
            assert catalog.get({q(w.b.sku)}).price_cents == {w.b.price + 100}
        """, ("catalog",)),
    ]
    return Module(source, tests)


def _tax(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    home, eu = w.home, w.regions[1]
    normal_cat = w.a.category
    amount = w.a.price * 3
    source = render(
        '''
        """VAT for $pkg: the rate per region (reduced for some categories) and the tax on an amount.

            rate_for("$home")                 # $rate bp
            tax_on(10000, "$home")            # $tax10k
            split_gross(11900, "$home")       # (net, tax) inside a price that includes VAT
        """

        from __future__ import annotations

        import logging

        from $pkg import money, settings

        log = logging.getLogger(__name__)


        class UnknownRegion(LookupError):
            """No VAT rate is configured for that region."""


        def rate_for(region: str, category: str | None = None) -> int:
            """The VAT rate in bp for ``region``; the reduced rate for a reduced category."""
            code = region.strip().upper()
            rates = settings.get("vat_rates_bp")
            if code not in rates:
                log.error("no VAT rate configured for region %s", code)
                raise UnknownRegion(code)
            if category is not None and category in settings.get("reduced_categories"):
                return settings.get("reduced_rates_bp")[code]
            return rates[code]


        def tax_on(net_cents: int, region: str, category: str | None = None) -> int:
            return money.percent_of(net_cents, rate_for(region, category))


        def gross(net_cents: int, region: str, category: str | None = None) -> int:
            return net_cents + tax_on(net_cents, region, category)


        def split_gross(gross_cents: int, region: str) -> tuple[int, int]:
            """(net, tax) contained in ``gross_cents``, a price that includes VAT."""
            rate = rate_for(region)
            net = money.divide_round(gross_cents * 10000, 10000 + rate)
            log.info("split %d in %s: net %d, tax %d", gross_cents, region, net, gross_cents - net)
            return net, gross_cents - net
        ''',
        pkg=w.pkg, home=home, rate=w.vat[home], tax10k=ref.pct(10000, w.vat[home]),
    )
    tests = [
        t("test_rate_for_region", f"""
            assert tax.rate_for({q(home.lower())}) == {w.vat[home]}
            assert tax.rate_for({q(" " + eu + " ")}) == {w.vat[eu]}
            assert tax.rate_for({q(home)}, {q(normal_cat)}) == {w.vat[home]}
        """, ("tax",)),
        t("test_tax_on_a_net_amount", f"""
            assert tax.tax_on({amount}, {q(home)}) == {ref.pct(amount, w.vat[home])}
            assert tax.gross({amount}, {q(eu)}) == {amount + ref.pct(amount, w.vat[eu])}
        """, ("tax",)),
        t("test_unknown_region", """
            with pytest.raises(tax.UnknownRegion):
                tax.rate_for("ZZ")
        """, ("tax",)),
    ]
    return Module(source, tests)


def _shipping(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    home, eu, far = w.home, w.regions[1], w.regions[3]
    threshold = w.free_over * 100
    zones = [(region, zone) for region, zone in w.zones.items()]
    source = render(
        '''
        """Shipping costs for $pkg: a base price per zone plus a price per started kilogram.

            quote(1200, "$home")                          # domestic base + 2 kg
            quote(800, "$home", subtotal_cents=$over)     # 0: free domestic shipping from the threshold on
            quote(800, "$home", express=True)             # express: a higher price per kilogram
        """

        from __future__ import annotations

        import logging

        from $pkg import settings

        log = logging.getLogger(__name__)

        # Regions not listed ship as "world".
        ZONES = $zones


        def zone_of(region: str) -> str:
            return ZONES.get(region.strip().upper(), "world")


        def free_shipping_threshold() -> int:
            """Cents from which domestic orders ship free (the setting is in whole currency units)."""
            return settings.get("free_shipping_over") * 100


        def quote(weight_g: int, region: str, subtotal_cents: int = 0, express: bool = False) -> int:
            """Cost in cents of sending ``weight_g`` grams to ``region``."""
            if weight_g <= 0:
                log.error("refusing to quote a parcel of %d g", weight_g)
                raise ValueError(f"weight must be positive, got {weight_g} g")
            opts = settings.snapshot()
            zone = zone_of(region)
            if express:
                opts["per_kg_cents"] += opts["express_per_kg_cents"]
            elif zone == "domestic" and subtotal_cents >= free_shipping_threshold():
                log.info("free shipping to %s for a subtotal of %d", region, subtotal_cents)
                return 0
            kilos = -(-weight_g // 1000)  # every started kilogram is charged
            cost = opts["zone_base_cents"][zone] + kilos * opts["per_kg_cents"]
            log.info("shipping %d g to %s (%s zone): %d", weight_g, region, zone, cost)
            return cost
        ''',
        pkg=w.pkg, home=home, over=threshold + 500, zones=block(zones, "}"),
    )
    tests = [
        t("test_domestic_parcels_pay_base_and_started_kilos", f"""
            assert shipping.quote(1200, {q(home)}) == {ref.shipping(1200, home)}
            assert shipping.quote(1000, {q(home)}) == {ref.shipping(1000, home)}
        """, ("shipping",)),
        t("test_zones", f"""
            assert shipping.zone_of({q(eu.lower())}) == "eu"
            assert shipping.zone_of({q(far)}) == "world"
            assert shipping.quote(500, {q(far)}) == {ref.shipping(500, far)}
        """, ("shipping",)),
        t("test_free_domestic_shipping_well_over_the_threshold", f"""
            assert shipping.quote(2500, {q(home)}, subtotal_cents={threshold + 1000}) == 0
            assert shipping.quote(2500, {q(eu)}, subtotal_cents={threshold + 1000}) == {ref.shipping(2500, eu, threshold + 1000)}
        """, ("shipping",)),
        t("test_express_costs_more_per_kilo", f"""
            assert shipping.quote(1500, {q(home)}, express=True) == {ref.shipping(1500, home, express=True)}
        """, ("shipping",)),
        t("test_invalid_weight", f"""
            with pytest.raises(ValueError):
                shipping.quote(0, {q(home)})
        """, ("shipping",)),
    ]
    return Module(source, tests)


def _discounts(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    (q1, bp1), (q2, bp2) = w.breaks
    codes = list(w.coupons)
    p = w.a
    silver = w.tiers["silver"] * 100
    source = render(
        '''
        """Discounts of $pkg: customer tiers, volume breaks and coupon codes, all as rates in bp.

            tier_bp("gold")               # $gold
            volume_bp($q2)                 # $bp2: the last break whose minimum is reached
            line_discount(1000, 3, "gold")  # cents off: the better of the tier and the volume rate
        """

        from __future__ import annotations

        import logging

        from $pkg import money

        log = logging.getLogger(__name__)

        TIER_PERCENT = $tiers
        VOLUME_BREAKS = $breaks  # (minimum quantity, rate in bp), ascending
        COUPONS = $coupons


        class UnknownTier(LookupError):
            """A customer tier we do not have."""


        def tier_bp(tier: str) -> int:
            key = tier.strip().lower()
            if key not in TIER_PERCENT:
                log.warning("unknown customer tier %r", tier)
                raise UnknownTier(tier)
            return TIER_PERCENT[key] * 100


        def volume_bp(quantity: int) -> int:
            """The volume discount for ``quantity`` units: the last break whose minimum is reached."""
            rate_bp = 0
            for minimum, break_bp in VOLUME_BREAKS:
                if quantity >= minimum:
                    rate_bp = break_bp
            return rate_bp


        def coupon_bp(code: str) -> int:
            """The discount a coupon code grants; 0 for a code that is not valid."""
            key = code.strip().upper()
            if key not in COUPONS:
                log.warning("coupon %r is not valid", code)
                return 0
            return COUPONS[key]


        def line_discount(unit_cents: int, quantity: int, tier: str = "standard") -> int:
            """Cents off ``quantity`` units: the better of the tier and the volume discount."""
            rate_bp = max(tier_bp(tier), volume_bp(quantity))
            if rate_bp:
                log.info("discount of %d bp on %d units", rate_bp, quantity)
            return money.percent_of(unit_cents * quantity, rate_bp)
        ''',
        pkg=w.pkg, gold=w.tiers["gold"] * 100, q2=q2, bp2=bp2, tiers=lit(w.tiers), breaks=lit(w.breaks), coupons=lit(w.coupons),
    )
    tests = [
        t("test_tiers", f"""
            assert discounts.tier_bp("standard") == 0
            assert discounts.tier_bp(" Gold ") == {w.tiers["gold"] * 100}
            with pytest.raises(discounts.UnknownTier):
                discounts.tier_bp("platinum")
        """, ("discounts",)),
        t("test_volume_breaks", f"""
            assert discounts.volume_bp(1) == 0
            assert discounts.volume_bp({q1 + 1}) == {bp1}
            assert discounts.volume_bp({q2 + 5}) == {bp2}
        """, ("discounts",)),
        t("test_coupons", f"""
            assert discounts.coupon_bp({q(codes[0])}) == {w.coupons[codes[0]]}
            assert discounts.coupon_bp({q(codes[1])}) == {w.coupons[codes[1]]}
            assert discounts.coupon_bp("NOPE") == 0
        """, ("discounts",)),
        t("test_line_discount_takes_the_better_rate", f"""
            assert discounts.line_discount({p.price}, 2, "silver") == {ref.pct(p.price * 2, silver)}
            assert discounts.line_discount({p.price}, {q2 + 5}, "silver") == {ref.pct(p.price * (q2 + 5), max(silver, bp2))}
            assert discounts.line_discount({p.price}, 2) == 0
        """, ("discounts",)),
    ]
    return Module(source, tests)


def _retry(w: World, present: frozenset[str]) -> Module:
    cap = w.retry_cap_s * 1000
    source = render(
        '''
        """Retries with exponential backoff and full jitter.

            rng = seeded(7)
            backoff_ms(1, rng)               # uniform in [0, base]; then [0, 2 base], [0, 4 base] ... up to the cap
            result, waited = run(operation, rng)

        Randomness always comes from the ``random.Random`` the caller passes, so a seed reproduces a
        schedule exactly. Delays are returned, not slept: callers schedule the next attempt themselves.
        """

        from __future__ import annotations

        import logging
        import random
        from collections.abc import Callable
        from typing import TypeVar

        from $pkg import settings

        log = logging.getLogger(__name__)

        T = TypeVar("T")


        class TransientError(Exception):
            """A failure worth retrying: a timeout, throttling."""


        def seeded(seed: int) -> random.Random:
            """The random generator of one retrying caller."""
            return random.Random(seed)


        def cap_ms() -> int:
            """The longest single delay (the setting is in seconds)."""
            return settings.get("retry_cap_s") * 1000


        def backoff_ms(attempt: int, rng: random.Random) -> int:
            """Delay before retry number ``attempt`` (1 for the first retry): full jitter up to an exponential ceiling."""
            if attempt < 1:
                log.error("invalid retry number %d", attempt)
                raise ValueError(f"retry numbers start at 1, got {attempt}")
            ceiling = min(cap_ms(), settings.get("retry_base_ms") * 2 ** (attempt - 1))
            return rng.randint(0, ceiling)


        def schedule(rng: random.Random) -> list[int]:
            """The delays before each retry of one call (``retry_attempts`` tries in all)."""
            return [backoff_ms(attempt, rng) for attempt in range(1, settings.get("retry_attempts"))]


        def run(operation: Callable[[], T], rng: random.Random) -> tuple[T, list[int]]:
            """Call ``operation`` until it succeeds or the attempts are used up; its result and the delays waited."""
            attempts = settings.get("retry_attempts")
            waited: list[int] = []
            for attempt in range(1, attempts + 1):
                try:
                    return operation(), waited
                except TransientError as exc:
                    if attempt == attempts:
                        log.error("giving up after %d attempts: %s", attempts, exc)
                        raise
                    delay = backoff_ms(attempt, rng)
                    log.warning("attempt %d failed (%s); retrying in %d ms", attempt, exc, delay)
                    waited.append(delay)
            raise ValueError("retry_attempts must be at least 1")
        ''',
        pkg=w.pkg,
    )
    tests = [
        t("test_same_seed_same_schedule", f"""
            first = retry.schedule(retry.seeded(7))
            assert first == retry.schedule(retry.seeded(7))
            assert len(first) == {w.retry_attempts - 1}
        """, ("retry",)),
        t("test_every_delay_stays_under_the_cap", f"""
            for seed in range(20):
                delays = retry.schedule(retry.seeded(seed))
                assert all(0 <= delay <= {cap} for delay in delays)
        """, ("retry",)),
        t("test_retry_numbers_start_at_one", """
            with pytest.raises(ValueError):
                retry.backoff_ms(0, retry.seeded(1))
        """, ("retry",)),
    ]
    return Module(source, tests)


def _rollout(w: World, present: frozenset[str]) -> Module:
    off, partial, full = w.flags
    source = render(
        '''
        """Feature flags of $pkg, rolled out to a percentage of users.

            enabled("$full", "ada@example.org")    # the same answer every time for that user
            enabled_users("$partial", users)       # the users who see the feature

        A user's bucket (0-99) comes from a random generator seeded with the flag and the user, so it
        is stable across processes and independent between flags.
        """

        from __future__ import annotations

        import logging
        import random

        from $pkg import settings

        log = logging.getLogger(__name__)


        def bucket(flag: str, user: str) -> int:
            rng = random.Random(f"{flag}:{user}")
            return rng.randrange(100)


        def percent(flag: str) -> int:
            percents = settings.get("rollout_percent")
            if flag not in percents:
                log.warning("unknown feature flag %s", flag)
                return 0
            return percents[flag]


        def enabled(flag: str, user: str) -> bool:
            return bucket(flag, user) < percent(flag)


        def enabled_users(flag: str, users: list[str]) -> list[str]:
            chosen = [user for user in users if enabled(flag, user)]
            log.info("flag %s: on for %d of %d users", flag, len(chosen), len(users))
            return chosen
        ''',
        pkg=w.pkg, full=full, partial=partial,
    )
    user = w.accounts[0].email
    tests = [
        t("test_a_user_keeps_their_answer", f"""
            assert rollout.bucket({q(partial)}, {q(user)}) == rollout.bucket({q(partial)}, {q(user)})
            assert 0 <= rollout.bucket({q(partial)}, {q(user)}) <= 99
            assert rollout.enabled({q(partial)}, {q(user)}) == rollout.enabled({q(partial)}, {q(user)})
        """, ("rollout",)),
        t("test_zero_percent_reaches_nobody", f"""
            users = [f"user{{number}}@example.org" for number in range(200)]
            assert rollout.enabled_users({q(off)}, users) == []
        """, ("rollout",)),
        t("test_half_rollout_reaches_about_half", f"""
            settings.override(rollout_percent={{{q(off)}: 0, {q(partial)}: 50, {q(full)}: 100}})
            users = [f"user{{number}}@example.org" for number in range(600)]
            assert 240 <= len(rollout.enabled_users({q(partial)}, users)) <= 360
        """, ("rollout", "settings")),
        t("test_unknown_flags_are_off", f"""
            assert rollout.enabled("no_such_flag", {q(user)}) is False
        """, ("rollout",)),
    ]
    return Module(source, tests)


def _sampling(w: World, present: frozenset[str]) -> Module:
    source = render(
        '''
        """Quality-control sampling for $pkg: which parcels get a manual check, who checks them.

            pick(parcels, 3, rng)          # three distinct parcels, in their original order
            spot_check(parcels, 5, rng)    # each parcel with a 5 percent chance
            rota(staff, 7, rng)            # who is on duty on each of the next 7 days

        Randomness comes from the ``random.Random`` the caller passes (``seeded`` makes one).
        """

        from __future__ import annotations

        import logging
        import random

        from $pkg import metrics

        log = logging.getLogger(__name__)


        def seeded(seed: int) -> random.Random:
            return random.Random(seed)


        def pick(items: list[str], count: int, rng: random.Random) -> list[str]:
            """``count`` distinct items, chosen uniformly, in their original order."""
            if not 0 <= count <= len(items):
                log.error("cannot pick %d of %d items", count, len(items))
                raise ValueError(f"cannot pick {count} of {len(items)} items")
            chosen = sorted(rng.sample(range(len(items)), count))
            metrics.incr("sampling.picked", count)
            return [items[index] for index in chosen]


        def spot_check(items: list[str], rate_pct: int, rng: random.Random) -> list[str]:
            """Each item independently, with a ``rate_pct`` percent chance."""
            chosen = [item for item in items if rng.randrange(100) < rate_pct]
            metrics.incr("sampling.spot_checked", len(chosen))
            log.info("spot check: %d of %d items at %d percent", len(chosen), len(items), rate_pct)
            return chosen


        def one(items: list[str], rng: random.Random) -> str:
            """One item, chosen uniformly."""
            if not items:
                log.error("nothing to choose from")
                raise ValueError("nothing to choose from")
            return items[rng.randrange(len(items))]


        def rota(staff: list[str], days: int, rng: random.Random) -> list[str]:
            """Who does the manual checks on each of the next ``days`` days."""
            plan = [one(staff, rng) for _ in range(days)]
            log.info("rota for %d days over %d people", days, len(staff))
            return plan
        ''',
        pkg=w.pkg,
    )
    tests = [
        t("test_pick_is_distinct_ordered_and_reproducible", """
            parcels = [f"P{number:03d}" for number in range(20)]
            chosen = sampling.pick(parcels, 5, sampling.seeded(3))
            assert len(set(chosen)) == 5
            assert chosen == sorted(chosen)
            assert chosen == sampling.pick(parcels, 5, sampling.seeded(3))
        """, ("sampling",)),
        t("test_picks_are_counted", """
            before = metrics.value("sampling.picked")
            sampling.pick(["a", "b", "c", "d", "e"], 4, sampling.seeded(1))
            assert metrics.value("sampling.picked") - before == 4
        """, ("sampling", "metrics")),
        t("test_cannot_pick_more_than_there_is", """
            with pytest.raises(ValueError):
                sampling.pick(["a"], 2, sampling.seeded(1))
        """, ("sampling",)),
        t("test_a_full_spot_check_takes_everything", """
            parcels = [f"P{number:03d}" for number in range(50)]
            assert sampling.spot_check(parcels, 100, sampling.seeded(2)) == parcels
        """, ("sampling",)),
    ]
    return Module(source, tests)


def _inventory(w: World, present: frozenset[str]) -> Module:
    big = w.a
    stock = w.stock[big.sku]
    initial = [(p.sku, w.stock[p.sku]) for p in sorted(w.products, key=lambda p: p.sku)]
    source = render(
        '''
        """Stock on hand and reservations of $pkg, per SKU.

            reserve("$sku", 2)      # units held for an order; returns what is left to sell
            release("$sku", 2)      # the order was cancelled
            low_stock()             # SKUs at or under the low-stock threshold
        """

        from __future__ import annotations

        import logging

        from $pkg import catalog, settings

        log = logging.getLogger(__name__)

        INITIAL_STOCK = $initial

        _on_hand: dict[str, int] = {}
        _reserved: dict[str, int] = {}


        class OutOfStock(Exception):
            def __init__(self, sku: str, wanted: int, available: int) -> None:
                super().__init__(f"{sku}: {wanted} wanted, {available} available")
                self.sku = sku
                self.wanted = wanted
                self.available = available


        def available(sku: str) -> int:
            key = catalog.normalise(sku)
            return _on_hand.get(key, 0) - _reserved.get(key, 0)


        def reserve(sku: str, quantity: int) -> int:
            """Hold ``quantity`` units for an order; returns what is left to sell."""
            product = catalog.get(sku)
            left = available(product.sku)
            if quantity > left:
                log.warning("cannot reserve %d of %s: %d available", quantity, product.sku, left)
                raise OutOfStock(product.sku, quantity, left)
            _reserved[product.sku] = _reserved.get(product.sku, 0) + quantity
            left -= quantity
            if left <= settings.get("low_stock_threshold"):
                log.warning("stock of %s is low: %d left", product.sku, left)
            return left


        def release(sku: str, quantity: int) -> int:
            """Give back units an order held; returns what is available again."""
            key = catalog.normalise(sku)
            if key not in _reserved:
                log.error("release of %s, which has nothing reserved", key)
                raise ValueError(f"nothing is reserved for {key}")
            held = _reserved[key]
            _reserved[key] = held - min(quantity, held)
            log.info("released %d of %s", quantity, key)
            return available(key)


        def restock(sku: str, quantity: int) -> int:
            product = catalog.get(sku)
            _on_hand[product.sku] = _on_hand.get(product.sku, 0) + quantity
            log.info("restocked %d of %s", quantity, product.sku)
            return available(product.sku)


        def low_stock(into: list[str] | None = None) -> list[str]:
            """SKUs at or under the low-stock threshold, sorted; appended to ``into`` when given."""
            found = [] if into is None else into
            threshold = settings.get("low_stock_threshold")
            for sku in sorted(_on_hand):
                if available(sku) <= threshold:
                    found.append(sku)
            return found


        def reset() -> None:
            _on_hand.clear()
            _on_hand.update(INITIAL_STOCK)
            _reserved.clear()


        reset()
        ''',
        pkg=w.pkg, sku=big.sku, initial=block(initial, "}"),
    )
    tests = [
        t("test_reserve_reduces_what_is_available", f"""
            assert inventory.available({q(big.sku)}) == {stock}
            assert inventory.reserve({q(big.sku.lower())}, 2) == {stock - 2}
            assert inventory.available({q(big.sku)}) == {stock - 2}
        """, ("inventory",)),
        t("test_cannot_reserve_more_than_available", f"""
            with pytest.raises(inventory.OutOfStock) as info:
                inventory.reserve({q(big.sku)}, {stock + 1})
            assert info.value.available == {stock}
            assert inventory.available({q(big.sku)}) == {stock}
        """, ("inventory",)),
        t("test_release_and_restock", f"""
            inventory.reserve({q(big.sku)}, 3)
            assert inventory.release({q(big.sku)}, 3) == {stock}
            assert inventory.restock({q(big.sku)}, 5) == {stock + 5}
        """, ("inventory",)),
        t("test_unknown_products_cannot_be_reserved", f"""
            with pytest.raises(catalog.UnknownProduct):
                inventory.reserve({q(w.unused_sku())}, 1)
        """, ("inventory", "catalog")),
    ]
    return Module(source, tests)


def _pricing(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    a, b = w.a, w.b
    cat = w.doubles[0]
    rows = [(p.sku, p.price) for p in w.in_category(cat)]
    cheapest = sorted(rows, key=lambda r: (r[1], r[0]))[:1]
    n_categories = len({p.category for p in w.products})
    gold_disc, gold_total = ref.quote(b, 3, "gold")
    source = render(
        '''
        """Quotes for $pkg: catalog price less discounts, and cached price lists per category.

            quote("$sku", 3, "gold")          # Quote(unit_cents=..., discount_cents=..., total_cents=...)
            price_list("$cat")               # [(sku, price), ...] by SKU, cached
            cheapest("$cat", 1)
            apply_price_list(feed_text)       # "sku;price" lines from a supplier
        """

        from __future__ import annotations

        import logging
        from dataclasses import dataclass

        from $pkg import cache, catalog, discounts, money

        log = logging.getLogger(__name__)


        @dataclass(frozen=True)
        class Quote:
            sku: str
            quantity: int
            unit_cents: int
            discount_cents: int
            total_cents: int


        # One entry per category: the whole catalog's price lists stay cached.
        _LISTS = cache.Cache("price-lists", $capacity)


        def quote(sku: str, quantity: int, tier: str = "standard") -> Quote:
            """The price of ``quantity`` units for a customer of ``tier``."""
            if quantity <= 0:
                log.warning("refusing to quote %d units of %s", quantity, sku)
                raise ValueError(f"quantity must be positive, got {quantity}")
            product = catalog.get(sku)
            discount = discounts.line_discount(product.price_cents, quantity, tier)
            total = product.price_cents * quantity - discount
            log.info("quote %s x%d (%s): %d", product.sku, quantity, tier, total)
            return Quote(product.sku, quantity, product.price_cents, discount, total)


        def price_list(category: str) -> list[tuple[str, int]]:
            """(sku, price) of every product in ``category``, by SKU."""
            rows = _LISTS.get(category)
            if rows is None:
                rows = [(product.sku, product.price_cents) for product in catalog.in_category(category)]
                _LISTS.put(category, rows)
            return rows


        def cheapest(category: str, limit: int) -> list[tuple[str, int]]:
            """The ``limit`` cheapest products of ``category``, cheapest first."""
            rows = list(price_list(category))
            rows.sort(key=lambda row: (row[1], row[0]))
            del rows[limit:]
            return rows


        def apply_price_list(text: str) -> int:
            """Apply a supplier's "sku;price" lines; returns how many prices changed."""
            changed = 0
            for line in text.splitlines():
                if not line.strip():
                    continue
                sku, _, amount = line.partition(";")
                catalog.set_price(sku.strip(), money.parse_amount(amount))
                changed += 1
            _LISTS.invalidate()
            log.info("supplier price list applied: %d prices", changed)
            return changed


        def cache_stats() -> dict[str, int]:
            return _LISTS.stats()


        def reset() -> None:
            _LISTS.invalidate()
        ''',
        pkg=w.pkg, sku=a.sku, cat=cat, capacity=n_categories,
    )
    tests = [
        t("test_quote_uses_the_catalog_price", f"""
            quote = pricing.quote({q(a.sku.lower())}, 2)
            assert (quote.sku, quote.quantity, quote.unit_cents) == ({q(a.sku)}, 2, {a.price})
            assert (quote.discount_cents, quote.total_cents) == (0, {2 * a.price})
        """, ("pricing",)),
        t("test_tier_discount_on_a_quote", f"""
            quote = pricing.quote({q(b.sku)}, 3, "gold")
            assert quote.discount_cents == {gold_disc}
            assert quote.total_cents == {gold_total}
        """, ("pricing",)),
        t("test_quote_rejects_bad_quantities", f"""
            with pytest.raises(ValueError):
                pricing.quote({q(a.sku)}, 0)
        """, ("pricing",)),
        t("test_price_list_and_cheapest", f"""
            assert pricing.price_list({q(cat)}) == {lit(rows)}
            assert pricing.cheapest({q(cat)}, 1) == {lit(cheapest)}
        """, ("pricing",)),
        t("test_supplier_price_list_updates_prices", f"""
            assert pricing.apply_price_list({q(f"{a.sku};12.50" + chr(10) + chr(10) + f"{b.sku};7")}) == 2
            assert pricing.quote({q(a.sku)}, 1).unit_cents == 1250
            assert pricing.quote({q(b.sku)}, 1).unit_cents == 700
        """, ("pricing",)),
    ]
    return Module(source, tests)


def _cart(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    a, b = w.a, w.b
    customer = w.accounts[0].email
    silver_total = ref.quote(a, 2, "silver")[1] + ref.quote(b, 1, "silver")[1]
    source = render(
        '''
        """Shopping carts of $pkg: quoted lines for one customer.

            basket = Cart("ada@example.org", tier="silver")
            basket.add("$sku", 2)      # adding more of a SKU re-quotes its line
            basket.subtotal()          # cents, discounts included
        """

        from __future__ import annotations

        import logging

        from $pkg import catalog, pricing

        log = logging.getLogger(__name__)


        class Cart:
            def __init__(self, customer: str, tier: str = "standard", lines: list[pricing.Quote] | None = None) -> None:
                self.customer = customer
                self.tier = tier
                self.lines = [] if lines is None else lines

            def line(self, sku: str) -> pricing.Quote | None:
                key = catalog.normalise(sku)
                for line in self.lines:
                    if line.sku == key:
                        return line
                return None

            def add(self, sku: str, quantity: int = 1) -> pricing.Quote:
                existing = self.line(sku)
                wanted = quantity + (existing.quantity if existing else 0)
                quote = pricing.quote(sku, wanted, self.tier)
                if existing:
                    self.lines.remove(existing)
                self.lines.append(quote)
                log.info("cart of %s: %s now x%d", self.customer, quote.sku, quote.quantity)
                return quote

            def remove(self, sku: str, quantity: int = 1) -> None:
                existing = self.line(sku)
                if existing is None:
                    log.warning("cart of %s has no %s to remove", self.customer, sku)
                    raise ValueError(f"{sku} is not in the cart")
                remaining = existing.quantity - quantity
                self.lines.remove(existing)
                if remaining > 0:
                    self.lines.append(pricing.quote(existing.sku, remaining, self.tier))
                log.info("cart of %s: removed %d of %s", self.customer, quantity, existing.sku)

            def subtotal(self) -> int:
                return sum(line.total_cents for line in self.lines)

            def item_count(self) -> int:
                return sum(line.quantity for line in self.lines)

            def weight_g(self) -> int:
                return sum(catalog.get(line.sku).weight_g * line.quantity for line in self.lines)

            def category_of(self, sku: str) -> str:
                return catalog.get(sku).category
        ''',
        pkg=w.pkg, sku=a.sku,
    )
    tests = [
        t("test_adding_merges_lines_and_requotes", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(a.sku)}, 1)
            basket.add({q(a.sku.lower())}, 2)
            assert basket.item_count() == 3
            assert basket.line({q(a.sku)}).quantity == 3
            assert basket.subtotal() == {ref.quote(a, 3)[1]}
        """, ("cart",)),
        t("test_weight_and_subtotal", f"""
            basket = cart.Cart({q(customer)}, tier="silver")
            basket.add({q(a.sku)}, 2)
            basket.add({q(b.sku)}, 1)
            assert basket.subtotal() == {silver_total}
            assert basket.weight_g() == {2 * a.weight + b.weight}
        """, ("cart",)),
        t("test_remove_part_of_a_line", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(a.sku)}, 3)
            basket.remove({q(a.sku)}, 1)
            assert basket.line({q(a.sku)}).quantity == 2
            assert basket.subtotal() == {ref.quote(a, 2)[1]}
        """, ("cart",)),
        t("test_removing_what_is_not_there", f"""
            basket = cart.Cart({q(customer)})
            with pytest.raises(ValueError):
                basket.remove({q(b.sku)})
        """, ("cart",)),
    ]
    return Module(source, tests)


def _search(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    index = ref.index()
    cat = w.doubles[1]
    word = ref.words(w.a.name)[0]
    new = w.unused_sku()
    names = {p.sku: p.name for p in w.products}
    labels = [f"{names[sku]} ({sku})" for sku in sorted(index[cat])[:5]]
    source = render(
        '''
        """Product search for $pkg over names and categories, with cached results.

            search("$word")          # SKUs matching every word, sorted
            suggest("$cat", 3)       # labels for an autocomplete box
            rebuild()                # after the catalog changed
        """

        from __future__ import annotations

        import logging
        import re

        from $pkg import cache, catalog

        log = logging.getLogger(__name__)

        _INDEX: dict[str, list[str]] = {}
        _RESULTS = cache.Cache("search", 64)


        def words(text: str) -> list[str]:
            return [word for word in re.split(r"[^a-z0-9]+", text.lower()) if word]


        def rebuild() -> int:
            """Index every product's name and category; returns the number of words indexed."""
            _INDEX.clear()
            for category in catalog.categories():
                for product in catalog.in_category(category):
                    for word in words(product.name) + [category]:
                        skus = _INDEX.setdefault(word, [])
                        if product.sku not in skus:
                            skus.append(product.sku)
            _RESULTS.invalidate()
            log.info("search index rebuilt: %d words", len(_INDEX))
            return len(_INDEX)


        def search(query: str) -> list[str]:
            """SKUs of the products matching every word of ``query``, sorted."""
            key = " ".join(words(query))
            cached = _RESULTS.get(key)
            if cached is not None:
                return cached
            terms = key.split()
            found = set(_INDEX.get(terms[0], [])) if terms else set()
            for term in terms[1:]:
                found &= set(_INDEX.get(term, []))
            result = sorted(found)
            _RESULTS.put(key, result)
            log.info("search %r: %d results", query, len(result))
            return result


        def suggest(query: str, limit: int = 3) -> list[str]:
            """Product labels for an autocomplete box, at most ``limit``."""
            skus = list(search(query))
            del skus[limit:]
            return [catalog.get(sku).label() for sku in skus]


        def reset() -> None:
            rebuild()


        rebuild()
        ''',
        pkg=w.pkg, word=word, cat=cat,
    )
    tests = [
        t("test_search_matches_every_word", f"""
            assert search.search({q(cat)}) == {lit(sorted(index[cat]))}
            assert search.search({q(word.upper())}) == {lit(sorted(index[word]))}
        """, ("search",)),
        t("test_unknown_words_find_nothing", """
            assert search.search("xylophonic") == []
            assert search.search("") == []
        """, ("search",)),
        t("test_new_products_are_found_after_a_rebuild", f"""
            catalog.add({q(new)}, "Xylophonic Edition", {q(cat)}, 999, 300)
            assert search.search("xylophonic") == []
            search.rebuild()
            assert search.search("xylophonic") == [{q(new)}]
        """, ("search", "catalog")),
        t("test_suggestions_are_labels", f"""
            assert search.suggest({q(cat)}, 5) == {lit(labels)}
        """, ("search",)),
    ]
    return Module(source, tests)


def _users(w: World, present: frozenset[str]) -> Module:
    acc = w.accounts
    rows = [(x.email, x.name, x.password, x.tier) for x in acc]
    new_password = "n" * w.password_min
    source = render(
        '''
        """Customer accounts of $pkg: registration, login with a lockout, tiers.

            register("new@example.org", "New", "a long password")
            login("NEW@example.org", "a long password")     # True: e-mail addresses ignore case
            tier_of("new@example.org")                      # "standard"
        """

        from __future__ import annotations

        import hashlib
        import logging

        from $pkg import audit, settings

        log = logging.getLogger(__name__)

        # (email, name, password, tier) of the accounts every environment starts with
        ACCOUNTS = $rows

        _users: dict[str, dict[str, str]] = {}
        _failures: dict[str, int] = {}


        class UserError(Exception):
            """A registration or login that cannot go through."""


        class AccountLocked(UserError):
            """Too many failed logins in a row."""


        def normalise(email: str) -> str:
            return email.strip().lower()


        def _digest(password: str, salt: str) -> str:
            return hashlib.sha256(f"{salt}:{password}".encode()).hexdigest()


        def _store(email: str, name: str, password: str, tier: str) -> str:
            key = normalise(email)
            salt = hashlib.sha256(key.encode()).hexdigest()[:12]
            _users[key] = {"name": name, "salt": salt, "hash": _digest(password, salt), "tier": tier}
            return key


        def register(email: str, name: str, password: str, tier: str = "standard") -> str:
            key = normalise(email)
            if key in _users:
                log.warning("registration refused: %s already exists", key)
                raise UserError(f"{key} is already registered")
            if len(password) < settings.get("password_min_length"):
                log.warning("registration refused for %s: password too short", key)
                raise UserError("password too short")
            _store(key, name, password, tier)
            audit.record("user.registered", key)
            log.info("registered %s (%s)", key, tier)
            return key


        def login(email: str, password: str) -> bool:
            key = normalise(email)
            limit = settings.get("max_login_failures")
            if _failures.get(key, 0) >= limit:
                log.warning("login refused for %s: locked after %d failures", key, limit)
                raise AccountLocked(key)
            user = _users.get(key)
            if user is None or user["hash"] != _digest(password, user["salt"]):
                _failures[key] = _failures.get(key, 0) + 1
                log.warning("failed login for %s (%d of %d)", key, _failures[key], limit)
                audit.record("user.login_failed", key)
                return False
            _failures.pop(key, None)
            audit.record("user.login", key)
            return True


        def unlock(email: str) -> None:
            key = normalise(email)
            _failures.pop(key, None)
            log.info("account %s unlocked", key)


        def tier_of(email: str) -> str:
            return _users[normalise(email)]["tier"]


        def profile(email: str) -> dict[str, str]:
            key = normalise(email)
            user = _users[key]
            return {"email": key, "name": user["name"], "tier": user["tier"]}


        def reset() -> None:
            _users.clear()
            _failures.clear()
            for email, name, password, tier in ACCOUNTS:
                _store(email, name, password, tier)


        reset()
        ''',
        pkg=w.pkg, rows=block(rows, ")"),
    )
    new = f"new.customer@{acc[0].email.split('@')[1]}"
    tests = [
        t("test_register_and_log_in", f"""
            assert users.register({q(new.title())}, "New Customer", {q(new_password)}, "silver") == {q(new)}
            assert users.login({q(new.upper())}, {q(new_password)}) is True
            assert users.profile({q(new)}) == {{"email": {q(new)}, "name": "New Customer", "tier": "silver"}}
        """, ("users",)),
        t("test_short_passwords_and_duplicates_are_refused", f"""
            with pytest.raises(users.UserError):
                users.register({q(new)}, "New Customer", {q("n" * (w.password_min - 1))})
            with pytest.raises(users.UserError):
                users.register({q(acc[1].email)}, {q(acc[1].name)}, {q(new_password)})
        """, ("users",)),
        t("test_wrong_password_fails_and_is_audited", f"""
            assert users.login({q(acc[1].email)}, "wrong password") is False
            assert audit.last("user.login_failed")["actor"] == {q(acc[1].email)}
        """, ("users", "audit")),
        t("test_unlock_after_failures", f"""
            for _ in range({w.max_failures}):
                users.login({q(acc[2].email)}, "wrong password")
            users.unlock({q(acc[2].email)})
            assert users.login({q(acc[2].email)}, {q(acc[2].password)}) is True
        """, ("users",)),
        t("test_tiers_of_the_seeded_accounts", f"""
            assert users.tier_of({q(acc[0].email)}) == {q(acc[0].tier)}
            assert users.tier_of({q(acc[1].email)}) == {q(acc[1].tier)}
        """, ("users",)),
    ]
    return Module(source, tests)


def _notifications(w: World, present: frozenset[str]) -> Module:
    to = w.accounts[0].email
    templates = [
        ("order_confirmed", ("Your {shop} order {order}".replace("{shop}", w.pkg), "Hi {name}, thanks for your order {order} of {total}.")),
        ("order_cancelled", ("Order {order} cancelled", "Your order {order} was cancelled; {refund} will be refunded.")),
        ("password_reset", ("Reset your password", "Hi {name}, use the code {code} to reset your password.")),
        ("back_in_stock", ("Back in stock: {product}", "{product} is back in stock.")),
    ]
    source = render(
        '''
        """Outgoing e-mail of $pkg: templates rendered into an outbox that the mail worker drains.

            send("ada@example.org", "password_reset", name="Ada", code="K7Q2")
            drain()          # the queued messages, oldest first; the outbox is then empty
        """

        from __future__ import annotations

        import logging

        from $pkg import settings

        log = logging.getLogger(__name__)

        # template name: (subject, body), both str.format templates
        TEMPLATES = $templates

        _outbox: list[dict[str, str]] = []


        class OutboxFull(Exception):
            """The outbox holds as many messages as it may; the worker is behind."""


        def render(template: str, **fields: str) -> tuple[str, str]:
            if template not in TEMPLATES:
                log.error("unknown mail template %s", template)
                raise ValueError(f"unknown template {template!r}")
            subject, body = TEMPLATES[template]
            return subject.format(**fields), body.format(**fields)


        def send(to: str, template: str, **fields: str) -> dict[str, str]:
            limit = settings.get("outbox_limit")
            if len(_outbox) >= limit:
                log.error("outbox full (%d messages): mail to %s dropped", limit, to)
                raise OutboxFull(f"the outbox holds {limit} messages")
            subject, body = render(template, **fields)
            message = {"to": to, "from": settings.get("sender"), "subject": subject, "body": body}
            _outbox.append(message)
            log.info("queued %s mail to %s", template, to)
            return message


        def drain() -> list[dict[str, str]]:
            sent = list(_outbox)
            _outbox.clear()
            log.info("outbox drained: %d messages", len(sent))
            return sent


        def pending() -> int:
            return len(_outbox)


        def reset() -> None:
            _outbox.clear()
        ''',
        pkg=w.pkg, templates=block(templates, "}"),
    )
    tests = [
        t("test_send_renders_the_template", f"""
            message = notifications.send({q(to)}, "password_reset", name="Ada", code="K7Q2")
            assert message == {{
                "to": {q(to)},
                "from": {q(w.sender)},
                "subject": "Reset your password",
                "body": "Hi Ada, use the code K7Q2 to reset your password.",
            }}
            assert notifications.pending() == 1
        """, ("notifications",)),
        t("test_drain_empties_the_outbox", f"""
            notifications.send({q(to)}, "back_in_stock", product="Kettle")
            notifications.send("ops@example.org", "back_in_stock", product="Mug")
            assert [message["to"] for message in notifications.drain()] == [{q(to)}, "ops@example.org"]
            assert notifications.pending() == 0
        """, ("notifications",)),
        t("test_unknown_template", f"""
            with pytest.raises(ValueError):
                notifications.send({q(to)}, "newsletter")
            assert notifications.pending() == 0
        """, ("notifications",)),
    ]
    return Module(source, tests)


def _checkout(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    a, b, c = w.a, w.b, w.normal[2]
    home, far = w.home, w.regions[3]
    customer = w.accounts[0].email
    code = list(w.coupons)[0]
    dom = ref.checkout([(a, 2), (b, 1)], home)
    export = ref.checkout([(c, 1)], far)
    # Enough units of a for free domestic shipping.
    big_qty = next(n for n in range(1, 10_000) if ref.quote(a, n)[1] >= w.free_over * 100 + 100)
    big = ref.checkout([(a, big_qty)], home)
    with_coupon = ref.checkout([(a, 1), (c, 2)], home, coupon=code)
    plain = ref.checkout([(b, 2)], home)
    receipt = [f"Subtotal: {ref.money(plain[0])}", f"Shipping: {ref.money(plain[1])}", f"VAT: {ref.money(plain[2])}", f"Total: {ref.money(plain[4])}"]
    source = render(
        '''
        """Checkout for $pkg: what a customer pays for a cart, VAT and shipping included.

            totals(basket, "$home")                       # Totals(subtotal_cents=..., total_cents=...)
            totals(basket, "$home", coupon="$code")      # a coupon takes a share off the gross total
            receipt(totals(basket, "$home"))             # display lines
        """

        from __future__ import annotations

        import logging
        from dataclasses import dataclass

        from $pkg import cart, discounts, money, shipping, tax

        log = logging.getLogger(__name__)

        CURRENCY = "$currency"


        @dataclass(frozen=True)
        class Totals:
            subtotal_cents: int
            shipping_cents: int
            tax_cents: int
            coupon_cents: int
            total_cents: int


        def totals(basket: cart.Cart, region: str, coupon: str = "", express: bool = False) -> Totals:
            if not basket.lines:
                log.warning("checkout of an empty cart for %s", basket.customer)
                raise ValueError("the cart is empty")
            subtotal = basket.subtotal()
            goods_tax = sum(tax.tax_on(line.total_cents, region, basket.category_of(line.sku)) for line in basket.lines)
            shipping_cents = shipping.quote(basket.weight_g(), region, subtotal, express)
            shipping_tax = tax.tax_on(shipping_cents, region)
            gross = subtotal + goods_tax + shipping_cents + shipping_tax
            coupon_cents = money.percent_of(gross, discounts.coupon_bp(coupon)) if coupon else 0
            result = Totals(subtotal, shipping_cents, goods_tax + shipping_tax, coupon_cents, gross - coupon_cents)
            log.info("checkout for %s to %s: %d", basket.customer, region, result.total_cents)
            return result


        def receipt(result: Totals) -> list[str]:
            rows = [("Subtotal", result.subtotal_cents), ("Shipping", result.shipping_cents), ("VAT", result.tax_cents)]
            if result.coupon_cents:
                rows.append(("Coupon", -result.coupon_cents))
            rows.append(("Total", result.total_cents))
            return [f"{label}: {money.format_cents(cents, CURRENCY)}" for label, cents in rows]
        ''',
        pkg=w.pkg, home=home, code=code, currency=w.currency,
    )

    def fields(v: tuple[int, ...]) -> str:
        return lit(tuple(v))

    probe = "(result.subtotal_cents, result.shipping_cents, result.tax_cents, result.coupon_cents, result.total_cents)"
    tests = [
        t("test_domestic_checkout", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(a.sku)}, 2)
            basket.add({q(b.sku)}, 1)
            result = checkout.totals(basket, {q(home)})
            assert {probe} == {fields(dom)}
        """, ("cart", "checkout")),
        t("test_export_checkout_pays_world_shipping", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(c.sku)})
            result = checkout.totals(basket, {q(far)})
            assert {probe} == {fields(export)}
        """, ("cart", "checkout")),
        t("test_large_domestic_orders_ship_free", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(a.sku)}, {big_qty})
            result = checkout.totals(basket, {q(home)})
            assert {probe} == {fields(big)}
        """, ("cart", "checkout")),
        t("test_coupon_takes_a_share_of_the_gross_total", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(a.sku)})
            basket.add({q(c.sku)}, 2)
            result = checkout.totals(basket, {q(home)}, coupon={q(code)})
            assert {probe} == {fields(with_coupon)}
        """, ("cart", "checkout")),
        t("test_receipt_lines", f"""
            basket = cart.Cart({q(customer)})
            basket.add({q(b.sku)}, 2)
            assert checkout.receipt(checkout.totals(basket, {q(home)})) == {lit(receipt)}
        """, ("cart", "checkout")),
        t("test_empty_cart_cannot_check_out", f"""
            with pytest.raises(ValueError):
                checkout.totals(cart.Cart({q(customer)}), {q(home)})
        """, ("cart", "checkout")),
    ]
    return Module(source, tests)


def _orders(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    a, b, lowp = w.a, w.b, w.low[0]
    acc = w.accounts
    total = ref.quote(a, 2)[1]
    source = render(
        '''
        """Orders of $pkg: placing one reserves stock, records it and mails the customer.

            order = place(basket, "ada@example.org")    # Order(id="$prefix-00001", status="placed", ...)
            cancel(order.id)                            # stock released, customer told
            for_customer("ada@example.org")
        """

        from __future__ import annotations

        import itertools
        import logging
        from dataclasses import dataclass

        from $pkg import audit, cart, inventory, money, notifications, pricing

        log = logging.getLogger(__name__)

        PREFIX = "$prefix"
        CURRENCY = "$currency"


        @dataclass
        class Order:
            id: str
            customer: str
            email: str
            lines: list[pricing.Quote]
            subtotal_cents: int
            status: str = "placed"


        class UnknownOrder(LookupError):
            """No order has that id."""


        _orders: dict[str, Order] = {}
        _numbers = itertools.count(1)


        def _next_id() -> str:
            return f"{PREFIX}-{next(_numbers):05d}"


        def place(basket: cart.Cart, email: str) -> Order:
            """Reserve every line's stock (all or nothing), record the order and confirm it by mail."""
            if not basket.lines:
                log.warning("refusing an empty order for %s", basket.customer)
                raise ValueError("cannot place an empty order")
            held: list[pricing.Quote] = []
            try:
                for line in basket.lines:
                    inventory.reserve(line.sku, line.quantity)
                    held.append(line)
            except inventory.OutOfStock:
                for line in held:
                    inventory.release(line.sku, line.quantity)
                log.warning("order for %s rejected: out of stock", basket.customer)
                raise
            order = Order(_next_id(), basket.customer, email, list(basket.lines), basket.subtotal())
            _orders[order.id] = order
            context = {"order": order.id, "items": basket.item_count()}
            audit.record("stock.reserved", basket.customer, context)
            audit.record("order.placed", basket.customer, context)
            total = money.format_cents(order.subtotal_cents, CURRENCY)
            notifications.send(email, "order_confirmed", name=basket.customer, order=order.id, total=total)
            log.info("order %s placed for %s: %d", order.id, basket.customer, order.subtotal_cents)
            return order


        def get(order_id: str) -> Order:
            if order_id not in _orders:
                log.warning("unknown order %s", order_id)
                raise UnknownOrder(order_id)
            return _orders[order_id]


        def cancel(order_id: str) -> Order:
            order = get(order_id)
            if order.status != "placed":
                log.warning("cannot cancel order %s: it is %s", order_id, order.status)
                raise ValueError(f"order {order_id} is {order.status}")
            for line in order.lines:
                inventory.release(line.sku, line.quantity)
            order.status = "cancelled"
            audit.record("order.cancelled", order.customer, {"order": order.id})
            refund = money.format_cents(order.subtotal_cents, CURRENCY)
            notifications.send(order.email, "order_cancelled", order=order.id, refund=refund)
            log.info("order %s cancelled", order.id)
            return order


        def for_customer(customer: str) -> list[Order]:
            return [order for _, order in sorted(_orders.items()) if order.customer == customer]


        def placed() -> list[Order]:
            return [order for _, order in sorted(_orders.items()) if order.status == "placed"]


        def reset() -> None:
            global _numbers
            _orders.clear()
            _numbers = itertools.count(1)
        ''',
        pkg=w.pkg, prefix=w.order_prefix, currency=w.currency,
    )
    tests = [
        t("test_placing_an_order_reserves_stock_and_mails_the_customer", f"""
            basket = cart.Cart({q(acc[0].name)})
            basket.add({q(a.sku)}, 2)
            order = orders.place(basket, {q(acc[0].email)})
            assert order.status == "placed"
            assert order.subtotal_cents == {total}
            assert order.id.startswith({q(w.order_prefix + "-")})
            assert inventory.available({q(a.sku)}) == {w.stock[a.sku] - 2}
            mail = notifications.drain()
            assert [message["to"] for message in mail] == [{q(acc[0].email)}]
            assert mail[0]["body"] == f"Hi {acc[0].name}, thanks for your order {{order.id}} of {ref.money(total)}."
        """, ("cart", "orders", "inventory", "notifications")),
        t("test_an_order_out_of_stock_is_rejected_and_nothing_stays_reserved", f"""
            basket = cart.Cart({q(acc[1].name)})
            basket.add({q(a.sku)}, 1)
            basket.add({q(lowp.sku)}, {w.stock[lowp.sku] + 1})
            with pytest.raises(inventory.OutOfStock):
                orders.place(basket, {q(acc[1].email)})
            assert inventory.available({q(a.sku)}) == {w.stock[a.sku]}
            assert orders.for_customer({q(acc[1].name)}) == []
        """, ("cart", "orders", "inventory")),
        t("test_orders_by_customer", f"""
            first = cart.Cart({q(acc[0].name)})
            first.add({q(a.sku)})
            other = cart.Cart({q(acc[1].name)})
            other.add({q(b.sku)})
            one = orders.place(first, {q(acc[0].email)})
            orders.place(other, {q(acc[1].email)})
            again = cart.Cart({q(acc[0].name)})
            again.add({q(b.sku)}, 2)
            two = orders.place(again, {q(acc[0].email)})
            assert [order.id for order in orders.for_customer({q(acc[0].name)})] == [one.id, two.id]
        """, ("cart", "orders")),
        t("test_unknown_order", f"""
            with pytest.raises(orders.UnknownOrder):
                orders.get({q(w.order_prefix + "-99999")})
        """, ("orders",)),
    ]
    return Module(source, tests)


def _payments(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    cap = w.retry_cap_s * 1000
    source = render(
        '''
        """Card payments of $pkg through the gateway: retries, fees, instalment plans, refunds.

            gateway = Gateway(failures=1)            # the provider's sandbox: times out once, then captures
            payment = charge(gateway, "$prefix-00001", 2599, retry.seeded(3))
            payment.attempts, payment.waited_ms      # 2, the backoff waited before the second try
        """

        from __future__ import annotations

        import logging
        import random
        from dataclasses import dataclass

        from $pkg import audit, money, retry

        log = logging.getLogger(__name__)

        FEE_BP = $fee_bp
        FEE_FIXED_CENTS = $fee_fixed
        CURRENCY = "$currency"


        class GatewayTimeout(retry.TransientError):
            """The gateway did not answer in time."""


        class Gateway:
            """The payment provider's sandbox: times out ``failures`` times, then captures every payment."""

            def __init__(self, failures: int = 0) -> None:
                self.failures = failures
                self.calls = 0

            def capture(self, reference: str, cents: int) -> str:
                self.calls += 1
                if self.calls <= self.failures:
                    log.warning("gateway timeout capturing %s (call %d)", reference, self.calls)
                    raise GatewayTimeout(f"no answer for {reference}")
                return f"cap-{reference}-{cents}"


        @dataclass(frozen=True)
        class Payment:
            reference: str
            amount_cents: int
            fee_cents: int
            capture_id: str
            attempts: int
            waited_ms: int


        def fee(cents: int) -> int:
            return money.percent_of(cents, FEE_BP) + FEE_FIXED_CENTS


        def charge(gateway: Gateway, reference: str, cents: int, rng: random.Random) -> Payment:
            if cents <= 0:
                log.error("refusing to charge %d cents for %s", cents, reference)
                raise ValueError(f"amount must be positive, got {cents}")
            capture_id, waited = retry.run(lambda: gateway.capture(reference, cents), rng)
            payment = Payment(reference, cents, fee(cents), capture_id, len(waited) + 1, sum(waited))
            audit.record("payment.captured", "payments", {"reference": reference, "amount": cents})
            log.info("captured %d for %s after %d attempts", cents, reference, payment.attempts)
            return payment


        def instalments(cents: int, months: int) -> list[int]:
            plan = money.split_evenly(cents, months)
            log.info("instalment plan: %d over %d months", cents, months)
            return plan


        def refund_note(reference: str, cents: int) -> str:
            return f"Refund for {reference}: {money.format_cents(-cents, CURRENCY)}"
        ''',
        pkg=w.pkg, prefix=w.order_prefix, fee_bp=w.fee_bp, fee_fixed=w.fee_fixed, currency=w.currency,
    )
    tests = [
        t("test_charge_without_trouble", f"""
            payment = payments.charge(payments.Gateway(), "R-1", 2599, retry.seeded(1))
            assert (payment.capture_id, payment.attempts, payment.waited_ms) == ("cap-R-1-2599", 1, 0)
            assert payment.fee_cents == {ref.fee(2599)}
            assert audit.last("payment.captured")["amount"] == 2599
        """, ("payments", "retry", "audit")),
        t("test_timeouts_are_retried", f"""
            gateway = payments.Gateway(failures=1)
            payment = payments.charge(gateway, "R-2", 1000, retry.seeded(4))
            assert payment.attempts == 2
            assert gateway.calls == 2
            assert 0 <= payment.waited_ms <= {cap}
        """, ("payments", "retry")),
        t("test_gives_up_after_the_last_attempt", f"""
            gateway = payments.Gateway(failures={w.retry_attempts})
            with pytest.raises(payments.GatewayTimeout):
                payments.charge(gateway, "R-3", 1000, retry.seeded(2))
            assert gateway.calls == {w.retry_attempts}
        """, ("payments", "retry")),
        t("test_fee", f"""
            assert payments.fee(10000) == {ref.fee(10000)}
            with pytest.raises(ValueError):
                payments.charge(payments.Gateway(), "R-4", 0, retry.seeded(1))
        """, ("payments", "retry")),
    ]
    return Module(source, tests)


def _loyalty(w: World, present: frozenset[str]) -> Module:
    acc = w.accounts
    gold = next(x for x in acc if x.tier == "gold")
    std = next(x for x in acc if x.tier == "standard")
    spent = 2599
    points = spent // 100 * w.earn["gold"]
    step = w.redeem_step
    source = render(
        '''
        """Loyalty points of $pkg: earned on purchases at the customer's tier rate, traded for vouchers.

            earn("ada@example.org", 2599)      # points for every full currency unit spent
            redeem("ada@example.org", $step)    # a voucher worth $voucher cents
        """

        from __future__ import annotations

        import logging

        from $pkg import money, users

        log = logging.getLogger(__name__)

        EARN_PER_UNIT = $earn
        REDEEM_STEP = $step
        VOUCHER_CENTS = $voucher
        CURRENCY = "$currency"

        _balances: dict[str, int] = {}


        class NotEnoughPoints(Exception):
            """A redemption larger than the balance."""


        def earn(email: str, spent_cents: int) -> int:
            tier = users.tier_of(email)
            points = spent_cents // 100 * EARN_PER_UNIT[tier]
            key = users.normalise(email)
            _balances[key] = _balances.get(key, 0) + points
            log.info("%s earned %d points at the %s rate", key, points, tier)
            return points


        def balance(email: str) -> int:
            return _balances.get(users.normalise(email), 0)


        def redeem(email: str, points: int) -> int:
            """Trade ``points`` (a multiple of REDEEM_STEP) for a voucher; returns its value in cents."""
            if points <= 0 or points % REDEEM_STEP:
                log.warning("%s tried to redeem %d points", email, points)
                raise ValueError(f"points must be a positive multiple of {REDEEM_STEP}")
            have = balance(email)
            if points > have:
                log.warning("%s tried to redeem %d points with %d", email, points, have)
                raise NotEnoughPoints(f"{points} points wanted, {have} available")
            _balances[users.normalise(email)] = have - points
            voucher = points // REDEEM_STEP * VOUCHER_CENTS
            log.info("%s redeemed %d points for %s", email, points, money.format_cents(voucher, CURRENCY))
            return voucher


        def reset() -> None:
            _balances.clear()
        ''',
        pkg=w.pkg, step=step, voucher=w.voucher_cents, earn=lit(w.earn), currency=w.currency,
    )
    tests = [
        t("test_points_follow_the_tier", f"""
            assert loyalty.earn({q(gold.email)}, {spent}) == {points}
            assert loyalty.earn({q(std.email)}, {spent}) == {spent // 100 * w.earn["standard"]}
            assert loyalty.balance({q(gold.email)}) == {points}
        """, ("loyalty",)),
        t("test_redeem_part_of_the_balance", f"""
            loyalty.earn({q(gold.email)}, {step * 100})
            assert loyalty.redeem({q(gold.email)}, {step}) == {w.voucher_cents}
            assert loyalty.balance({q(gold.email)}) == {step * w.earn["gold"] - step}
        """, ("loyalty",)),
        t("test_redeeming_too_much_or_odd_amounts", f"""
            loyalty.earn({q(std.email)}, 100)
            with pytest.raises(loyalty.NotEnoughPoints):
                loyalty.redeem({q(std.email)}, {step})
            with pytest.raises(ValueError):
                loyalty.redeem({q(std.email)}, {step + 1})
        """, ("loyalty",)),
    ]
    return Module(source, tests)


def _reports(w: World, present: frozenset[str]) -> Module:
    ref = Ref(w)
    a, b, c = w.a, w.b, w.normal[2]
    acc = w.accounts
    by_cat: dict[str, int] = {}
    for p, qty in ((a, 3), (b, 1), (c, 2)):
        by_cat[p.category] = by_cat.get(p.category, 0) + ref.quote(p, qty)[1]
    source = render(
        '''
        """Back-office reports of $pkg: sales by category, best sellers, what to restock.

            sales_by_category()      # {"$cat": 5197, ...}: cents of the orders still placed
            best_sellers(3)          # [("$sku", 7), ...]: most units first, ties by SKU
            restock_report()         # ["$sku: 2 left", ...]
        """

        from __future__ import annotations

        import logging

        from $pkg import catalog, inventory, metrics, money, orders

        log = logging.getLogger(__name__)

        CURRENCY = "$currency"


        def sales_by_category() -> dict[str, int]:
            totals: dict[str, int] = {}
            for order in orders.placed():
                for line in order.lines:
                    category = catalog.get(line.sku).category
                    totals[category] = totals.get(category, 0) + line.total_cents
            metrics.incr("reports.sales")
            return dict(sorted(totals.items()))


        def best_sellers(limit: int) -> list[tuple[str, int]]:
            units: dict[str, int] = {}
            for order in orders.placed():
                for line in order.lines:
                    units[line.sku] = units.get(line.sku, 0) + line.quantity
            rows = sorted(units.items(), key=lambda row: (-row[1], row[0]))
            metrics.incr("reports.best_sellers")
            return rows[:limit]


        def restock_report() -> list[str]:
            lines = [f"{sku}: {inventory.available(sku)} left" for sku in inventory.low_stock()]
            log.info("restock report: %d products low", len(lines))
            return lines


        def revenue_line() -> str:
            placed = orders.placed()
            total = sum(order.subtotal_cents for order in placed)
            return f"{len(placed)} orders, {money.format_cents(total, CURRENCY)}"
        ''',
        pkg=w.pkg, cat=a.category, sku=a.sku, currency=w.currency,
    )
    place = f"""
        first = cart.Cart({q(acc[0].name)})
        first.add({q(a.sku)}, 3)
        first.add({q(b.sku)})
        orders.place(first, {q(acc[0].email)})
        second = cart.Cart({q(acc[1].name)})
        second.add({q(c.sku)}, 2)
        orders.place(second, {q(acc[1].email)})
    """
    tests = [
        t("test_sales_by_category", place + f"""
        assert reports.sales_by_category() == {lit(dict(sorted(by_cat.items())))}
        """, ("cart", "orders", "reports")),
        t("test_best_sellers", place + f"""
        assert reports.best_sellers(2) == {lit([(a.sku, 3), (c.sku, 2)])}
        """, ("cart", "orders", "reports")),
    ]
    return Module(source, tests)


def _scheduler(w: World, present: frozenset[str]) -> Module:
    j1, j2, _ = w.jobs
    source = render(
        '''
        """Background jobs of $pkg on a virtual clock: run when due, retried with backoff after a failure.

            jobs = Scheduler(retry.seeded(1))
            jobs.add("$job", every_s=300)
            jobs.advance(300_000)          # ["$job"]: the jobs now due
            jobs.failed("$job")            # due again after a jittered backoff
        """

        from __future__ import annotations

        import logging
        import random
        from dataclasses import dataclass

        from $pkg import metrics, retry

        log = logging.getLogger(__name__)


        @dataclass
        class Job:
            name: str
            every_s: int
            next_ms: int
            failures: int = 0
            runs: int = 0


        class Scheduler:
            def __init__(self, rng: random.Random) -> None:
                self.rng = rng
                self.now_ms = 0
                self.jobs: dict[str, Job] = {}

            def add(self, name: str, every_s: int) -> Job:
                if every_s <= 0:
                    log.error("job %s: interval %d s is not positive", name, every_s)
                    raise ValueError(f"interval must be positive, got {every_s}")
                job = Job(name, every_s, self.now_ms + every_s * 1000)
                self.jobs[name] = job
                log.info("job %s every %d s", name, every_s)
                return job

            def due(self) -> list[str]:
                return sorted(name for name, job in self.jobs.items() if job.next_ms <= self.now_ms)

            def advance(self, ms: int) -> list[str]:
                """Move the clock on; returns the jobs now due."""
                self.now_ms += ms
                return self.due()

            def succeeded(self, name: str) -> Job:
                job = self.jobs[name]
                job.runs += 1
                job.failures = 0
                job.next_ms = self.now_ms + job.every_s * 1000
                metrics.incr("scheduler.runs")
                return job

            def failed(self, name: str) -> Job:
                job = self.jobs[name]
                job.failures += 1
                delay_ms = retry.backoff_ms(job.failures, self.rng)
                job.next_ms = self.now_ms + delay_ms
                metrics.incr("scheduler.failures")
                log.warning("job %s failed (%d in a row); retrying in %d ms", name, job.failures, delay_ms)
                return job
        ''',
        pkg=w.pkg, job=j1,
    )
    tests = [
        t("test_jobs_run_when_due", f"""
            jobs = scheduler.Scheduler(retry.seeded(1))
            jobs.add({q(j1)}, 60)
            jobs.add({q(j2)}, 300)
            assert jobs.advance(30_000) == []
            assert jobs.advance(40_000) == [{q(j1)}]
            jobs.succeeded({q(j1)})
            assert jobs.advance(300_000) == {lit(sorted([j1, j2]))}
        """, ("scheduler", "retry")),
        t("test_success_clears_failures", f"""
            jobs = scheduler.Scheduler(retry.seeded(2))
            jobs.add({q(j1)}, 60)
            jobs.failed({q(j1)})
            jobs.failed({q(j1)})
            job = jobs.succeeded({q(j1)})
            assert (job.failures, job.runs) == (0, 1)
        """, ("scheduler", "retry")),
        t("test_runs_are_counted", f"""
            before = metrics.value("scheduler.runs")
            jobs = scheduler.Scheduler(retry.seeded(3))
            jobs.add({q(j2)}, 10)
            jobs.succeeded({q(j2)})
            jobs.succeeded({q(j2)})
            assert metrics.value("scheduler.runs") - before == 2
        """, ("scheduler", "retry", "metrics")),
        t("test_interval_must_be_positive", f"""
            with pytest.raises(ValueError):
                scheduler.Scheduler(retry.seeded(1)).add({q(j1)}, 0)
        """, ("scheduler", "retry")),
    ]
    return Module(source, tests)


# Dependencies first: this order is a topological order of the import DAG.
KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("settings", (), True, "runtime settings: defaults, overrides, snapshots", _settings),
        Kind("money", (), False, "integer-cent arithmetic, rounding and display", _money),
        Kind("models", (), False, "the product and order-line records", _models),
        Kind("metrics", (), True, "in-process counters", _metrics),
        Kind("audit", (), True, "the audit trail", _audit),
        Kind("cache", ("metrics",), False, "a least-recently-used cache with hit/miss counters", _cache),
        Kind("catalog", ("models",), True, "the product catalog, by SKU", _catalog),
        Kind("tax", ("settings", "money"), False, "VAT rates per region and the tax on an amount", _tax),
        Kind("shipping", ("settings",), False, "shipping costs per zone and weight", _shipping),
        Kind("discounts", ("money",), False, "tier, volume and coupon discounts", _discounts),
        Kind("retry", ("settings",), False, "retries with exponential backoff and jitter", _retry),
        Kind("rollout", ("settings",), False, "feature flags rolled out to a share of users", _rollout),
        Kind("sampling", ("metrics",), False, "random quality-control sampling", _sampling),
        Kind("inventory", ("catalog", "settings"), True, "stock on hand and reservations", _inventory),
        Kind("pricing", ("catalog", "discounts", "cache", "money"), True, "quotes and cached price lists", _pricing),
        Kind("cart", ("pricing", "catalog"), False, "shopping carts", _cart),
        Kind("search", ("catalog", "cache"), True, "product search with cached results", _search),
        Kind("users", ("settings", "audit"), True, "customer accounts, login and lockout", _users),
        Kind("notifications", ("settings",), True, "the outgoing mail outbox", _notifications),
        Kind("checkout", ("cart", "tax", "shipping", "discounts", "money"), False, "what a cart costs, VAT and shipping included", _checkout),
        Kind("orders", ("cart", "inventory", "audit", "notifications", "money", "pricing"), True, "placing and cancelling orders", _orders),
        Kind("payments", ("money", "retry", "audit"), False, "card payments, fees and instalments", _payments),
        Kind("loyalty", ("users", "money"), True, "loyalty points", _loyalty),
        Kind("reports", ("orders", "metrics", "inventory", "catalog", "money"), False, "back-office reports", _reports),
        Kind("scheduler", ("retry", "metrics"), False, "background jobs with retries", _scheduler),
    )
}
ORDER = tuple(KINDS)


def closure(kinds: list[str] | tuple[str, ...] | set[str] | frozenset[str]) -> frozenset[str]:
    """``kinds`` and everything they import, transitively."""
    found: set[str] = set()
    stack = sorted(kinds)
    while stack:
        kind = stack.pop()
        if kind not in found:
            found.add(kind)
            stack.extend(KINDS[kind].deps)
    return frozenset(found)


def ordered(kinds: frozenset[str] | set[str]) -> list[str]:
    """``kinds`` in dependency order."""
    return [k for k in ORDER if k in kinds]


def test_file(w: World, kind: str, tests: list[Test]) -> str:
    """The test file of one kind: imports, the fresh-state helper, the tests."""
    uses = sorted({u for test in tests for u in test.uses} | {kind})
    stateful = [k for k in ordered(closure(uses)) if KINDS[k].stateful]
    lines = [f'"""Tests of {w.pkg}.{kind}."""', ""]
    if any(test.raises for test in tests):
        lines += ["import pytest", ""]
    lines += [f"from {w.pkg} import {', '.join(sorted(set(uses) | set(stateful)))}", ""]
    if stateful:
        lines += ["", "def fresh():", '    """Every test starts from the initial state of the service."""']
        lines += [f"    {k}.reset()" for k in stateful]
        lines.append("")
    for test in tests:
        lines += ["", test.source(bool(stateful))]
    return "\n".join(lines).rstrip("\n") + "\n"


def readme(w: World, kinds: list[str]) -> str:
    rows = "\n".join(f"- `{w.pkg}/{k}.py`: {KINDS[k].summary}" for k in kinds)
    return (
        f"# {w.pkg}\n\nThe back end of an online {w.theme.shop}.\n\n{rows}\n\n"
        "The package never configures logging; the process that runs it does.\n\n"
        "Run the tests with `python -m pytest`.\n"
    )
