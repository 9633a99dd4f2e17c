"""The ``discounts`` kind: tier, volume and coupon discounts.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, Ref, World, lit, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
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
