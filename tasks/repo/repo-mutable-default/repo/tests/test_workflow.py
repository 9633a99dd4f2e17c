from datetime import datetime

import pytest

from helpdesk.errors import WorkflowError
from helpdesk.store import TicketStore
from helpdesk.workflow import can_transition

CREATED = datetime(2024, 5, 6, 9, 0)


@pytest.mark.parametrize(
    "current, target, allowed",
    [
        ("new", "assigned", True),
        ("assigned", "pending", True),
        ("pending", "assigned", True),
        ("resolved", "assigned", True),
        ("new", "resolved", False),
        ("closed", "assigned", False),
    ],
)
def test_can_transition(current, target, allowed):
    assert can_transition(current, target) is allowed


def test_resolving_a_new_ticket_is_rejected():
    store = TicketStore()
    ticket = store.open("VPN down", "carol@example.com", created=CREATED)
    with pytest.raises(WorkflowError):
        store.resolve(ticket.id, at=datetime(2024, 5, 6, 10, 0))
    assert store.get(ticket.id).status == "new"
