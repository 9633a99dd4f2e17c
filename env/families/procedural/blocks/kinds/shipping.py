"""The ``shipping`` kind: shipping costs per zone and weight.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, Ref, World, block, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
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
