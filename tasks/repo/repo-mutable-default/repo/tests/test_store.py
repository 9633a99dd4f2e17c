from datetime import datetime

import pytest

from helpdesk.errors import TicketNotFound
from helpdesk.store import TicketStore

CREATED = datetime(2024, 5, 6, 9, 0)


@pytest.fixture
def store():
    s = TicketStore()
    s.open("Printer on fire", "alice@example.com", "urgent", created=CREATED)
    s.open("VPN down", "bob@example.com", "high", created=CREATED)
    s.open("New mouse", "carol@example.com", "low", created=CREATED)
    return s


def test_ids_are_sequential(store):
    assert len(store) == 3
    assert [store.get(i).subject for i in (1, 2, 3)] == ["Printer on fire", "VPN down", "New mouse"]


def test_unknown_ticket(store):
    with pytest.raises(TicketNotFound) as excinfo:
        store.get(99)
    assert str(excinfo.value) == "no ticket #99"


def test_search_by_status_assignee_and_priority(store):
    store.assign(1, "sam")
    store.assign(2, "kim")
    store.resolve(2, at=datetime(2024, 5, 6, 15, 0))
    assert [t.id for t in store.search(status="new")] == [3]
    assert [t.id for t in store.search(assignee="kim")] == [2]
    assert [t.id for t in store.search(priority="urgent", status="assigned")] == [1]
    assert store.get(2).resolved_at == datetime(2024, 5, 6, 15, 0)


def test_watch_is_idempotent(store):
    store.watch(2, "lead@example.com")
    store.watch(2, "lead@example.com")
    assert store.get(2).watchers == ["lead@example.com"]
    assert store.get(1).watchers == []


def test_outbox_subjects_and_drain(store):
    store.assign(3, "sam")
    store.comment(3, "On its way.")
    assert [n.subject for n in store.outbox] == [
        "[#1] We received your request: Printer on fire",
        "[#2] We received your request: VPN down",
        "[#3] We received your request: New mouse",
        "[#3] sam is now handling: New mouse",
        "[#3] New comment on: New mouse",
    ]
    assert len(store.drain_outbox()) == 5
    assert len(store.outbox) == 0


def test_each_confirmation_goes_only_to_its_requester(store):
    assert [n.to for n in store.outbox] == [
        ["alice@example.com"],
        ["bob@example.com"],
        ["carol@example.com"],
    ]


def test_assignment_notice_goes_to_requester_and_agent(store):
    store.watch(2, "lead@example.com")
    store.assign(2, "kim@support.example.com")
    assert store.outbox[-1].to == ["bob@example.com", "kim@support.example.com", "lead@example.com"]
