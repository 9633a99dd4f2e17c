"""Logs under controlled uncertainty: noise (η) and drift (δ) tied to the real program.

    logs = LogModel(facts, noise=0.4, drift=0.2, rng=random.Random("task:seed"))
    lines = logs.observe()        # analyze_logs: the current buffer, as text lines
    logs.tick()                   # once per step: with probability δ the runtime flutters

``facts`` come from the task and from a real run of its failing tests: the functions on the failing
path (each with the log messages its code emits), the error the run raised and where, and the
real callers and callees of the faulty function. The noise model is the issue's:

- every line is corrupted with probability η (cut short, characters lost, fields dropped);
- the error is attributed to a real caller or callee of the faulty function with probability 0.7η
  (a plausible wrong place, never a random file);
- after every line, with probability η, an irrelevant but realistic line from another part of the
  same program is added;
- at each step, with probability δ, timing- or order-dependent lines change (latencies, the order of
  two lines from different modules): earlier observations become unstable, but the error line is
  never removed, so the task stays solvable.

Pure data and a local ``random.Random``: the same task, seed and actions give the same logs.
"""

from __future__ import annotations

import random
from typing import Literal

from pydantic import BaseModel, Field

Kind = Literal["trace", "error", "irrelevant", "flutter"]


class Emitter(BaseModel):
    """A project function and the log messages its code emits."""

    where: str = Field(description="file::function")
    logger: str
    messages: list[str]


class ErrorFact(BaseModel):
    exc_type: str
    message: str
    where: str = Field(description="file::function where the run raised or the wrong value appeared")


class LogFacts(BaseModel):
    path: list[Emitter] = Field(description="functions on the failing path, outermost first")
    others: list[Emitter] = Field(description="the rest of the program (for irrelevant lines)")
    neighbours: list[str] = Field(description="real callers and callees of the faulty function, file::function")
    errors: list[ErrorFact]


class LogLine(BaseModel):
    kind: Kind
    level: str
    logger: str
    where: str
    text: str
    corrupted: bool = False
    misattributed: bool = False

    def render(self, clock: int) -> str:
        return f"t+{clock:05d}ms {self.level:<7} {self.logger} [{self.where}] {self.text}"


def _fill(template: str, rng: random.Random) -> str:
    """A logged message with %-style arguments filled in with plausible values."""
    out, i = [], 0
    while i < len(template):
        if template[i] == "%" and i + 1 < len(template) and template[i + 1] in "sdfr":
            kind = template[i + 1]
            out.append(str(rng.randint(1, 999)) if kind == "d" else f"{rng.uniform(0, 500):.2f}" if kind == "f" else f"#{rng.randint(100, 9999)}")
            i += 2
        else:
            out.append(template[i])
            i += 1
    return "".join(out)


def _corrupt(text: str, rng: random.Random) -> str:
    how = rng.randrange(3)
    if how == 0 and len(text) > 8:  # cut short, as a truncated write
        return text[: rng.randint(4, len(text) - 2)] + "…"
    if how == 1:  # characters lost in transport
        chars = list(text)
        for _ in range(max(1, len(chars) // 6)):
            chars[rng.randrange(len(chars))] = "\ufffd"
        return "".join(chars)
    words = text.split()
    if len(words) > 1:  # a field dropped
        del words[rng.randrange(len(words))]
    return " ".join(words) if words else "\ufffd"


class LogModel:
    def __init__(self, facts: LogFacts, noise: float, drift: float, rng: random.Random):
        if not (0.0 <= noise <= 1.0 and 0.0 <= drift <= 1.0):
            raise ValueError("noise and drift must be within [0, 1]")
        self.facts, self.noise, self.drift, self.rng = facts, noise, drift, rng
        self.lines = self._build()
        self.drift_events = 0

    def _line(self, kind: Kind, emitter: Emitter, level: str = "INFO") -> LogLine:
        template = self.rng.choice(emitter.messages) if emitter.messages else f"{emitter.where.split('::')[-1]} called"
        return LogLine(kind=kind, level=level, logger=emitter.logger, where=emitter.where, text=_fill(template, self.rng))

    def _noisy(self, line: LogLine) -> list[LogLine]:
        out = []
        if self.rng.random() < self.noise:
            line = line.model_copy(update={"text": _corrupt(line.text, self.rng), "corrupted": True})
        out.append(line)
        if self.facts.others and self.rng.random() < self.noise:
            out.append(self._line("irrelevant", self.rng.choice(self.facts.others)))
        return out

    def _build(self) -> list[LogLine]:
        lines: list[LogLine] = []
        for emitter in self.facts.path:
            lines += self._noisy(self._line("trace", emitter))
        for error in self.facts.errors:
            where, moved = error.where, False
            if self.facts.neighbours and self.rng.random() < 0.7 * self.noise:
                where, moved = self.rng.choice(self.facts.neighbours), True
            logger = "svc." + where.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
            line = LogLine(kind="error", level="ERROR", logger=logger, where=where, text=f"{error.exc_type}: {error.message}", misattributed=moved)
            lines += self._noisy(line)
        return lines

    def tick(self) -> bool:
        """One step of the episode: with probability δ the runtime flutters. Returns whether it did."""
        if self.rng.random() >= self.drift:
            return False
        self.drift_events += 1
        movable = [i for i in range(len(self.lines) - 1) if self.lines[i].kind != "error" and self.lines[i + 1].kind != "error"]
        if movable and self.rng.random() < 0.5:  # order-dependent: two lines from concurrent work swap places
            i = self.rng.choice(movable)
            self.lines[i], self.lines[i + 1] = self.lines[i + 1], self.lines[i]
        else:  # timing-dependent: a latency line appears, or changes, where the path runs
            emitter = self.rng.choice(self.facts.path or self.facts.others)
            flutter = LogLine(kind="flutter", level="DEBUG", logger=emitter.logger, where=emitter.where,
                              text=f"{emitter.where.split('::')[-1]} took {self.rng.randint(1, 900)}ms")
            existing = [i for i, line in enumerate(self.lines) if line.kind == "flutter" and line.where == emitter.where]
            if existing:
                self.lines[existing[0]] = flutter
            else:
                self.lines.insert(self.rng.randrange(len(self.lines) + 1), flutter)
        return True

    def observe(self) -> list[str]:
        clock, out = 0, []
        for line in self.lines:
            clock += 3 + len(line.text) % 7  # a steady, deterministic clock: only drift moves lines
            out.append(line.render(clock))
        return out
