"""Validation: a running server proved against a policy, from the outside, as an agent reaches it. Two policies, one
player:

- ``presubmission``: this project's own checks (``python validator.py``), one PASS or FAIL line each.
- ``v2/``: OpenEnv's validation policy v2 (``python validator.py --v2``), one report in OpenEnv's schema.
- ``player``: how both play their episodes: over HTTP through the harness's driver (``env.eval.drivers.HttpDriver``),
  over ``/ws`` and MCP; the wire's bodies, typed.
- ``__main__``: ``validator.py``'s command line (the root file is its entry point; ``python -m env.validation`` is the same).

Validation is not evaluation: ``env.eval`` measures agents; this package checks the environment. It may import the
harness's driver; the harness imports nothing from here (no circle between packages).
"""
