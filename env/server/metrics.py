"""``GET /metrics``: what a replica is doing, in the Prometheus text format (``prometheus-client``).

    metrics = ServerMetrics(replica, store, settings, idle)
    metrics.step("repo", submitted=True)          # on every step
    metrics.refused("draining")                   # a reset refused, a capacity error ...
    metrics.render()                              # the exposition, for the route

Counters (``rate()`` gives steps and submissions per second), the sandbox run latency histogram (every run of
this process, observed through ``env.sandbox.runner.observe_runs``), and gauges computed when scraped: open
episodes by family and transport, capacity left, draining. One registry per app: two apps in one process (the
tests build many) never mix their counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from env.config import Settings
from env.contract import Playable
from env.sandbox.runner import observe_runs
from env.sandbox.slots import CpuSlots
from env.server.episodes import EpisodeStore
from env.server.idle import IdleSessions
from env.server.replica import Replica

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_RUN_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class _Live(Collector):
    """Gauges read from the replica and the store at each scrape (nothing to keep in step)."""

    def __init__(self, replica: Replica, store: EpisodeStore, settings: Settings, idle: IdleSessions | None, cpu: CpuSlots | None):
        self.replica, self.store, self.settings, self.idle, self.cpu = replica, store, settings, idle, cpu
        self.mcp_idle_closes: Callable[[], int] | None = None  # set once the app's MCP sessions exist (count_mcp_closes)

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        ws: list[Playable] = self.replica.session_episodes()
        http = self.store.open_episodes()
        active = GaugeMetricFamily("adbg_active_sessions", "Open (unfinished) episodes, by task family and transport", labels=["family", "transport"])
        counts: dict[tuple[str, str], int] = {}
        for transport, episodes in (("ws", ws), ("http", http)):
            for episode in episodes:
                if not episode.done:
                    counts[(episode.family, transport)] = counts.get((episode.family, transport), 0) + 1
        for (family, transport), count in sorted(counts.items()):
            active.add_metric([family, transport], count)
        yield active
        capacity = GaugeMetricFamily("adbg_capacity_left", "Sessions this replica can still open, by transport", labels=["transport"])
        capacity.add_metric(["ws"], max(0, self.settings.max_sessions - len(self.replica.sessions)))
        capacity.add_metric(["http"], max(0, self.settings.http_episodes - len(http)))
        yield capacity
        closes = CounterMetricFamily(
            "adbg_idle_closes", "Sessions closed for idleness, by transport (ws: /ws and /mcp sockets; http: HTTP episodes and MCP sessions over POST /mcp)",
            labels=["transport"],
        )
        closes.add_metric(["ws"], self.idle.closes if self.idle is not None else 0)
        closes.add_metric(["http"], self.store.idle_closes + (self.mcp_idle_closes() if self.mcp_idle_closes is not None else 0))
        yield closes
        if self.cpu is not None:
            yield GaugeMetricFamily("adbg_cpu_slots_busy", f"CPU slots held by computing runs (of {self.cpu.count})", value=self.cpu.busy)
            yield GaugeMetricFamily("adbg_cpu_slots_queued", "Runs waiting for a CPU slot", value=self.cpu.queued)
            yield CounterMetricFamily("adbg_cpu_slot_wait_seconds", "Seconds runs spent waiting for a CPU slot, in all", value=self.cpu.waited_s)
        yield GaugeMetricFamily("adbg_draining", "1 while the replica drains after SIGTERM (no new sessions)", value=int(self.replica.draining))
        yield GaugeMetricFamily("adbg_drain_seconds_left", "Seconds until a draining replica stops (0 when not draining)", value=self.replica.seconds_left() if self.replica.draining else 0.0)


class ServerMetrics:
    def __init__(
        self, replica: Replica, store: EpisodeStore, settings: Settings, idle: IdleSessions | None = None, cpu: CpuSlots | None = None,
    ):
        self.registry = CollectorRegistry()
        self.steps = Counter("adbg_steps", "Steps taken, by task family", ["family"], registry=self.registry)
        self.submissions = Counter("adbg_submissions", "Submissions (submit, submit_fix), by task family", ["family"], registry=self.registry)
        self.refusals = Counter("adbg_refusals", "Episodes or requests refused, by reason", ["reason"], registry=self.registry)
        self.infra_failures = Counter(
            "adbg_infra_failures", "Steps and resets the machine, not the agent, decided (paid nothing, not counted), by cause", ["cause"], registry=self.registry,
        )
        self.sandbox_runs = Histogram("adbg_sandbox_run_seconds", "Wall time of each sandbox run of this process", buckets=_RUN_BUCKETS, registry=self.registry)
        self._live = _Live(replica, store, settings, idle, cpu)
        self.registry.register(self._live)
        observe_runs(self._run_finished)

    def count_mcp_closes(self, closes: Callable[[], int]) -> None:
        """Count the MCP sessions over POST /mcp closed for idleness (made after the metrics: they count refusals)."""
        self._live.mcp_idle_closes = closes

    def _run_finished(self, seconds: float) -> None:
        self.sandbox_runs.observe(seconds)

    def step(self, family: str, submitted: bool) -> None:
        self.steps.labels(family).inc()
        if submitted:
            self.submissions.labels(family).inc()

    def infra_failed(self, cause: str) -> None:
        self.infra_failures.labels(cause).inc()

    def refused(self, reason: str) -> None:
        self.refusals.labels(reason).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
