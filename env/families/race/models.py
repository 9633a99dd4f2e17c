"""The race family's sequential models: what each domain's class does when its calls run one at a time.

    model = DOMAINS["accounts"]
    state = model.start(setup=(("deposit", (0, 50)),))        # a fresh object after the scenario's setup calls
    state, result = model.step(state, "transfer", (0, 1, 20))  # -> the next state and Result(value=None, error="")
    model.reads                                                 # the calls that read a final state (its accessors)

A model is the trusted side's reference (it never runs the agent's code): a state is a hashable value, a step a pure
function of a state, an operation and its arguments, so a search over the orders of the calls threads made can share
the states it reaches (``env.families.race.linearize``). A call that raises in the class is a ``Result`` with the
exception's class name in ``error`` (the domain's classes raise only built-in exceptions: their names are their
meaning, and nothing the agent defines can pose as one).

The domains (issue 49): accounts, inventory, rate limiter, connection pool, cache, id allocator, job queue, session
store; each registered once by its name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from env.registry import Registry

Value = int | bool | str | None | tuple["Value", ...]
State = tuple[Value, ...]
Args = tuple[Value, ...]


@dataclass(frozen=True)
class Result:
    """What one call gave: its return value, or the built-in exception it raised (its class name; "" when none)."""

    value: Value = None
    error: str = ""


Step = Callable[[State, Args], tuple[State, Result]]


class ModelError(ValueError):
    """A call the model does not define (an unknown operation, or arguments it does not take)."""


@dataclass(frozen=True, eq=False)  # hashed by identity: a verdict's judgment memoizes the starts of a model's scenarios
class Model:
    """A domain's class, one call at a time."""

    name: str
    initial: State
    operations: dict[str, Step] = field(repr=False)
    reads: tuple[tuple[str, Args], ...] = ()  # the accessor calls that show a whole final state
    describe: str = ""
    setup: tuple[tuple[str, Args], ...] = ()  # a start the scenarios race from (besides a fresh object)
    racing: tuple[tuple[str, Args], ...] = ()  # the calls scenarios draw from
    # two threads' calls raced as given (each a sweep), for calls that block until another's call lets them go: a
    # random draw of them could leave a correct object waiting for good
    scenarios: tuple[tuple[tuple[tuple[str, Args], ...], ...], ...] = ()

    def step(self, state: State, op: str, args: Args) -> tuple[State, Result]:
        if op not in self.operations:
            raise ModelError(f"the {self.name} model has no operation {op!r}; it has {', '.join(sorted(self.operations))}")
        try:
            return self.operations[op](state, args)
        except (TypeError, IndexError, ValueError, AssertionError) as exc:  # the arguments, not the state: a plan's mistake
            raise ModelError(f"{self.name}.{op}{args!r}: {exc}") from None

    def start(self, setup: tuple[tuple[str, Args], ...] = ()) -> State:
        state = self.initial
        for op, args in setup:
            state = self.step(state, op, args)[0]
        return state


def _ok(state: State, value: Value = None) -> tuple[State, Result]:
    return state, Result(value)


def _raise(state: State, error: str) -> tuple[State, Result]:
    return state, Result(None, error)


def _set(values: tuple[Value, ...], index: int, value: Value) -> tuple[Value, ...]:
    return values[:index] + (value,) + values[index + 1 :]


def _int(value: Value) -> int:
    if type(value) is not int:
        raise TypeError(f"{value!r} is not an int")
    return value


# -- accounts: balances, transfers that keep the total ------------------------------------------------------------------
# state: (balances,)


def _deposit(state: State, args: Args) -> tuple[State, Result]:
    (balances,), (account, amount) = state, args
    assert isinstance(balances, tuple)
    new = _int(balances[_int(account)]) + _int(amount)
    return _ok((_set(balances, _int(account), new),), new)


def _withdraw(state: State, args: Args) -> tuple[State, Result]:
    (balances,), (account, amount) = state, args
    assert isinstance(balances, tuple)
    held = _int(balances[_int(account)])
    if held < _int(amount):
        return _raise(state, "ValueError")
    return _ok((_set(balances, _int(account), held - _int(amount)),), held - _int(amount))


def _transfer(state: State, args: Args) -> tuple[State, Result]:
    (balances,), (source, target, amount) = state, args
    assert isinstance(balances, tuple)
    if _int(balances[_int(source)]) < _int(amount):
        return _raise(state, "ValueError")
    moved = _set(balances, _int(source), _int(balances[_int(source)]) - _int(amount))
    return _ok((_set(moved, _int(target), _int(moved[_int(target)]) + _int(amount)),))


def _balance(state: State, args: Args) -> tuple[State, Result]:
    (balances,), (account,) = state, args
    assert isinstance(balances, tuple)
    return _ok(state, balances[_int(account)])


def _total(state: State, args: Args) -> tuple[State, Result]:
    (balances,) = state
    assert isinstance(balances, tuple) and not args
    return _ok(state, sum(_int(b) for b in balances))


