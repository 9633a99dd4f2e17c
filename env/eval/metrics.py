"""Statistics for agent evaluation: plain functions of success counts, as defined in the pdb-agent study.

    pass_at_k(n=3, c=1, k=2)          # 0.6667: P(at least one of k runs drawn from n succeeds)
    pass_hat_k(n=3, c=2, k=2)         # 0.3333: P(all k drawn runs succeed)
    passx_at_k([1, 2], n=3)           # 0.7778: one run of each of 2 agents, P(at least one succeeds)
    wilson_interval(7, 10)            # (0.3968, 0.8922): 95% interval for a success rate
    pass_at_k_interval(5, 1, 2)       # (0.0711, 0.8590): 95% interval for one task's pass@2

For one task, ``n`` runs per agent and ``c`` (``c_m``) of them correct. Averages over a benchmark
are plain means of these per-task values (linearity keeps them unbiased).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

Z95 = 1.959963984540054


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k)."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k: the probability that all k runs drawn without replacement succeed, C(c, k) / C(n, k)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def passx_at_k(counts: Sequence[int], n: int) -> float:
    """Cross-agent passX@k (the study's equation 3): 1 - prod_m (n - c_m) / n^k, k = len(counts).

    ``counts[m]`` is how many of agent m's ``n`` runs solved the task; every agent has ``n`` runs.
    """
    if not counts:
        raise ValueError("need at least one agent's count")
    for c in counts:
        _check(n, c, 1)
    failures = 1.0
    for c in counts:
        failures *= (n - c) / n
    return 1.0 - failures


def counts_within(runs: Sequence[Sequence[tuple[bool, int]]], budget: int) -> list[int]:
    """Per-agent counts of runs that succeeded within ``budget`` relays (or steps): s_jm(r), equation 7.

    ``runs[m]`` lists agent m's runs as (correct, relays used). Feed the result to ``passx_at_k`` or
    ``pass_at_k`` for the thresholded variants.
    """
    return [sum(1 for correct, used in agent if correct and used <= budget) for agent in runs]


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval (95% by default) for a success rate."""
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials and trials > 0, got {successes}/{trials}")
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_at_k_interval(n: int, c: int, k: int, z: float = Z95) -> tuple[float, float]:
    """95% interval (by default) for one task's true pass@k, from ``c`` of ``n`` runs solved.

    The runs of a task are independent draws with one success rate p, and its true pass@k is 1 - (1 - p)^k, which
    rises with p: so the Wilson interval [lo, hi] for p maps to [1 - (1 - lo)^k, 1 - (1 - hi)^k] with the same
    coverage. It bounds the true pass@k, not ``pass_at_k``'s estimate: at k = n that estimate is 0 or 1 (did any run
    solve it), and with 0 < c < n it lies above the interval's top, which stays below 1.
    """
    _check(n, c, k)
    lo, hi = wilson_interval(c, n, z)
    return 1.0 - (1.0 - lo) ** k, 1.0 - (1.0 - hi) ** k


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0.0 for a single value)."""
    if not values:
        raise ValueError("need at least one value")
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0
