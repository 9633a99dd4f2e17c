"""Errors raised by the helpdesk core."""


class HelpdeskError(Exception):
    """Base class for helpdesk errors."""


class TicketNotFound(HelpdeskError, KeyError):
    """No ticket has the requested id."""

    def __str__(self) -> str:
        return f"no ticket #{self.args[0]}"


class WorkflowError(HelpdeskError):
    """A status change that the ticket workflow does not allow."""