ACCOUNTS = Model(
    "accounts",
    ((0, 0, 0),),
    {"deposit": _deposit, "withdraw": _withdraw, "transfer": _transfer, "balance": _balance, "total": _total},
    (("balance", (0,)), ("balance", (1,)), ("balance", (2,))),
    "three accounts; deposit/withdraw return the new balance, withdraw and transfer raise ValueError on too little",
    (("deposit", (0, 50)), ("deposit", (1, 5))),
    (("deposit", (0, 10)), ("withdraw", (0, 30)), ("transfer", (0, 1, 20)), ("transfer", (1, 0, 5)), ("total", ())),
)


# -- inventory: reservations against stock ------------------------------------------------------------------------------
# state: (stock per item, reserved per item)


def _reserve(state: State, args: Args) -> tuple[State, Result]:
    (stock, reserved), (item, quantity) = state, args
    assert isinstance(stock, tuple) and isinstance(reserved, tuple)
    i, q = _int(item), _int(quantity)
    if _int(stock[i]) < q:
        return _ok(state, False)
    return _ok((_set(stock, i, _int(stock[i]) - q), _set(reserved, i, _int(reserved[i]) + q)), True)


def _restock(state: State, args: Args) -> tuple[State, Result]:
    (stock, reserved), (item, quantity) = state, args
    assert isinstance(stock, tuple)
    new = _int(stock[_int(item)]) + _int(quantity)
    return _ok((_set(stock, _int(item), new), reserved), new)


def _available(state: State, args: Args) -> tuple[State, Result]:
    (stock, _), (item,) = state, args
    assert isinstance(stock, tuple)
    return _ok(state, stock[_int(item)])


INVENTORY = Model(
    "inventory",
    ((0, 0), (0, 0)),
    {"reserve": _reserve, "restock": _restock, "available": _available},
    (("available", (0,)), ("available", (1,))),
    "two items; reserve returns whether the whole quantity was reserved (stock never below zero), restock the new stock",
    (("restock", (0, 1)), ("restock", (1, 2))),
    (("reserve", (0, 1)), ("reserve", (1, 2)), ("restock", (0, 1)), ("available", (0,))),
)


# -- rate limiter: a bucket of tokens -----------------------------------------------------------------------------------
# state: (tokens, granted)

CAPACITY = 3


def _try_acquire(state: State, args: Args) -> tuple[State, Result]:
    tokens, granted = (_int(v) for v in state)
    assert not args
    if tokens == 0:
        return _ok(state, False)
    return _ok((tokens - 1, granted + 1), True)


def _refill(state: State, args: Args) -> tuple[State, Result]:
    tokens, granted = (_int(v) for v in state)
    (count,) = args
    new = min(CAPACITY, tokens + _int(count))
    return _ok((new, granted), new)


def _tokens(state: State, args: Args) -> tuple[State, Result]:
    assert not args
    return _ok(state, state[0])


RATE_LIMITER = Model(
    "rate_limiter",
    (CAPACITY, 0),
    {"try_acquire": _try_acquire, "refill": _refill, "tokens": _tokens},
    (("tokens", ()),),
    f"a bucket of at most {CAPACITY} tokens; try_acquire takes one or returns False, refill returns the new count",
    (("try_acquire", ()), ("try_acquire", ())),
    (("try_acquire", ()), ("refill", (1,)), ("tokens", ())),
)


# -- connection pool: numbered connections handed out and taken back ---------------------------------------------------
# state: (free ids, lowest first; ids in use)

POOL_SIZE = 2


def _acquire(state: State, args: Args) -> tuple[State, Result]:
    free, used = state
    assert isinstance(free, tuple) and isinstance(used, tuple) and not args
    if not free:
        return _raise(state, "RuntimeError")
    conn = free[0]
    return _ok((free[1:], tuple(sorted((*used, conn), key=_int))), conn)


def _release(state: State, args: Args) -> tuple[State, Result]:
    free, used = state
    assert isinstance(free, tuple) and isinstance(used, tuple)
    (conn,) = args
    if conn not in used:
        return _raise(state, "ValueError")
    return _ok((tuple(sorted((*free, conn), key=_int)), tuple(c for c in used if c != conn)))


def _in_use(state: State, args: Args) -> tuple[State, Result]:
    assert not args and isinstance(state[1], tuple)
    return _ok(state, len(state[1]))


CONNECTION_POOL = Model(
    "connection_pool",
    (tuple(range(POOL_SIZE)), ()),
    {"acquire": _acquire, "release": _release, "in_use": _in_use},
    (("in_use", ()),),
    f"{POOL_SIZE} connections; acquire hands out the lowest free id or raises RuntimeError, release of one not in use raises ValueError",
    (("acquire", ()),),
    (("acquire", ()), ("release", (0,)), ("in_use", ())),
)


# -- cache: a value loaded once per key ---------------------------------------------------------------------------------
# state: (cached keys, sorted; loads made)


def _load(key: int) -> int:
    return key * 10 + 1  # the class's loader: deterministic, so a result says which key it was for


