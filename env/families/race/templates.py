"""The race family's classes as code: each domain's correct class, and per bug pattern the methods that plant it.

    domain = CLASSES["cache"]
    domain.gold                      # {method: its correct source} ($names filled by the generator)
    domain.bugs["double_checked_init"]   # {method: its buggy source}: the pattern planted in those methods

Sources are ``string.Template`` texts: ``$cls`` the class, ``$lock`` its lock attribute, ``$a`` ``$b`` ``$c`` its state
attributes, ``$v`` a local; the generator draws them per task. Method names are the model's operations
(env/families/race/models.py): the verdict calls them by name. A class is its ``header`` (imports, helpers) then
``__init__`` then the methods in ``order``.

The patterns (issue 49): lost update on compound state, check-then-act, get-then-set on a dict, double-checked lazy
init, an invariant across two fields, mutation during iteration, publish before init, lock-order deadlock, atomicity
across two calls, and a missed signal (a condition waited on once, not in a loop).
"""

from __future__ import annotations

from dataclasses import dataclass, field

PATTERNS = (
    "lost_update",
    "check_then_act",
    "get_then_set",
    "double_checked_init",
    "two_field_invariant",
    "mutation_during_iteration",
    "publish_before_init",
    "lock_order_deadlock",
    "atomicity_across_calls",
    "missed_signal",
)


@dataclass(frozen=True)
class DomainClass:
    domain: str
    init: str
    gold: dict[str, str]
    bugs: dict[str, dict[str, str]]
    header: str = "import threading\n"
    order: tuple[str, ...] = ()
    # a pattern whose class differs beyond its methods (two locks): its own __init__ and correct methods
    designs: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    # a pattern's wrong fix that looks right, beside the lock made per call the generator derives
    half_fixes: dict[str, dict[str, str]] = field(default_factory=dict)


ACCOUNTS_GOLD = {
    "deposit": """    def deposit(self, account, amount):
        with self.$lock:
            self.$a[account] += amount
            return self.$a[account]
""",
    "withdraw": """    def withdraw(self, account, amount):
        with self.$lock:
            if self.$a[account] < amount:
                raise ValueError("insufficient funds")
            self.$a[account] -= amount
            return self.$a[account]
""",
    "transfer": """    def transfer(self, source, target, amount):
        with self.$lock:
            if self.$a[source] < amount:
                raise ValueError("insufficient funds")
            self.$a[source] -= amount
            self.$a[target] += amount
""",
    "balance": """    def balance(self, account):
        with self.$lock:
            return self.$a[account]
""",
    "total": """    def total(self):
        with self.$lock:
            return sum(self.$a)
""",
}


ACCOUNTS = DomainClass(
    "accounts",
    init="""    def __init__(self):
        self.$lock = threading.Lock()
        self.$a = [0, 0, 0]
""",
    gold=ACCOUNTS_GOLD,
    bugs={
        "lost_update": {
            "deposit": """    def deposit(self, account, amount):
        $v = self.$a[account] + amount
        self.$a[account] = $v
        return $v
""",
        },
        "check_then_act": {
            "withdraw": """    def withdraw(self, account, amount):
        if self.$a[account] < amount:
            raise ValueError("insufficient funds")
        with self.$lock:
            self.$a[account] -= amount
            return self.$a[account]
""",
        },
        "two_field_invariant": {
            "transfer": """    def transfer(self, source, target, amount):
        self.withdraw(source, amount)
        self.deposit(target, amount)
""",
        },
        "lock_order_deadlock": {
            "total": """    def total(self):
        with self.$b:
            with self.$lock:
                return sum(self.$a)
""",
        },
    },
    order=("deposit", "withdraw", "transfer", "balance", "total"),
    designs={
        # two locks (the balances', and the transfer journal's): every method taking both takes the balances' first
        "lock_order_deadlock": (
            """    def __init__(self):
        self.$lock = threading.Lock()
        self.$b = threading.Lock()
        self.$a = [0, 0, 0]
        self.$c = []
""",
            {
                **ACCOUNTS_GOLD,  # the methods taking one lock, as in the one-lock class
                "transfer": """    def transfer(self, source, target, amount):
        with self.$lock:
            with self.$b:
                if self.$a[source] < amount:
                    raise ValueError("insufficient funds")
                self.$a[source] -= amount
                self.$a[target] += amount
                self.$c.append((source, target, amount))
""",
                "total": """    def total(self):
        with self.$lock:
            with self.$b:
                return sum(self.$a)
""",
            },
        ),
    },
)


