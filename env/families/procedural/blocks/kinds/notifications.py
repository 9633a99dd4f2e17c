"""The ``notifications`` kind: the outgoing mail outbox.

``build`` writes the module a service with this kind holds and the tests every such service carries;
the tests that reveal a particular defect live with the defect, in ``bugs``."""

from __future__ import annotations

from env.families.procedural.blocks.world import Module, World, block, q, render, t


def build(w: World, present: frozenset[str]) -> Module:
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
