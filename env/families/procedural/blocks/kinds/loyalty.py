"""The ``loyalty`` kind: loyalty points.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, lit, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
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
