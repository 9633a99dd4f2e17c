"""Plain-text timesheets with per-day, per-week and per-month totals."""

from timesheet.entries import Entry, EntryError
from timesheet.parsing import ParseError, parse_line, parse_text
from timesheet.report import Timesheet, format_minutes
from timesheet.zones import UTC, ZoneError, format_offset, parse_offset

__all__ = [
    "UTC",
    "Entry",
    "EntryError",
    "ParseError",
    "Timesheet",
    "ZoneError",
    "format_minutes",
    "format_offset",
    "parse_line",
    "parse_offset",
    "parse_text",
]
