"""How much of real libraries' test suites the verdict runs, under the split or sandboxed, and how fast: issue 19's
compatibility figures.

    python bench/bench_compat.py [--libs cachetools,toolz] [--jobs 4] [--runs 5] [--budget 3] [--wall 600] [--json out.json]

For each library of ``bench.compat_libraries.LIBRARIES`` (exact versions, sdists downloaded from PyPI and cached):

- every test file is run on its own, under plain pytest (in the verdict's own test environment, with the same neutral
  settings) and under the split alone (``run_tests(..., select=[file])`` on a task that lists no sandboxed test);
- the tests of the file the split did not pass are placed as a task's author would place them
  (``env.authoring.placement.place``, on the library's own files): those passing sandboxed go to the task's ``sandboxed``
  list, and the file runs again under the verdict of that final task. Its outcomes are the figures: parity counts
  passes of both trust levels, the split share only the outcomes the split reported (one file that cannot be
  collected under the split then costs only its own tests);
- every file runs once more with all its tests sandboxed, for the time that mode costs against plain pytest;
- times are wall clock: the median of up to ``--runs`` runs, repeated only while a measurement has taken less than
  ``--budget`` seconds in all (short runs are noisy, long ones are not and cost minutes), after one untimed warm-up
  run of each mode per library;
- the whole suite is then run once more each way, as a graded task would be (one pytest session), with the union of
  the per-file placements: its wall clock gives the library's time ratio, its outcomes how many tests a graded run
  would see pass (a file that cannot be collected interrupts the whole session, as under plain pytest).

Printed: a table per library (tests passing under plain pytest, how many of those pass under the split alone and
under the verdict with the sandboxed fallback, the share that runs under the split, how many tests were placed
sandboxed, the time ratios), a table per file, the commonest reasons tests fail under the verdict only, and the
commonest reasons the split could not run the tests that now run sandboxed (the first ``E`` line of their
excerpts, grouped): that list is what the split must fix next. ``--jobs`` downloads sdists and builds test
environments in parallel; the measurements themselves run one at a time, so timings compare.
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
    normalise,
    run_plain,
    run_verdict,
    suite_files,
    verdict_sandbox,
    with_sandboxed,
)
from env.authoring.placement import Placement, place  # noqa: E402
from env.project import RepoTask  # noqa: E402
from env.sandbox.runner import Sandbox  # noqa: E402
from env.scratch import scratch_root  # noqa: E402
from env.verdict.outcome import first_error_line  # noqa: E402
from env.verdict.repo_judge import RepoVerdict  # noqa: E402
from env.verdict.testenv import TestEnv, ensure  # noqa: E402

T = TypeVar("T")
SPLIT_TARGET, PASS_TARGET, TIME_TARGET, SANDBOXED_TIME_TARGET = 0.90, 0.99, 3.0, 1.5


@dataclass
class FileResult:
    file: str
    plain: PlainRun
    split: Comparison  # the split alone (the task lists no sandboxed test)
    placement: Placement  # where the file's tests run: the split, or sandboxed where the split could not run them
    verdict: RepoVerdict  # the final task's run: the placement applied
    comparison: Comparison
    plain_s: float
    verdict_s: float
    sandboxed: Comparison  # every test of the file sandboxed
    sandboxed_s: float

    @property
    def ratio(self) -> float:
        return self.verdict_s / self.plain_s if self.plain_s else float("nan")

    @property
    def sandboxed_ratio(self) -> float:
        return self.sandboxed_s / self.plain_s if self.plain_s else float("nan")

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
    def split(self) -> Comparison:
        return merge([f.split for f in self.files])

    @property
    def all_sandboxed(self) -> Comparison:
        return merge([f.sandboxed for f in self.files])

    @property
    def placed(self) -> dict[str, str]:
        """Each test placed sandboxed, with the reason the split could not run it."""
        return {t: why for f in self.files for t, why in f.placement.split_reasons.items()}

    @property
    def plain_s(self) -> float:
        return sum(f.plain_s for f in self.files)

    @property
    def verdict_s(self) -> float:
        return sum(f.verdict_s for f in self.files)

    @property
    def sandboxed_s(self) -> float:
        return sum(f.sandboxed_s for f in self.files)


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


def measure_file(sandbox: Sandbox, task: RepoTask, file: str, plain_run: PlainRun, plain_s: float, runs: Repeat) -> FileResult:
    """One test file: the split alone, the placement and the final task's verdict, then every test sandboxed."""
    split, split_s = timed_median(runs, lambda: run_verdict(sandbox, task, [file]))
    placement = place(sandbox, task, [file], files=task.files, split=split)  # reuses the split run: it decided the same tests
    verdict, verdict_s = split, split_s  # nothing placed: the final task is the split-only one
    if placement.sandboxed:
        placed = with_sandboxed(task, placement.sandboxed)
        verdict, verdict_s = timed_median(runs, lambda: run_verdict(sandbox, placed, [file]))
    boxed = with_sandboxed(task, plain_run.collected)
    boxed_verdict, boxed_s = timed_median(runs, lambda: run_verdict(sandbox, boxed, [file]))
    return FileResult(
        file, plain_run, compare(plain_run, split), placement, verdict, compare(plain_run, verdict), plain_s, verdict_s,
        compare(plain_run, boxed_verdict), boxed_s,
    )  # fmt: skip


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
        first, (first_run, _) = next(iter(plains.items()))
        run_verdict(sandbox, task, [first])  # warm-up: the test environment's warm host starts here
        run_verdict(sandbox, with_sandboxed(task, first_run.collected), [first])  # ... and the sandboxed mode's files
        for file, (plain_run, plain_s) in plains.items():
            result.files.append(measure_file(sandbox, task, file, plain_run, plain_s, runs))
        _, result.suite_plain_s = timed_median(runs, lambda: plain(list(plains)))
        suite_task = with_sandboxed(task, [t for f in result.files for t in f.placement.sandboxed])
        suite_verdict, result.suite_verdict_s = timed_median(runs, lambda: run_verdict(sandbox, suite_task))
        baseline = PlainRun(
            collected=collected,
            outcomes={t: s for run, _ in plains.values() for t, s in run.outcomes.items()},
            excerpts={t: e for run, _ in plains.values() for t, e in run.excerpts.items()},
        )
        result.suite = compare(baseline, suite_verdict)
        problems = [f"collection error in {f}: {first_error_line(e)}" for f, e in suite_verdict.collect_errors.items()]
        problems += [p for p in (suite_verdict.error and first_error_line(suite_verdict.error), suite_verdict.aborted, suite_verdict.void) if p]
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


