from datetime import datetime, timedelta

from helpdesk.models import Ticket
from helpdesk.sla import is_breached, resolution_due, response_due, time_left

CREATED = datetime(2024, 5, 6, 9, 0)


def test_deadlines_depend_on_priority():
    urgent = Ticket(1, "Site down", "a@example.com", "urgent", CREATED)
    low = Ticket(2, "Typo", "b@example.com", "low", CREATED)
    assert response_due(urgent) == datetime(2024, 5, 6, 10, 0)
    assert resolution_due(urgent) == datetime(2024, 5, 6, 13, 0)
    assert resolution_due(low) == datetime(2024, 5, 11, 9, 0)


def test_open_ticket_breaches_after_deadline():
    ticket = Ticket(1, "Site down", "a@example.com", "high", CREATED)
    assert not is_breached(ticket, datetime(2024, 5, 7, 9, 0))
    assert is_breached(ticket, datetime(2024, 5, 7, 9, 1))


def test_resolved_ticket_is_judged_by_resolution_time():
    ticket = Ticket(1, "Site down", "a@example.com", "urgent", CREATED, status="resolved")
    ticket.resolved_at = datetime(2024, 5, 6, 12, 30)
    assert not is_breached(ticket, datetime(2024, 6, 1))


def test_time_left():
    ticket = Ticket(1, "Slow laptop", "a@example.com", "normal", CREATED)
    assert time_left(ticket, datetime(2024, 5, 8, 9, 0)) == timedelta(hours=24)
