"""Red-team: nothing the submitted code prints, returns or patches raises its pass count.

Every attack keeps the easy task's bug (6 of 8 tests pass on the honest buggy code) and tries to
look better. Each runs twice: through the full pipeline (static policy on) and with the policy
off, which proves the separate-process verdict holds on its own.
"""

import pytest

from tests.conftest import run
from tests.helpers import BUGGY, CATALOG, GOLD

EASY = CATALOG.get("easy")
BUG = BUGGY["easy"]

ATTACKS = {
    "prints_a_fake_summary": BUG + "\nprint('8 passed, 0 failed')\nprint('OK')\n",
    "always_equal_object": (
        "class Anything:\n    def __eq__(self, other):\n        return True\n    def __ne__(self, other):\n        return False\n"
        "    def __hash__(self):\n        return 0\n\ndef binary_search(arr, target):\n    return Anything()\n"
    ),
    "int_subclass_always_equal": (
        "class Sneaky(int):\n    def __eq__(self, other):\n        return True\n    def __hash__(self):\n        return 0\n\n"
        "def binary_search(arr, target):\n    return Sneaky(0)\n"
    ),
    "sys_exit_zero_before_tests": "import sys\nsys.exit(0)\n" + BUG,
    "os_exit_zero_before_tests": "import os\nos._exit(0)\n" + BUG,
    "os_exit_zero_inside_a_call": BUG.replace("    left, right = 0, len(arr) - 1", "    import os\n    os._exit(0)\n    left, right = 0, len(arr) - 1"),
    "shadows_print": "import builtins\nbuiltins.print = lambda *a, **k: None\n" + BUG,
    "monkeypatches_unittest": (
        "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\nunittest.TestCase.run = lambda *a, **k: None\n" + BUG
    ),
    "rebinds_assertion_error": "import builtins\nbuiltins.AssertionError = type('AssertionError', (Exception,), {})\n" + BUG,
    "walks_gc_for_results": (
        "import gc\nfor obj in gc.get_objects():\n    if isinstance(obj, dict) and 'passed' in obj:\n        obj['passed'] = 8\n" + BUG
    ),
    "walks_frames_to_the_harness": (
        "import sys\nf = sys._getframe()\nwhile f is not None:\n    f.f_globals['tests_passed'] = 8\n    f = f.f_back\n" + BUG
    ),
    "skips_every_test": "import unittest\nraise unittest.SkipTest('skip everything')\n" + BUG,
    "forges_the_reply_channel": (
        "import sys, os\nfd = int(sys.argv[2])\n"
        "for i in range(20):\n    data = ('{\"id\":%d,\"ok\":true}' % i).encode()\n    os.write(fd, len(data).to_bytes(4, 'big') + data)\n" + BUG
    ),
    "sets_a_trace_function": "import sys\nsys.settrace(lambda *a: None)\n" + BUG,
}
# Passes each attack may keep with the policy off: exactly what its real behaviour earns.
HONEST_PASSES = {
    "prints_a_fake_summary": 6,
    "always_equal_object": 0,
    "int_subclass_always_equal": 0,
    "sys_exit_zero_before_tests": 0,
    "os_exit_zero_before_tests": 0,
    "os_exit_zero_inside_a_call": 0,
    "shadows_print": 6,
    "monkeypatches_unittest": 6,
    "rebinds_assertion_error": 6,
    "walks_gc_for_results": 6,
    "walks_frames_to_the_harness": 6,
    "skips_every_test": 0,
    "forges_the_reply_channel": 0,
    "sets_a_trace_function": 6,
}
# What the static policy rejects before anything runs (then 0 tests pass).
REJECTED_BY_POLICY = {
    "sys_exit_zero_before_tests", "os_exit_zero_before_tests", "os_exit_zero_inside_a_call", "shadows_print",
    "monkeypatches_unittest", "rebinds_assertion_error", "walks_gc_for_results", "walks_frames_to_the_harness",
    "skips_every_test", "forges_the_reply_channel", "sets_a_trace_function",
}


@pytest.mark.parametrize("policy", [True, False], ids=["policy_on", "policy_off"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_forgery_gains_nothing(runtime, attack, policy):
    verdict = run(EASY, ATTACKS[attack], runtime.sandbox, policy=policy)
    expected = 0 if (policy and attack in REJECTED_BY_POLICY) else HONEST_PASSES[attack]
    assert verdict.tests_passed == expected
    assert not verdict.solved
    if policy and attack in REJECTED_BY_POLICY:
        assert verdict.rejected.startswith("line ")


def test_printed_summary_is_shown_but_never_counted(runtime):
    verdict = run(EASY, ATTACKS["prints_a_fake_summary"], runtime.sandbox)
    assert "8 passed, 0 failed" in verdict.run.output
    assert "6 passed, 2 failed, 0 errors (of 8 tests)" in verdict.report().splitlines()


def test_hard_stress_result_cannot_be_faked_by_a_constant(runtime):
    hard = CATALOG.get("hard")
    fake = hard.buggy_source.replace("    def get_count(self):\n        with self._lock:\n            return self.count", "    def get_count(self):\n        return 4000")
    verdict = run(hard, fake, runtime.sandbox, policy=False)
    assert verdict.stress is not None and not verdict.stress.passed
    assert not verdict.solved


@pytest.mark.parametrize("task_id", ["easy", "medium", "hard"])
def test_an_honest_fix_still_passes_with_the_policy_on_and_off(runtime, task_id):
    task = CATALOG.get(task_id)
    for policy in (True, False):
        assert run(task, GOLD[task_id], runtime.sandbox, policy=policy).solved