def spread(ratios: list[float], verdict_s: float, plain_s: float) -> str:
    """Per-file ratios as median, max and summed (summed: total seconds one way over the other)."""
    return f"per file median {statistics.median(ratios):.2f}x, max {max(ratios):.2f}x, summed {ratio(verdict_s, plain_s).strip()}"


def print_summary(results: list[LibraryResult]) -> None:
    print("\n== Libraries (outcomes from per-file runs; 'suite' = one whole-suite session each way)")
    header = f"{'library':16} {'version':12} {'files':>5} {'tests':>6} {'pass plain':>10} {'split only':>10} {'pass verdict':>12} " \
             f"{'share':>7} {'split':>7} {'placed':>6} {'suite pass':>10} {'plain s':>8} {'verdict s':>9} {'ratio':>7} " \
             f"{'suite ratio':>11} {'sbx ratio':>9}"  # fmt: skip
    print(header)
    print("-" * len(header))
    for r in results:
        if r.error and not r.files:
            print(f"{r.lib.name:16} {r.lib.version:12} not measured: {r.error}")
            continue
        c = r.comparison
        suite_pass = f"{len(r.suite.also_passing)}" if r.suite else "n/a"
        print(f"{r.lib.name:16} {r.lib.version:12} {len(r.files):5} {c.collected:6} {len(c.passing):10} {len(r.split.also_passing):10} "
              f"{len(c.also_passing):12} {pct(len(c.also_passing), len(c.passing)):>7} {pct(c.under_split, c.collected):>7} "
              f"{len(r.placed):6} {suite_pass:>10} {r.plain_s:8.2f} {r.verdict_s:9.2f} {ratio(r.verdict_s, r.plain_s):>7} "
              f"{ratio(r.suite_verdict_s, r.suite_plain_s):>11} {ratio(r.sandboxed_s, r.plain_s):>9}")  # fmt: skip
    measured = [r for r in results if r.files]
    total = merge([r.comparison for r in measured])
    split_only = merge([r.split for r in measured])
    boxed = merge([r.all_sandboxed for r in measured])
    placed = sum(len(r.placed) for r in measured)
    plain_s, verdict_s, sandboxed_s = sum(r.plain_s for r in measured), sum(r.verdict_s for r in measured), sum(r.sandboxed_s for r in measured)
    suite_pass = sum(len(r.suite.also_passing) for r in measured if r.suite)
    suite_plain, suite_verdict = sum(r.suite_plain_s for r in measured), sum(r.suite_verdict_s for r in measured)
    print("-" * len(header))
    print(f"{'all':16} {'':12} {sum(len(r.files) for r in measured):5} {total.collected:6} {len(total.passing):10} "
          f"{len(split_only.also_passing):10} {len(total.also_passing):12} {pct(len(total.also_passing), len(total.passing)):>7} "
          f"{pct(total.under_split, total.collected):>7} {placed:6} {suite_pass:>10} {plain_s:8.2f} {verdict_s:9.2f} "
          f"{ratio(verdict_s, plain_s):>7} {ratio(suite_verdict, suite_plain):>11} {ratio(sandboxed_s, plain_s):>9}")  # fmt: skip
    print("split only: passing under the split alone (no test sandboxed); pass verdict: passing under the verdict, the tests "
          "the split could not run placed sandboxed; share: pass verdict / pass plain; split: tests the verdict ran under "
          "the split / tests collected; placed: tests placed sandboxed; suite pass: tests passing in one whole-suite verdict "
          "session; ratio: summed per-file seconds, verdict / plain; suite ratio: one whole-suite session each way; "
          "sbx ratio: summed per-file seconds with every test sandboxed / plain")  # fmt: skip
    shares = [len(r.comparison.also_passing) / len(r.comparison.passing) for r in measured if r.comparison.passing]
    print()
    print(f"passing under plain pytest that also pass under the verdict: {pct(len(total.also_passing), len(total.passing)).strip()} of all tests "
          f"with the sandboxed fallback, median per library {100 * statistics.median(shares) if shares else float('nan'):.1f}% "
          f"(target >= {PASS_TARGET:.0%}); under the split alone {pct(len(split_only.also_passing), len(split_only.passing)).strip()}")  # fmt: skip
    print(f"collected tests run under the split: {pct(total.under_split, total.collected).strip()} (target >= {SPLIT_TARGET:.0%}); "
          f"placed sandboxed: {placed} tests ({pct(placed, total.collected).strip()} of those collected)")  # fmt: skip
    files = [f for r in measured for f in r.files]
    clean = [f for f in files if f.clean]
    if files:
        print(f"time under the verdict / plain pytest, all files: per file median {statistics.median(f.ratio for f in files):.2f}x, "
              f"max {max(f.ratio for f in files):.2f}x; whole suites {ratio(suite_verdict, suite_plain).strip()} (target <= {TIME_TARGET:g}x)")  # fmt: skip
    if clean:
        print(f"time under the verdict / plain pytest, the {len(clean)} files (*) whose every test passes under both: "
              f"{spread([f.ratio for f in clean], sum(f.verdict_s for f in clean), sum(f.plain_s for f in clean))}")  # fmt: skip
    if files:
        print(f"time sandboxed / plain pytest (each file with every test sandboxed): "
              f"{spread([f.sandboxed_ratio for f in files], sandboxed_s, plain_s)} (target <= {SANDBOXED_TIME_TARGET:g}x); "
              f"those runs pass {len(boxed.also_passing)} of the {len(boxed.passing)} plain passes")  # fmt: skip
    if total.gained:
        print(f"tests that pass only under the verdict: {len(total.gained)} (e.g. {total.gained[0]})")


