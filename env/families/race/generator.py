"""Race-family tasks from a pattern, a domain and a seed: the same three give the same task.

    task = generate("check_then_act", "connection_pool", seed=7)
    task.buggy, task.gold            # the module as shipped, and its fix
    task.alternatives                # other correct fixes (another lock style): each must pass
    task.half_fixes                  # fixes that look right and are not (a lock per call): each must fail
    COMBINATIONS                     # every (pattern, domain) a class plants

The seed picks the names (the class, its lock and state attributes, a local): the seed-th of the combination's namings
in a fixed shuffled order, so tasks of one combination differ in their text, never in their bug. Sources are ``string.Template`` texts of env/families/race/templates.py.
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass
from string import Template

from env.families.race.models import DOMAINS, Model
from env.families.race.templates import CLASSES, PATTERNS, DomainClass

CLASS_NAMES = {
    "accounts": ("Bank", "Ledger", "AccountBook", "Treasury", "Accounts"),
    "inventory": ("Inventory", "Stockroom", "Warehouse", "StockLedger", "Depot"),
    "rate_limiter": ("RateLimiter", "TokenBucket", "Throttle", "Quota", "Limiter"),
    "connection_pool": ("ConnectionPool", "Pool", "LinkPool", "SocketPool", "ChannelPool"),
    "cache": ("Cache", "LoadingCache", "Memo", "LookupCache", "ValueCache"),
    "id_allocator": ("IdAllocator", "TicketCounter", "Sequence", "SerialNumbers", "IdSource"),
    "job_queue": ("JobQueue", "WorkQueue", "Inbox", "TaskQueue", "Backlog"),
    "session_store": ("SessionStore", "Sessions", "LoginTable", "SessionTable", "Presence"),
}
STATE_NAMES = {
    "accounts": (("_balances", "_funds", "_amounts"), ("_journal_lock", "_audit_lock", "_log_lock"), ("_journal", "_moves", "_log")),
    "inventory": (("_stock", "_on_hand", "_units"), ("_reserved", "_held", "_booked"), ("_x",)),
    "rate_limiter": (("_tokens", "_left", "_budget"), ("_granted", "_served", "_taken"), ("_x",)),
    "connection_pool": (("_free", "_idle", "_spare"), ("_used", "_busy", "_lent"), ("_x",)),
    "cache": (("_values", "_entries", "_store"), ("_loads", "_misses", "_fetches"), ("_x",)),
    "id_allocator": (("_next", "_counter", "_last"), ("_x",), ("_y",)),
    "job_queue": (("_jobs", "_pending", "_waiting"), ("_ready", "_not_empty", "_arrived"), ("length", "count", "size_now")),
    "session_store": (("_sessions", "_users", "_open"), ("_opened", "_logins", "_serial"), ("_x",)),
}
LOCK_NAMES = ("_lock", "_mutex", "_guard", "_state_lock")
LOCALS = ("value", "current", "result", "found")


@dataclass(frozen=True)
class RaceTask:
    pattern: str
    domain: str
    seed: int
    cls: str
    module: str
    buggy: str
    gold: str
    alternatives: tuple[str, ...]
    half_fixes: tuple[str, ...]
    methods: tuple[str, ...]  # where the bug is planted

    @property
    def id(self) -> str:
        return f"race-{self.pattern.replace('_', '-')}-{self.domain.replace('_', '-')}-{self.seed}"

    @property
    def model(self) -> Model:
        return DOMAINS[self.domain]


COMBINATIONS: tuple[tuple[str, str], ...] = tuple(
    (pattern, domain) for pattern in PATTERNS for domain, klass in CLASSES.items() if pattern in klass.bugs
)


class GeneratorError(ValueError):
    pass


def _module(klass: DomainClass, cls: str, init: str, methods: dict[str, str]) -> str:
    body = [init] + [methods[name] for name in klass.order]
    return f"{klass.header}\n\nclass {cls}:\n" + "\n".join(body)


def generate(pattern: str, domain: str, seed: int, key: str = "") -> RaceTask:
    """The task; ``key`` (the text a salt makes of the combination, ``ProceduralSalt.seed_text``: "" for the public
    tasks) orders the namings, so a salted server's seed names another text than the public generator's."""
    if (pattern, domain) not in COMBINATIONS:
        planted = ", ".join(d for p, d in COMBINATIONS if p == pattern) or "none"
        raise GeneratorError(f"no {domain} class plants {pattern!r} (domains that do: {planted})")
    klass = CLASSES[domain]
    init, gold_methods = klass.designs.get(pattern, (klass.init, klass.gold))
    bug = klass.bugs[pattern]
    names = _names(pattern, domain, seed, _module(klass, "$cls", init, {**gold_methods, **bug}), key)

    def fill(text: str) -> str:
        return Template(text).substitute(names)

    gold = fill(_module(klass, names["cls"], init, gold_methods))
    buggy = fill(_module(klass, names["cls"], init, {**gold_methods, **bug}))
    alternatives = (_rlock(gold),)
    half_fixes = tuple(fill(h) for h in _half_fixes(klass, names["cls"], init, gold_methods, bug))
    module = re.sub(r"(?<!^)(?=[A-Z])", "_", names["cls"]).lower()
    return RaceTask(pattern, domain, seed, names["cls"], module, buggy, gold, alternatives, half_fixes, tuple(bug))


def _names(pattern: str, domain: str, seed: int, text: str, key: str = "") -> dict[str, str]:
    """The seed-th distinct naming of ``text`` (its ``$`` names), in an order drawn from the combination: tasks of
    one combination never share their text while names remain (SPACE)."""
    choices = {"cls": CLASS_NAMES[domain], "lock": LOCK_NAMES, "v": LOCALS, **dict(zip("abc", STATE_NAMES[domain], strict=True))}
    placed = set(re.findall(r"\$(\w+)", text))
    used = sorted(k for k in choices if k in placed)
    combos = list(itertools.product(*(choices[k] for k in used)))
    random.Random(key or f"race:{pattern}:{domain}").shuffle(combos)
    if seed < 0 or seed >= len(combos):
        raise GeneratorError(f"{pattern} x {domain} has {len(combos)} namings: seeds 0 to {len(combos) - 1}")
    unused = {k: choices[k][0] for k in choices if k not in used}
    return {**unused, **dict(zip(used, combos[seed], strict=True))}


def _rlock(source: str) -> str:
    """The gold fix with re-entrant locks: as correct."""
    return source.replace("threading.Lock()", "threading.RLock()")


def _half_fixes(klass: DomainClass, cls: str, init: str, gold: dict[str, str], bug: dict[str, str]) -> list[str]:
    """Fixes that look right and are not: each fixed method of the bug taking a lock made for the call, and the
    domain's own for the pattern."""
    fixes = []
    per_call = {name: gold[name].replace("with self.$lock:", "with threading.Lock():") for name in bug if name in gold}
    if any(per_call[name] != gold[name] for name in per_call):
        fixes.append(_module(klass, cls, init, {**gold, **bug, **per_call}))
    for pattern, methods in klass.half_fixes.items():
        if klass.bugs.get(pattern) == bug:
            fixes.append(_module(klass, cls, init, {**gold, **bug, **methods}))
    return fixes