def _get(state: State, args: Args) -> tuple[State, Result]:
    keys, loads = state
    assert isinstance(keys, tuple)
    (key,) = args
    if key in keys:
        return _ok(state, _load(_int(key)))
    return _ok((tuple(sorted((*keys, _int(key)), key=repr)), _int(loads) + 1), _load(_int(key)))


def _invalidate(state: State, args: Args) -> tuple[State, Result]:
    keys, loads = state
    assert isinstance(keys, tuple)
    (key,) = args
    return _ok((tuple(k for k in keys if k != key), loads), key in keys)


def _loads(state: State, args: Args) -> tuple[State, Result]:
    assert not args
    return _ok(state, state[1])


CACHE = Model(
    "cache",
    ((), 0),
    {"get": _get, "invalidate": _invalidate, "loads": _loads},
    (("loads", ()),),
    "get loads a missing key once (key * 10 + 1) and counts the load; invalidate returns whether the key was cached",
    (("get", (1,)),),
    (("get", (2,)), ("get", (1,)), ("invalidate", (1,)), ("loads", ())),
)


# -- id allocator: unique, consecutive ids ------------------------------------------------------------------------------
# state: (next id,)


def _allocate(state: State, args: Args) -> tuple[State, Result]:
    assert not args
    return _ok((_int(state[0]) + 1,), state[0])


def _issued(state: State, args: Args) -> tuple[State, Result]:
    assert not args
    return _ok(state, state[0])


ID_ALLOCATOR = Model(
    "id_allocator",
    (0,),
    {"allocate": _allocate, "issued": _issued},
    (("issued", ()),),
    "allocate returns 0, 1, 2, ... each once; issued the number handed out",
    (("allocate", ()),),
    (("allocate", ()), ("issued", ())),
)


# -- job queue: first in, first out ------------------------------------------------------------------------------------
# state: (jobs,)


def _push(state: State, args: Args) -> tuple[State, Result]:
    (jobs,), (job,) = state, args
    assert isinstance(jobs, tuple)
    return _ok(((*jobs, job),), len(jobs) + 1)


def _pop(state: State, args: Args) -> tuple[State, Result]:
    (jobs,) = state
    assert isinstance(jobs, tuple) and not args
    if not jobs:
        return _raise(state, "IndexError")
    return _ok((jobs[1:],), jobs[0])


BLOCKS = Result(None, "<blocks>")  # a call that waits here: no observation has it, so no order places the call here


def _take(state: State, args: Args) -> tuple[State, Result]:
    """The oldest job, waiting for one when there is none."""
    (jobs,) = state
    assert isinstance(jobs, tuple) and not args
    if not jobs:
        return state, BLOCKS
    return _ok((jobs[1:],), jobs[0])


def _size(state: State, args: Args) -> tuple[State, Result]:
    (jobs,) = state
    assert isinstance(jobs, tuple) and not args
    return _ok(state, len(jobs))


JOB_QUEUE = Model(
    "job_queue",
    ((),),
    {"push": _push, "pop": _pop, "take": _take, "size": _size},
    (("size", ()),),
    "push returns the new length; pop returns the oldest job or raises IndexError when empty; take waits for one",
    (("push", ("a",)),),
    (("push", ("b",)), ("pop", ()), ("size", ())),
    # one waits for a job while the other puts two in and takes one between: it never waits for itself
    (((("take", ()),), (("push", ("a",)), ("pop", ()), ("push", ("b",)))),),
)


# -- session store: one session per user -------------------------------------------------------------------------------
# state: (users logged in, sorted; sessions ever opened)


def _login(state: State, args: Args) -> tuple[State, Result]:
    users, opened = state
    assert isinstance(users, tuple)
    (user,) = args
    if user in users:
        return _ok(state, False)
    return _ok((tuple(sorted((*users, user), key=repr)), _int(opened) + 1), True)


def _logout(state: State, args: Args) -> tuple[State, Result]:
    users, opened = state
    assert isinstance(users, tuple)
    (user,) = args
    if user not in users:
        return _raise(state, "KeyError")
    return _ok((tuple(u for u in users if u != user), opened))


def _active(state: State, args: Args) -> tuple[State, Result]:
    assert not args and isinstance(state[0], tuple)
    return _ok(state, len(state[0]))


SESSION_STORE = Model(
    "session_store",
    ((), 0),
    {"login": _login, "logout": _logout, "active": _active},
    (("active", ()),),
    "login opens a user's one session (False when open already), logout of a user with none raises KeyError",
    (("login", ("ann",)),),
    (("login", ("bob",)), ("login", ("ann",)), ("logout", ("ann",)), ("active", ())),
)


DOMAINS: Registry[Model] = Registry("race domain")
for _model in (ACCOUNTS, INVENTORY, RATE_LIMITER, CONNECTION_POOL, CACHE, ID_ALLOCATOR, JOB_QUEUE, SESSION_STORE):
    DOMAINS.add(_model.name, _model)
