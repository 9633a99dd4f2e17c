"""Sequential tests for ConnectionCounter. `sol` is your module; each call runs in the sandbox.

Every submission is also run under a concurrency check, which passes only when three checks agree:
- a controlled scheduler interleaves two or three threads calling increment, decrement and reset on one
  shared counter, from counts and after numbers of calls drawn over a wide range; every interleaving must give
  the results of some order of the calls (return values, ValueErrors, the final count and peak);
- a review of the source: on every path of every method, the counter's state is read and written only while a
  lock that all threads share is held, and each update happens under one acquisition of it (any lock style:
  `with`, acquire/try/finally, Lock, RLock, Condition, Semaphore(1), decorators, context managers, properties);
- real threads hammering one counter.
"""

from env.families.classic.checks import raises


def test_starts_at_zero(sol):
    assert sol.ConnectionCounter().get_count() == 0


def test_increment_returns_new_count(sol):
    counter = sol.ConnectionCounter()
    assert counter.increment() == 1
    assert counter.increment() == 2


def test_decrement_after_increment(sol):
    counter = sol.ConnectionCounter()
    counter.increment()
    counter.increment()
    assert counter.decrement() == 1
    assert counter.get_count() == 1


def test_many_increments(sol):
    counter = sol.ConnectionCounter()
    for _ in range(25):
        counter.increment()
    assert counter.get_count() == 25


def test_decrement_at_zero_raises(sol):
    counter = sol.ConnectionCounter()
    with raises("ValueError"):
        counter.decrement()
    assert counter.get_count() == 0


def test_peak_tracks_maximum(sol):
    counter = sol.ConnectionCounter()
    for _ in range(3):
        counter.increment()
    counter.decrement()
    counter.decrement()
    assert counter.get_peak() == 3
    assert counter.get_count() == 1


def test_reset_clears_count(sol):
    counter = sol.ConnectionCounter()
    counter.increment()
    counter.reset()
    assert counter.get_count() == 0


def test_counters_are_independent(sol):
    first, second = sol.ConnectionCounter(), sol.ConnectionCounter()
    first.increment()
    assert second.get_count() == 0
