"""The ``tax`` kind: VAT rates per region and the tax on an amount.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, Ref, World, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
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