INVENTORY = DomainClass(
    "inventory",
    init="""    def __init__(self):
        self.$lock = threading.Lock()
        self.$a = [0, 0]
        self.$b = [0, 0]
""",
    gold={
        "reserve": """    def reserve(self, item, quantity):
        with self.$lock:
            if self.$a[item] < quantity:
                return False
            self.$a[item] -= quantity
            self.$b[item] += quantity
            return True
""",
        "restock": """    def restock(self, item, quantity):
        with self.$lock:
            self.$a[item] += quantity
            return self.$a[item]
""",
        "available": """    def available(self, item):
        with self.$lock:
            return self.$a[item]
""",
    },
    bugs={
        "check_then_act": {
            "reserve": """    def reserve(self, item, quantity):
        if self.$a[item] < quantity:
            return False
        with self.$lock:
            self.$a[item] -= quantity
            self.$b[item] += quantity
        return True
""",
        },
        "lost_update": {
            "restock": """    def restock(self, item, quantity):
        $v = self.$a[item]
        self.$a[item] = $v + quantity
        return $v + quantity
""",
        },
        "atomicity_across_calls": {
            "reserve": """    def reserve(self, item, quantity):
        if self.available(item) < quantity:
            return False
        self._take(item, quantity)
        return True

    def _take(self, item, quantity):
        with self.$lock:
            self.$a[item] -= quantity
            self.$b[item] += quantity
""",
        },
    },
    order=("reserve", "restock", "available"),
)


RATE_LIMITER = DomainClass(
    "rate_limiter",
    header="import threading\n\nCAPACITY = 3\n",
    init="""    def __init__(self):
        self.$lock = threading.Lock()
        self.$a = CAPACITY
        self.$b = 0
""",
    gold={
        "try_acquire": """    def try_acquire(self):
        with self.$lock:
            if self.$a == 0:
                return False
            self.$a -= 1
            self.$b += 1
            return True
""",
        "refill": """    def refill(self, count):
        with self.$lock:
            self.$a = min(CAPACITY, self.$a + count)
            return self.$a
""",
        "tokens": """    def tokens(self):
        with self.$lock:
            return self.$a
""",
    },
    bugs={
        "atomicity_across_calls": {
            "try_acquire": """    def try_acquire(self):
        if self.tokens() == 0:
            return False
        with self.$lock:
            self.$a -= 1
            self.$b += 1
        return True
""",
        },
        "lost_update": {
            "refill": """    def refill(self, count):
        $v = min(CAPACITY, self.$a + count)
        self.$a = $v
        return $v
""",
        },
    },
    order=("try_acquire", "refill", "tokens"),
)


CONNECTION_POOL = DomainClass(
    "connection_pool",
    init="""    def __init__(self):
        self.$lock = threading.Lock()
        self.$a = [0, 1]
        self.$b = {}
""",
    gold={
        "acquire": """    def acquire(self):
        with self.$lock:
            if not self.$a:
                raise RuntimeError("no free connection")
            $v = min(self.$a)
            self.$a.remove($v)
            self.$b[$v] = True
            return $v
""",
        "release": """    def release(self, conn):
        with self.$lock:
            if not self.$b.get(conn):
                raise ValueError(f"connection {conn} is not in use")
            del self.$b[conn]
            self.$a.append(conn)
""",
        "in_use": """    def in_use(self):
        with self.$lock:
            return len(self.$b)
""",
    },
    bugs={
        "check_then_act": {
            "acquire": """    def acquire(self):
        if not self.$a:
            raise RuntimeError("no free connection")
        with self.$lock:
            $v = min(self.$a)
            self.$a.remove($v)
            self.$b[$v] = True
            return $v
""",
        },
        "get_then_set": {
            "release": """    def release(self, conn):
        if not self.$b.get(conn):
            raise ValueError(f"connection {conn} is not in use")
        with self.$lock:
            self.$b.pop(conn, None)
            self.$a.append(conn)
""",
        },
    },
    order=("acquire", "release", "in_use"),
)


