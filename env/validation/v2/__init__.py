"""OpenEnv's validation policy v2 (its RFC 008), proved against a running server: one report, OpenEnv's schema.

    from env.validation.v2.suite import table, validate
    report = validate("http://localhost:8000")          # an openenv.validation.ValidationReportV2
    print(table(report))                                 # one line per check: status, id, evidence

``python validator.py --v2 [--json report.json]`` runs it (``validator.py`` starts a server when given no URL).

Every check id of the policy's local lane (``openenv/validation/policies/severity-v2.json``) is in the report, with
the meaning the RFC gives it. Where OpenEnv ships a grader, it runs here, on evidence OpenEnv's own collector
gathers from this server (``collect_runtime_evidence`` over ``/ws``, driven by the manifest's runtime plan,
``validation/runtime.json``): ``static.manifest``, ``runtime.reward_well_formed``, ``runtime.observation_schema``,
``runtime.state_contract`` and ``runtime.network_policy`` (which needs a provider that measures the network from
outside, so it skips and says so). OpenEnv's scheduler orders the checks and skips any whose dependency did not
pass, naming it (as the RFC asks, every semantic check depends on ``runtime.episode_determinism``). A check that
cannot run here is a SKIP with its reason, never a PASS; the policy (``apply_policy``) turns the results into the
verdict (a SKIP makes it at best WARN).

The modules, one job each (a request's path: ``suite`` runs the checks, which read the ``context`` and play their
episodes with ``env.validation.player``, the player the pre-submission check shares):
- ``context``: ``Run``, what every check reads (server, manifest, tasks) and the oracle and floor episodes they share.
- ``check``: the check's shape for OpenEnv's scheduler, and its result or skip.
- ``canaries``: the plays that must grade at or below the floor (the manifest's ``capabilities.canaries``).
- ``static_checks``, ``runtime_checks``, ``containment_checks``, ``semantic_checks``: the checks, by level.
- ``memory_envelope``: the server's peak memory while the checks play.
- ``suite``: ``validate`` (the checks in the policy's order, the verdict) and ``table``.
"""