def print_files(results: list[LibraryResult]) -> None:
    print("\n== Files (each run on its own; seconds are wall clock, medians of repeated runs; * every test passes under both; "
          "placed: tests placed sandboxed; sbx ratio: every test sandboxed, seconds / plain)")  # fmt: skip
    header = f"{'library':16} {'file':58} {'tests':>5} {'plain ok':>8} {'verdict ok':>10} {'placed':>6} {'plain s':>8} {'verdict s':>9} " \
             f"{'ratio':>7} {'sbx ratio':>9}"  # fmt: skip
    print(header)
    print("-" * len(header))
    for r in results:
        for f in r.files:
            c = f.comparison
            print(f"{r.lib.name:16} {f.file[-58:]:58} {c.collected:5} {len(c.passing):8} {len(c.also_passing):10} {len(f.placement.sandboxed):6} "
                  f"{f.plain_s:8.2f} {f.verdict_s:9.2f} {ratio(f.verdict_s, f.plain_s):>7} {ratio(f.sandboxed_s, f.plain_s):>9}"
                  f"{' *' if f.clean else ''}")  # fmt: skip
        for file, why in r.excluded.items():
            print(f"{r.lib.name:16} {file[-58:]:58} plain pytest collects nothing, left out: {normalise(why, 90)}")


