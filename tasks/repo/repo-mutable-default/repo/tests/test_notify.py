from datetime import datetime

import pytest

from helpdesk.models import Ticket
from helpdesk.notify import Notification, build_notification

CREATED = datetime(2024, 5, 6, 9, 0)


def test_subject_and_body():
    ticket = Ticket(7, "Printer on fire", "alice@example.com", "urgent", CREATED, status="assigned", assignee="sam")
    note = build_notification(ticket, "assigned")
    assert note.subject == "[#7] sam is now handling: Printer on fire"
    assert note.body == "Ticket #7 Printer on fire is now assigned."


def test_comment_text_is_the_body():
    ticket = Ticket(3, "VPN down", "carol@example.com", "high", CREATED)
    assert build_notification(ticket, "comment", "Have you tried turning it off?").body == "Have you tried turning it off?"


def test_unknown_event():
    ticket = Ticket(3, "VPN down", "carol@example.com", "high", CREATED)
    with pytest.raises(ValueError):
        build_notification(ticket, "deleted")


def test_add_recipient_skips_duplicates_and_blanks():
    note = Notification("s", "b", ["ops@example.com"])
    note.add_recipient("alice@example.com")
    note.add_recipient("ops@example.com")
    note.add_recipient(None)
    note.add_recipient("")
    assert note.to == ["ops@example.com", "alice@example.com"]


def test_notifications_for_different_tickets_have_their_own_recipients():
    first = Ticket(1, "Printer on fire", "alice@example.com", "urgent", CREATED)
    second = Ticket(2, "VPN down", "bob@example.com", "high", CREATED, assignee="sam@support.example.com")
    second.watchers.append("lead@example.com")
    assert build_notification(first, "created").to == ["alice@example.com"]
    assert build_notification(second, "comment").to == [
        "bob@example.com",
        "sam@support.example.com",
        "lead@example.com",
    ]
