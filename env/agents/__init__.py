"""Baseline agents: random, heuristic and oracle, behind one interface (see base.py)."""
