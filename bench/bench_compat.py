"""How much of real libraries' test suites the split verdict runs, and how fast: issue 19's compatibility figures.

    python bench/bench_compat.py [--libs cachetools,toolz] [--jobs 4] [--runs 5] [--budget 3] [--wall 600] [--json out.json]

For each library of ``bench.compat_libraries.LIBRARIES`` (exact versions, sdists downloaded from PyPI and cached):

- every test file is run on its own, under plain pytest (in the verdict's own test environment, with the same neutral
  settings) and under the verdict (``run_tests(..., select=[file])``). The outcomes of these per-file runs are the
  figures (one file that cannot be collected under the split then costs only its own tests), and their wall clock is
  the per-file time: the median of up to ``--runs`` runs, repeated only while a measurement has taken less than
  ``--budget`` seconds in all (short runs are noisy, long ones are not and cost minutes), after one untimed warm-up
  run each way per library;
- the whole suite is then run once more each way, as a graded task would be (one pytest session): its wall clock
  gives the library's time ratio, its outcomes how many tests a graded run would see pass (a file that cannot be
  collected interrupts the whole session, as under plain pytest).

Printed: a table per library (tests passing under plain pytest, how many of those also pass under the verdict, the
share that runs under the split, the time ratios), a table per file, and the commonest reasons tests fail under the
verdict only (the first ``E`` line of their excerpts, grouped), which say what to fix next. ``--jobs`` downloads
sdists and builds test environments in parallel; the measurements themselves run one at a time, so timings compare.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.compat_libraries import (  # noqa: E402
    LIBRARIES,
    Comparison,
    Library,
    PlainRun,
    build_task,
    compare,
    error_kind,
    fetch_sdist,
    first_error_line,
    normalise,
    run_plain,
    run_verdict,
    suite_files,
    verdict_sandbox,
)
from env.project import RepoTask  # noqa: E402
from env.sandbox.runner import Sandbox  # noqa: E402
from env.scratch import scratch_root  # noqa: E402
from env.verdict.repo_judge import RepoVerdict  # noqa: E402
from env.verdict.testenv import TestEnv, ensure  # noqa: E402

T = TypeVar("T")
SPLIT_TARGET, PASS_TARGET, TIME_TARGET, SANDBOXED_TIME_TARGET = 0.90, 0.99, 3.0, 1.5


@dataclass
class FileResult:
    file: str
    plain: PlainRun
    verdict: RepoVerdict
    comparison: Comparison
    plain_s: float
    verdict_s: float

    @property
    def ratio(self) -> float:
        return self.verdict_s / self.plain_s if self.plain_s else float("nan")

    @property
    def clean(self) -> bool:
        """Every test passing under plain pytest passes under the verdict too: only then do the times compare (a
        test that fails costs its traceback, one that cannot be collected costs nothing)."""
        return not self.comparison.lost and bool(self.comparison.passing)


@dataclass
class LibraryResult:
    lib: Library
    files: list[FileResult] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)  # file -> why plain pytest collected nothing from it
    suite_plain_s: float = float("nan")
    suite_verdict_s: float = float("nan")
    suite: Comparison | None = None  # the whole-suite verdict run against the per-file plain baseline
    suite_problem: str = ""  # what stopped the whole-suite verdict run short, if anything
    error: str = ""  # why the library could not be measured at all

    @property
    def comparison(self) -> Comparison:
        return merge([f.comparison for f in self.files])

    @property
    def plain_s(self) -> float:
        return sum(f.plain_s for f in self.files)

    @property
    def verdict_s(self) -> float:
        return sum(f.verdict_s for f in self.files)


def merge(parts: list[Comparison]) -> Comparison:
    lost: dict[str, tuple[str, str]] = {}
    for part in parts:
        lost.update(part.lost)
    return Comparison(
        collected=sum(p.collected for p in parts),
        passing=[t for p in parts for t in p.passing],
        also_passing=[t for p in parts for t in p.also_passing],
        under_split=sum(p.under_split for p in parts),
        lost=lost,
        gained=[t for p in parts for t in p.gained],
    )


@dataclass(frozen=True)
class Repeat:
    runs: int  # at most this many timed runs of one measurement
    budget: float  # ... and no new one once the runs so far took this many seconds


def timed_median(repeat: Repeat, fn: Callable[[], tuple[T, float]]) -> tuple[T, float]:
    """``fn()`` (which returns a result and the seconds it took) run as ``repeat`` allows, at least once: the last
    result and the median of the seconds."""
    results = [fn()]
    while len(results) < repeat.runs and sum(r[1] for r in results) < repeat.budget:
        results.append(fn())
    return results[-1][0], statistics.median(r[1] for r in results)


def prepare(lib: Library) -> tuple[Path, TestEnv]:
    return fetch_sdist(lib), ensure(lib.requirements)


def measure(lib: Library, tree: Path, env: TestEnv, sandbox: Sandbox, runs: Repeat) -> LibraryResult:
    result = LibraryResult(lib)
    folder = Path(tempfile.mkdtemp(prefix=f"adbg-compat-{lib.name}-", dir=scratch_root()))
    try:
        files = suite_files(lib, tree)
        build_task(lib, tree, folder, ["placeholder::test"])  # copies the sdist into repo/, where plain pytest runs
        repo = folder / "repo"

        def plain(chosen: list[str]) -> tuple[PlainRun, float]:
            run = run_plain(lib, repo, env, chosen)
            return run, run.seconds

        plains: dict[str, tuple[PlainRun, float]] = {}
        plain(files[:1])  # warm-up: the sdist's files and the test environment in the page cache
        for file in files:
            plain_run, seconds = timed_median(runs, lambda f=file: plain([f]))
            if plain_run.collected:
                plains[file] = (plain_run, seconds)
            else:
                reason = next(iter(plain_run.collect_errors.values()), "") or plain_run.tail or "no test collected"
                result.excluded[file] = first_error_line(reason)
        if not plains:
            result.error = "plain pytest collected no test"
            return result
        collected = [t for run, _ in plains.values() for t in run.collected]
        task: RepoTask = build_task(lib, tree, folder, collected)
        run_verdict(sandbox, task, [next(iter(plains))])  # warm-up: the test environment's warm host starts here
        for file, (plain_run, plain_s) in plains.items():
            verdict, verdict_s = timed_median(runs, lambda f=file: run_verdict(sandbox, task, [f]))
            result.files.append(FileResult(file, plain_run, verdict, compare(plain_run, verdict), plain_s, verdict_s))
        _, result.suite_plain_s = timed_median(runs, lambda: plain(list(plains)))
        suite_verdict, result.suite_verdict_s = timed_median(runs, lambda: run_verdict(sandbox, task))
        baseline = PlainRun(
            collected=collected,
            outcomes={t: s for run, _ in plains.values() for t, s in run.outcomes.items()},
            excerpts={t: e for run, _ in plains.values() for t, e in run.excerpts.items()},
        )
        result.suite = compare(baseline, suite_verdict)
        problems = [f"collection error in {f}: {first_error_line(e)}" for f, e in suite_verdict.collect_errors.items()]
        problems += [p for p in (suite_verdict.error and first_error_line(suite_verdict.error), suite_verdict.aborted) if p]
        result.suite_problem = "; ".join(problems)
    except Exception as exc:  # one library's failure is reported, the others still run
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return result


# -- printing ----------------------------------------------------------------------------------------


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "   n/a"


def ratio(a: float, b: float) -> str:
    return f"{a / b:5.2f}x" if b and a == a and b == b else "   n/a"


def print_summary(results: list[LibraryResult]) -> None:
    print("\n== Libraries (outcomes from per-file runs; 'suite' = one whole-suite session each way)")
    header = f"{'library':16} {'version':12} {'files':>5} {'tests':>6} {'pass plain':>10} {'pass verdict':>12} {'share':>7} " \
             f"{'split':>7} {'suite pass':>10} {'plain s':>8} {'verdict s':>9} {'ratio':>7} {'suite ratio':>11}"  # fmt: skip
    print(header)
    print("-" * len(header))
    for r in results:
        if r.error and not r.files:
            print(f"{r.lib.name:16} {r.lib.version:12} not measured: {r.error}")
            continue
        c = r.comparison
        suite_pass = f"{len(r.suite.also_passing)}" if r.suite else "n/a"
        print(f"{r.lib.name:16} {r.lib.version:12} {len(r.files):5} {c.collected:6} {len(c.passing):10} {len(c.also_passing):12} "
              f"{pct(len(c.also_passing), len(c.passing)):>7} {pct(c.under_split, c.collected):>7} {suite_pass:>10} "
              f"{r.plain_s:8.2f} {r.verdict_s:9.2f} {ratio(r.verdict_s, r.plain_s):>7} {ratio(r.suite_verdict_s, r.suite_plain_s):>11}")  # fmt: skip
    measured = [r for r in results if r.files]
    total = merge([r.comparison for r in measured])
    plain_s, verdict_s = sum(r.plain_s for r in measured), sum(r.verdict_s for r in measured)
    suite_pass = sum(len(r.suite.also_passing) for r in measured if r.suite)
    suite_plain, suite_verdict = sum(r.suite_plain_s for r in measured), sum(r.suite_verdict_s for r in measured)
    print("-" * len(header))
    print(f"{'all':16} {'':12} {sum(len(r.files) for r in measured):5} {total.collected:6} {len(total.passing):10} {len(total.also_passing):12} "
          f"{pct(len(total.also_passing), len(total.passing)):>7} {pct(total.under_split, total.collected):>7} {suite_pass:>10} "
          f"{plain_s:8.2f} {verdict_s:9.2f} {ratio(verdict_s, plain_s):>7} {ratio(suite_verdict, suite_plain):>11}")  # fmt: skip
    print("share: pass verdict / pass plain; split: tests the verdict ran under the split / tests collected; suite pass: tests "
          "passing in one whole-suite verdict session; ratio: summed per-file seconds, verdict / plain; suite ratio: one "
          "whole-suite session each way")  # fmt: skip
    shares = [len(r.comparison.also_passing) / len(r.comparison.passing) for r in measured if r.comparison.passing]
    file_ratios = [f.ratio for r in measured for f in r.files]
    print()
    print(f"passing under plain pytest that also pass under the verdict: {pct(len(total.also_passing), len(total.passing)).strip()} of all tests, "
          f"median per library {100 * statistics.median(shares) if shares else float('nan'):.1f}% (target >= {PASS_TARGET:.0%})")  # fmt: skip
    print(f"collected tests run under the split: {pct(total.under_split, total.collected).strip()} (target >= {SPLIT_TARGET:.0%}; "
          f"these tasks list no 'sandboxed' test, so a test the split cannot run does not run)")  # fmt: skip
    clean = [f for r in measured for f in r.files if f.clean]
    if file_ratios:
        print(f"time under the split / plain pytest, all files: per file median {statistics.median(file_ratios):.2f}x, max {max(file_ratios):.2f}x; "
              f"whole suites {ratio(suite_verdict, suite_plain).strip()} (target <= {TIME_TARGET:g}x)")  # fmt: skip
    if clean:
        clean_ratios = [f.ratio for f in clean]
        print(f"time under the split / plain pytest, the {len(clean)} files (*) whose every test passes under both: per file median "
              f"{statistics.median(clean_ratios):.2f}x, max {max(clean_ratios):.2f}x, summed "
              f"{ratio(sum(f.verdict_s for f in clean), sum(f.plain_s for f in clean)).strip()}")  # fmt: skip
    print(f"time sandboxed / plain pytest: not measured here, these tasks run every test split (target <= {SANDBOXED_TIME_TARGET:g}x)")
    if total.gained:
        print(f"tests that pass only under the verdict: {len(total.gained)} (e.g. {total.gained[0]})")


def print_files(results: list[LibraryResult]) -> None:
    print("\n== Files (each run on its own; seconds are wall clock, medians of repeated runs; * every test passes under both)")
    header = f"{'library':16} {'file':58} {'tests':>5} {'plain ok':>8} {'verdict ok':>10} {'plain s':>8} {'verdict s':>9} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    for r in results:
        for f in r.files:
            c = f.comparison
            print(f"{r.lib.name:16} {f.file[-58:]:58} {c.collected:5} {len(c.passing):8} {len(c.also_passing):10} "
                  f"{f.plain_s:8.2f} {f.verdict_s:9.2f} {ratio(f.verdict_s, f.plain_s):>7}{' *' if f.clean else ''}")  # fmt: skip
        for file, why in r.excluded.items():
            print(f"{r.lib.name:16} {file[-58:]:58} plain pytest collects nothing, left out: {normalise(why, 90)}")


def print_failures(results: list[LibraryResult], top: int) -> None:
    lost = [(r.lib.name, test, status, reason) for r in results for test, (status, reason) in r.comparison.lost.items()]
    print(f"\n== Why tests pass under plain pytest but not under the verdict ({len(lost)} tests)")
    kinds: Counter[str] = Counter()
    kind_libs: dict[str, set[str]] = defaultdict(set)
    lines: Counter[str] = Counter()
    line_libs: dict[str, set[str]] = defaultdict(set)
    example: dict[str, str] = {}
    for lib, test, _status, reason in lost:
        kind, line = error_kind(reason), normalise(reason, 150)
        kinds[kind] += 1
        kind_libs[kind].add(lib)
        lines[line] += 1
        line_libs[line].add(lib)
        example.setdefault(line, test)
    print("\nby exception type:")
    for kind, count in kinds.most_common():
        print(f"{count:6}  {kind:40} {', '.join(sorted(kind_libs[kind]))}")
    print(f"\nby first E line (top {top}):")
    for line, count in lines.most_common(top):
        print(f"{count:6}  {line}\n        libraries: {', '.join(sorted(line_libs[line]))}; e.g. {example[line]}")
    statuses = Counter(status for _, _, status, _ in lost)
    print("\nverdict statuses of those tests: " + ", ".join(f"{s} {n}" for s, n in statuses.most_common()))
    print("\n== Files whose verdict run failed as a whole (collection error, run error or abort: each costs all its tests)")
    for r in results:
        for f in r.files:
            for file, excerpt in f.verdict.collect_errors.items():
                print(f"{r.lib.name:16} {file or '<session>'}: {normalise(first_error_line(excerpt), 150)}")
            if f.verdict.error:
                print(f"{r.lib.name:16} {f.file}: run error: {normalise(first_error_line(f.verdict.error), 150)}")
            if f.verdict.aborted:
                print(f"{r.lib.name:16} {f.file}: run aborted: {normalise(f.verdict.aborted, 150)}")
    print("\n== Whole-suite verdict sessions stopped short")
    for r in results:
        if r.suite_problem:
            print(f"{r.lib.name:16} {normalise(r.suite_problem, 300)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--libs", help=f"comma-separated, from: {', '.join(LIBRARIES)} (default: all)")
    parser.add_argument("--jobs", type=int, default=4, help="sdists downloaded and test environments built at once")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per file and per suite at most (medians printed)")
    parser.add_argument("--budget", type=float, default=3.0, help="no further timed run of a measurement once its runs took this many seconds")
    parser.add_argument("--wall", type=float, default=600.0, help="the verdict's wall clock for one test session, in seconds")
    parser.add_argument("--top", type=int, default=30, help="failure reasons printed")
    parser.add_argument("--json", type=Path, help="also write every lost test with its status and reason here")
    args = parser.parse_args()
    names = args.libs.split(",") if args.libs else list(LIBRARIES)
    unknown = [n for n in names if n not in LIBRARIES]
    if unknown:
        parser.error(f"unknown libraries: {', '.join(unknown)}")
    libs = [LIBRARIES[n] for n in names]

    started = time.perf_counter()
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = {lib.name: pool.submit(prepare, lib) for lib in libs}
    print(f"prepared {len(libs)} libraries (sdists and test environments, cached after the first time) in {time.perf_counter() - started:.1f} s")

    sandbox = verdict_sandbox(args.wall)
    print(f"isolation {sandbox.isolation.tier}; the verdict's wall clock per session {args.wall:g} s; timings: medians of up to {args.runs} runs, "
          f"repeated while under {args.budget:g} s; plain pytest and the verdict's host both run {sys.version.split()[0]} with the same test env")  # fmt: skip
    results: list[LibraryResult] = []
    try:
        for lib in libs:
            try:
                tree, env = futures[lib.name].result()
            except Exception as exc:
                results.append(LibraryResult(lib, error=f"{type(exc).__name__}: {str(exc)[:300]}"))
                continue
            began = time.perf_counter()
            result = measure(lib, tree, env, sandbox, Repeat(max(1, args.runs), args.budget))
            results.append(result)
            c = result.comparison
            print(f"measured {lib.pin:28} {len(c.also_passing):5}/{len(c.passing):<5} pass under both  ({time.perf_counter() - began:6.1f} s)"
                  + (f"  error: {result.error}" if result.error else ""), flush=True)  # fmt: skip
    finally:
        sandbox.close()

    print_summary(results)
    print_files(results)
    print_failures(results, args.top)
    for r in results:
        print(f"\n{r.lib.pin}: {r.lib.why}" + (f" (left out: {', '.join(r.lib.exclude)})" if r.lib.exclude else ""))
    if args.json:
        data = {r.lib.pin: {t: {"status": s, "reason": why} for t, (s, why) in r.comparison.lost.items()} for r in results}
        args.json.write_text(json.dumps(data, indent=1))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
