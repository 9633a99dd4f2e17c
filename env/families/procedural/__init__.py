"""Procedurally generated debugging tasks under controlled noise and drift (the DebugOps-RX design).

    from env.families.procedural.generator import generate, sample
    task = generate(7, "logic_error", noise=0.3, drift=0.15, seed=42)   # T ~ D(n, b, η, δ, seed), validated
    task.write(Path("out/task"))                                         # task.json, repo/, gold.patch
    sample("hard", "ood", 7)                                             # a preset's ranges, a split's bug types

model: bug types, presets, splits, the task; blocks: the service's module kinds and their tests;
bugs: where each bug type goes and the tests that reveal it; generator: assembly, facts, generation;
validate: the in-process check. family, episode and noise serve the tasks to agents.
"""