def print_reasons(reasons: list[tuple[str, str, str]], top: int) -> None:
    """(library, test, reason) grouped by exception type, then by first E line."""
    kinds: Counter[str] = Counter()
    kind_libs: dict[str, set[str]] = defaultdict(set)
    lines: Counter[str] = Counter()
    line_libs: dict[str, set[str]] = defaultdict(set)
    example: dict[str, str] = {}
    for lib, test, reason in reasons:
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


def print_failures(results: list[LibraryResult], top: int) -> None:
    lost = [(r.lib.name, test, status, reason) for r in results for test, (status, reason) in r.comparison.lost.items()]
    print(f"\n== Why tests pass under plain pytest but not under the verdict ({len(lost)} tests, sandboxed fallback included)")
    print_reasons([(lib, test, reason) for lib, test, _, reason in lost], top)
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
            if f.verdict.void:
                print(f"{r.lib.name:16} {f.file}: sandboxed run void: {normalise(f.verdict.void, 150)}")
    print("\n== Whole-suite verdict sessions stopped short")
    for r in results:
        if r.suite_problem:
            print(f"{r.lib.name:16} {normalise(r.suite_problem, 300)}")


def print_placed(results: list[LibraryResult], top: int) -> None:
    placed = [(r.lib.name, test, reason) for r in results for test, reason in r.placed.items()]
    print(f"\n== Why the split could not run tests that now run sandboxed ({len(placed)} tests: what the split must fix next)")
    print_reasons(placed, top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--libs", help=f"comma-separated, from: {', '.join(LIBRARIES)} (default: all)")
    parser.add_argument("--jobs", type=int, default=4, help="sdists downloaded and test environments built at once")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per file and per suite at most (medians printed)")
    parser.add_argument("--budget", type=float, default=3.0, help="no further timed run of a measurement once its runs took this many seconds")
    parser.add_argument("--wall", type=float, default=600.0, help="the verdict's wall clock for one test session, in seconds")
    parser.add_argument("--top", type=int, default=30, help="failure reasons printed")
    parser.add_argument("--json", type=Path, help="also write every lost test (status, reason) and every placed one (the split's reason) here")
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
            print(f"measured {lib.pin:28} {len(c.also_passing):5}/{len(c.passing):<5} pass under both, {len(result.placed):5} placed sandboxed  "
                  f"({time.perf_counter() - began:6.1f} s)"
                  + (f"  error: {result.error}" if result.error else ""), flush=True)  # fmt: skip
    finally:
        sandbox.close()

    print_summary(results)
    print_files(results)
    print_failures(results, args.top)
    print_placed(results, args.top)
    for r in results:
        print(f"\n{r.lib.pin}: {r.lib.why}" + (f" (left out: {', '.join(r.lib.exclude)})" if r.lib.exclude else ""))
    if args.json:
        data = {
            r.lib.pin: {"lost": {t: {"status": s, "reason": why} for t, (s, why) in r.comparison.lost.items()}, "sandboxed": r.placed}
            for r in results
        }
        args.json.write_text(json.dumps(data, indent=1))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
