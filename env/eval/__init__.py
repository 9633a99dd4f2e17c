"""Evaluation: statistics for comparing agents (the harness and reports build on ``metrics``)."""
