"""The ``money`` kind: integer-cent arithmetic, rounding and display.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, Ref, World, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
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
