"""The ``payments`` kind: card payments, fees and instalments.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, Ref, World, render, t


def build(w: World, present: frozenset[str]) -> Module:
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