CACHE = DomainClass(
    "cache",
    header='''import threading


def load(key):
    """The slow source the cache saves calls to."""
    return key * 10 + 1
''',
    init="""    def __init__(self):
        self.$lock = threading.Lock()
        self.$a = {}
        self.$b = 0
""",
    gold={
        "get": """    def get(self, key):
        with self.$lock:
            if key not in self.$a:
                self.$a[key] = load(key)
                self.$b += 1
            return self.$a[key]
""",
        "invalidate": """    def invalidate(self, key):
        with self.$lock:
            return self.$a.pop(key, None) is not None
""",
        "loads": """    def loads(self):
        with self.$lock:
            return self.$b
""",
    },
    bugs={
        "double_checked_init": {
            "get": """    def get(self, key):
        if key not in self.$a:
            with self.$lock:
                self.$a[key] = load(key)
                self.$b += 1
        return self.$a[key]
""",
        },
        "get_then_set": {
            "get": """    def get(self, key):
        $v = self.$a.get(key)
        if $v is None:
            $v = load(key)
            with self.$lock:
                self.$a[key] = $v
                self.$b += 1
        return $v
""",
        },
    },
    order=("get", "invalidate", "loads"),
)


ID_ALLOCATOR = DomainClass(
    "id_allocator",
    init="""    def __init__(self):
        self.$lock = threading.Lock()
        self.$a = 0
""",
    gold={
        "allocate": """    def allocate(self):
        with self.$lock:
            $v = self.$a
            self.$a = $v + 1
            return $v
""",
        "issued": """    def issued(self):
        with self.$lock:
            return self.$a
""",
    },
    bugs={
        "lost_update": {
            "allocate": """    def allocate(self):
        $v = self.$a
        self.$a = $v + 1
        return $v
""",
        },
        "atomicity_across_calls": {
            "allocate": """    def allocate(self):
        $v = self.issued()
        with self.$lock:
            self.$a = $v + 1
        return $v
""",
        },
    },
    order=("allocate", "issued"),
)


JOB_QUEUE = DomainClass(
    "job_queue",
    header="import threading\nfrom collections import deque\n",
    init="""    def __init__(self):
        self.$lock = threading.Lock()
        self.$b = threading.Condition(self.$lock)
        self.$a = deque()
""",
    gold={
        "push": """    def push(self, job):
        $v = {"job": job}
        with self.$b:
            self.$a.append($v)
            self.$b.notify()
            return len(self.$a)
""",
        "pop": """    def pop(self):
        with self.$lock:
            if not self.$a:
                raise IndexError("no job waiting")
            return self.$a.popleft()["job"]
""",
        "take": """    def take(self):
        with self.$b:
            while not self.$a:
                self.$b.wait()
            return self.$a.popleft()["job"]
""",
        "size": """    def size(self):
        with self.$lock:
            return len(self.$a)
""",
    },
    bugs={
        "publish_before_init": {
            "push": """    def push(self, job):
        $v = {}
        with self.$b:
            self.$a.append($v)
            self.$b.notify()
            $c = len(self.$a)
        $v["job"] = job
        return $c
""",
            "pop": """    def pop(self):
        with self.$lock:
            if not self.$a:
                raise IndexError("no job waiting")
            return self.$a.popleft().get("job")
""",
        },
        "missed_signal": {
            "take": """    def take(self):
        with self.$b:
            if not self.$a:
                self.$b.wait()
            return self.$a.popleft()["job"]
""",
        },
    },
    order=("push", "pop", "take", "size"),
    half_fixes={
        # every waiter woken, but each still takes a job without looking again
        "missed_signal": {
            "push": """    def push(self, job):
        $v = {"job": job}
        with self.$b:
            self.$a.append($v)
            self.$b.notify_all()
            return len(self.$a)
""",
        },
    },
)


SESSION_STORE = DomainClass(
    "session_store",
    init="""    def __init__(self):
        self.$lock = threading.Lock()
        self.$a = {}
        self.$b = 0
""",
    gold={
        "login": """    def login(self, user):
        with self.$lock:
            if user in self.$a:
                return False
            self.$b += 1
            self.$a[user] = self.$b
            return True
""",
        "logout": """    def logout(self, user):
        with self.$lock:
            del self.$a[user]
""",
        "active": """    def active(self):
        with self.$lock:
            return sum(1 for user in self.$a if self.$a[user])
""",
    },
    bugs={
        "get_then_set": {
            "login": """    def login(self, user):
        if user in self.$a:
            return False
        with self.$lock:
            self.$b += 1
            self.$a[user] = self.$b
        return True
""",
        },
        "mutation_during_iteration": {
            "active": """    def active(self):
        return sum(1 for user in self.$a if self.$a[user])
""",
        },
    },
    order=("login", "logout", "active"),
)


CLASSES: dict[str, DomainClass] = {
    c.domain: c for c in (ACCOUNTS, INVENTORY, RATE_LIMITER, CONNECTION_POOL, CACHE, ID_ALLOCATOR, JOB_QUEUE, SESSION_STORE)
}
