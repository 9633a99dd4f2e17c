"""What the agent learns of the held-out tests: how many failed, never which or with what input.

    held_out_line(2)     # "2 held-out tests failed"
    held_out_line(0)     # "0 held-out tests failed"
"""

from __future__ import annotations


def held_out_line(failed: int) -> str:
    """The one line a graded run's report says about the held-out tests."""
    return f"{failed} held-out test{'' if failed == 1 else 's'} failed"
