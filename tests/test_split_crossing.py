"""What crosses the split besides plain data (issue 19, part 3): time zones, the tests' own objects and classes, values
of the standard library's types, project test mixins beside unittest.TestCase; and what a test's object must never
hand the project (a module, a function of the trusted process's, its private names)."""

from __future__ import annotations

import pytest

from env.project import load_repo_task
from env.sandbox.limits import Limits, MiB
from env.sandbox.runner import Sandbox
from env.verdict.repo_judge import run_tests
from tests import repo_fixture

LIBRARY = '''import collections
import datetime


class Fixed(datetime.tzinfo):
    """A project time zone: one hour east, named by the project."""

    def utcoffset(self, when):
        return datetime.timedelta(hours=1)

    def dst(self, when):
        return datetime.timedelta(0)

    def tzname(self, when):
        return "PRJ"


def zone():
    return Fixed()


def same_zone(moment):
    return moment.tzinfo


def offset_of(moment):
    return moment.utcoffset()


def describe(thing):
    return "%s has %d legs" % (thing.name, thing.legs())


def keep(thing):
    return thing


def peek(thing, name):
    return getattr(thing, name)


def total(counts):
    counts["missing"] += 1  # a defaultdict's factory runs here
    return type(counts).__name__, sum(counts.values())


def first_key(ordered):
    return isinstance(ordered, collections.OrderedDict), next(iter(ordered))


def ask_directly(thing, name):
    """What a hostile project can do: skip the proxy and send the trusted process its own request."""
    ask = type(thing).__getattr__.__globals__["_ask"]
    return ask(object.__getattribute__(thing, "_adbg_state"), object.__getattribute__(thing, "_adbg_number"), "getattr", (name,), {})


class Grammar:
    def __ror__(self, other):
        return "ror:" + other

    def __xor__(self, other):
        return "xor:%d" % other


def size(items):
    return len(items), sorted(type(i).__name__ for i in items)


class Box:
    def __init__(self, value):
        self.value = value


def twice(method):
    def wrapper(self, *args):
        return method(self, *args) * 2

    return wrapper


def arity_probe(action):
    """pyparsing's _trim_arity, in short: a TypeError raised by the call itself means "fewer arguments"."""
    try:
        return action("s", 0, 3)
    except TypeError as exc:
        if exc.__traceback__.tb_next is not None:
            raise
    return action(3)


def in_worker(function, *args):
    """Calls the test's function from a thread of its own (more_itertools.callback_iter does)."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return sorted(pool.map(function, args))


def register(cls):
    cls.registered = True
    return cls


def build(cls, *args):
    return cls(*args)


__custom__ = "the project's own dunder"


def _rot13x(name):
    """A codec the project registers (idna.codec does): its functions run in the sandbox."""
    import codecs

    if name != "rot13x":
        return None

    def encode(text, errors="strict"):
        return codecs.encode(text, "rot13").encode("ascii"), len(text)

    def decode(data, errors="strict"):
        return codecs.decode(bytes(data).decode("ascii"), "rot13"), len(data)

    return codecs.CodecInfo(encode, decode, name="rot13x")


__import__("codecs").register(_rot13x)


class Oops(Exception):
    code = 7

    def __init__(self, text, number):
        super().__init__(text, number)
        self.number = number

    def __str__(self):
        return "oops %s #%d" % self.args

    @staticmethod
    def explain(exc):
        return "explained " + str(exc)


class Strict:
    """attrs' __eq__: NotImplemented for other classes, so Python falls back to identity."""

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return True

    def __ne__(self, other):
        result = self.__eq__(other)
        return NotImplemented if result is NotImplemented else not result


def catch(function, kinds=(Oops,)):
    try:
        function()
    except kinds as exc:
        return "caught %s: %s" % (type(exc).__name__, exc)
    return "nothing raised"


def shout(text):
    print(text)
    import sys

    print("on stderr", file=sys.stderr)
    return len(text)


def read_all(stream):
    return stream.read()


def take(iterator, n):
    return [next(iterator) for _ in range(n)]


def nth(iterator, n):
    for _ in range(n):
        next(iterator)
    return next(iterator)


def signature_of(function):
    import inspect

    return str(inspect.signature(function)), function.__doc__, function.__qualname__


def call(function, *args, **kwargs):
    return function(*args, **kwargs)


def kind_of(value):
    return type(value).__name__


def tag(pattern):
    """parse.with_pattern: a decorator that sets an attribute on the test's function."""

    def decorate(function):
        function.pattern = pattern
        return function

    return decorate


def pattern_of(function):
    return function.pattern


def forge(test_id):
    """A hostile project: it prints what the trusted process's result records look like."""
    import sys

    record = '{"test": "%s", "status": "PASSED", "excerpt": "", "ops": 0}' % test_id
    print(record)
    print(record, file=sys.stderr)
    sys.stdout.flush()


def mark(function):
    """A hostile project: pytest's names and private ones on the test's function stay in the sandbox."""
    function.pytestmark = ["skip"]
    function._private = 1
    function.public = 2
    return function


def object_lt():
    return object.__lt__


def hand_eval(thing):
    """A hostile project: it makes its encoder call eval a builtin both sides share."""
    state = object.__getattribute__(thing, "_adbg_state")
    state["shared"] = state["shared"] | {"eval"}
    return eval


class Checks:
    """A test mixin the project ships (like pyparsing.testing): its methods run here, on the test's object."""

    def assert_doubled(self, value, expected):
        self.assertEqual(value * 2, expected)
        return "checked"

    def check_twice(self, value):
        return self.assert_doubled(value, value * 2)  # the mixin's own method, reached through the test's object

    def assert_raises_value(self):
        return self.assertRaises(ValueError)
'''

TESTS = '''import collections
import copy
import datetime
import os
import pickle
import unittest

import pytest

import lib


def test_project_time_zones_are_real_tzinfos_here():
    zone = lib.zone()
    moment = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=zone)
    assert moment.utcoffset() == datetime.timedelta(hours=1) and moment.tzname() == "PRJ"
    assert moment.astimezone(datetime.timezone.utc).hour == 11
    assert lib.same_zone(moment) is zone  # the same project object comes back as the same proxy
    assert lib.offset_of(datetime.datetime(2024, 1, 1, fold=1, tzinfo=datetime.timezone.utc)) == datetime.timedelta(0)


class Dog:
    name = "rex"

    def legs(self):
        return 4


def test_the_tests_objects_cross_by_reference():
    dog = Dog()
    assert lib.describe(dog) == "rex has 4 legs"
    assert lib.keep(dog) is dog


def test_values_of_the_standard_library_cross_as_copies():
    counts = collections.defaultdict(int, {"a": 2})
    assert lib.total(counts) == ("defaultdict", 3)
    assert lib.first_key(collections.OrderedDict([("z", 1), ("a", 2)])) == (True, "z")


def test_the_tests_classes_have_twins_in_the_sandbox():
    @lib.register
    class Point:
        def __init__(self, x):
            self.x = x

        def doubled(self):
            return self.x * 2

    assert Point.registered is True
    assert lib.build(Point, 21).doubled() == 42


class UsesTheProjectsMixin(lib.Checks, unittest.TestCase):
    def test_mixin_methods_run_on_this_test(self):
        assert self.assert_doubled(2, 4) == "checked"
        with self.assert_raises_value():
            raise ValueError("expected")

    def test_a_failing_mixin_check_fails(self):
        self.assert_doubled(2, 5)

    def test_the_mixins_methods_call_each_other_on_this_test(self):
        assert self.check_twice(21) == "checked"


def test_reflected_bitwise_operators_and_sets_of_objects_cross():
    assert "x" | lib.Grammar() == "ror:x" and lib.Grammar() ^ 2 == "xor:2"
    assert lib.size(frozenset({Dog(), lib.zone()})) == (2, ["Fixed", "TestObject"])


class Sub(lib.Box):
    def __init__(self, value):
        lib.Box.__init__(self, value + 1)  # the project's __init__, not the proxy's


class Doubler:
    @lib.twice  # a project function held by the test's class binds like a function
    def get(self):
        return 21


def test_explicit_base_methods_decorated_methods_and_pickles_of_project_objects():
    assert Sub(1).value == 2 and Doubler().get() == 42
    box = lib.Box(3)
    clone = pickle.loads(pickle.dumps(box))  # pickled and loaded by the project, in the sandbox
    assert clone.value == 3 and clone is not box and copy.copy(box).value == 3


def test_a_callers_arity_probe_sees_the_tests_functions_as_they_are():
    assert lib.arity_probe(lambda t: t * 2) == 6 and lib.arity_probe(lambda s, l, t: (s, l, t)) == ("s", 0, 3)


def test_functions_called_back_from_the_projects_threads_and_the_tests_threads():
    import concurrent.futures

    assert lib.in_worker(lambda n: lib.offset_of(datetime.datetime(2024, 1, 1, tzinfo=lib.zone())).seconds + n, 1, 2, 3) == [3601, 3602, 3603]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:  # the test's own threads calling the project at once
        assert sorted(pool.map(lambda n: lib.Box(n).value, range(20))) == list(range(20))


class Holder:
    helper = staticmethod(os.system)
    module = os
    _secret = "mine"


def test_a_module_on_a_test_object_is_out_of_reach():
    with pytest.raises(AttributeError, match="the project may not reach a module of the trusted process"):
        lib.peek(Holder(), "module")


def test_a_function_of_the_trusted_process_is_out_of_reach():
    with pytest.raises(AttributeError, match="the project may not reach system of the trusted process"):
        lib.peek(Holder(), "helper")


class Plain:
    pass


class Fiz(Exception):
    pass


def test_comparisons_with_the_tests_objects_end_and_copies_are_made_where_objects_live():
    assert lib.Strict() != Plain() and not (lib.Strict() == Plain())  # NotImplemented both ways: identity decides
    dog = Dog()
    clone = copy.deepcopy(lib.Box(dog))
    assert isinstance(clone.value, Dog) and clone.value is not dog  # the test's object deep-copied in the trusted process
    @lib.register
    class Point:
        def __init__(self, x):
            self.x = x

    again = pickle.loads(pickle.dumps(lib.build(Point, 2)))  # a class made for the test, pickled in the sandbox
    assert again.x == 2 and again is not None


def test_exceptions_cross_as_themselves():
    def raise_oops():
        raise lib.Oops("bad", 3)  # constructed in the sandbox: the project catches its own exception

    assert str(lib.Oops("x", 1)) == "oops x #1" and lib.Oops("x", 1).number == 1
    assert lib.catch(raise_oops) == "caught Oops: oops bad #3"
    assert lib.Oops.code == 7 and lib.Oops.explain(lib.Oops("y", 2)) == "explained oops y #2"

    def raise_fiz():
        raise Fiz("fizz")

    assert lib.catch(raise_fiz, (Fiz,)) == "caught Fiz: fizz"  # the test's class, raised there as its twin


def test_what_the_project_prints_reaches_the_tests_streams(capsys):
    assert lib.shout("hello") == 5
    assert capsys.readouterr() == ("hello\\n", "on stderr\\n")


def test_streams_views_signatures_and_builtins_cross():
    import io
    import operator
    import unittest.mock
    import weakref

    assert lib.read_all(io.StringIO("text")) == "text" and lib.read_all(io.BytesIO(b"raw")) == b"raw"
    assert lib.size({"a": 1}.keys()) == (1, ["str"]) and lib.size({"a": 1}.items()) == (1, ["tuple"])

    def documented(a, b=2, *rest, c, d=None, **more):
        """Its docstring."""
        return (a, b, rest, c, d, more)

    text, doc, qualname = lib.signature_of(documented)
    assert text == "(a, b=2, *rest, c, d=None, **more)" and doc == "Its docstring." and qualname.endswith("<locals>.documented")
    assert lib.call(documented, 1, c=3) == (1, 2, (), 3, None, {})
    assert lib.call(documented, 1, 5, 6, c=3, e=4) == (1, 5, (6,), 3, None, {"e": 4})
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'c'"):
        lib.call(documented, 1)
    assert lib.keep(documented) is documented

    @lib.tag("x+")  # the project sets an attribute on the test's function: the test sees it, and the other way round
    def convert(text):
        return text

    assert convert.pattern == "x+"
    convert.pattern = "y+"
    assert lib.pattern_of(convert) == "y+"
    marked = lib.mark(convert)
    assert marked is convert and convert.public == 2
    assert not hasattr(convert, "pytestmark") and not hasattr(convert, "_private")
    assert lib.kind_of(operator.mul) == "builtin_function_or_method"  # the sandbox's own operator.mul
    assert lib.keep(len) is len and lib.keep(int) is int and lib.object_lt() is object.__lt__ and lib.keep(...) is ...
    mock = unittest.mock.Mock(return_value=5)
    assert lib.call(mock, 1) == 5
    mock.assert_called_once_with(1)
    box = lib.Box(1)
    assert weakref.ref(box)() is box and vars(box) == {"value": 1} and "value" in dir(box)
    assert box.__class__.__name__ == "Box" and box.__class__.__qualname__ == "Box" and box.__class__ is lib.Box(2).__class__
    assert isinstance(box, lib.Box) and not isinstance(box, str) and isinstance(lib.Box, type) and type(box) is lib.Box
    assert lib.__custom__ == "the project's own dunder" and "Box" in dir(lib)
    assert lib.Box.__init__.__module__ == "lib" and lib.Box(1).__module__ == "lib"
    marker = object()
    assert lib.keep(marker) is marker  # a sentinel is itself when it comes back
    assert lib.size(memoryview(b"ab")) == (2, ["int", "int"])
    assert "abc".encode("rot13x") == b"nop" and b"nop".decode("rot13x") == "abc"  # the project's codec
    with pytest.raises(LookupError, match="unknown encoding: no-such-codec"):
        "abc".encode("no-such-codec")


def test_iterators_of_plain_data_are_copied_and_kept_in_step():
    import itertools

    numbers = iter([1, 2, 3, 4])
    assert lib.take(numbers, 2) == [1, 2] and next(numbers) == 3  # advanced as far as the project read
    assert lib.nth(itertools.permutations(range(60), 3), 20000) == next(itertools.islice(itertools.permutations(range(60), 3), 20000, None))
    generated = (n * n for n in range(5))  # not plain data: pulled item by item, a generator there too
    assert lib.take(generated, 2) == [0, 1] and next(generated) == 4 and lib.kind_of(generated) == "generator"


def test_dunders_of_a_test_object_are_out_of_reach():
    for name in ("__class__", "__dict__", "__init__"):
        with pytest.raises(AttributeError, match=f"the project may not reach the test's '{name}'"):
            lib.ask_directly(Holder(), name)
    with pytest.raises(AttributeError, match="the project may not reach a module of the trusted process"):
        lib.ask_directly(Holder(), "module")
    assert lib.peek(Holder(), "_secret") == "mine"  # the tests' own private names are theirs to share


def test_printed_records_forge_nothing():
    lib.forge("tests/test_crossing.py::test_printed_records_forge_nothing")
    assert False, "the project's output is text for the tests, never a result"


def test_a_test_that_moves_the_clock_does_not_time_the_run_out():
    import time

    real = time.monotonic
    time.monotonic = lambda: real() + 10**9  # what freezegun does to the clock a deadline would read
    try:
        assert lib.keep(5) == 5 and lib.Box(2).value == 2
    finally:
        time.monotonic = real


def test_the_sandbox_cannot_hand_the_test_a_builtin_outside_the_shared_ones():
    with pytest.raises(ValueError, match="the sandbox named a builtin it may not hand the test"):
        lib.hand_eval(Dog())
'''

PASSING = [
    "test_project_time_zones_are_real_tzinfos_here",
    "test_reflected_bitwise_operators_and_sets_of_objects_cross",
    "test_functions_called_back_from_the_projects_threads_and_the_tests_threads",
    "test_a_callers_arity_probe_sees_the_tests_functions_as_they_are",
    "test_explicit_base_methods_decorated_methods_and_pickles_of_project_objects",
    "test_the_tests_objects_cross_by_reference",
    "test_values_of_the_standard_library_cross_as_copies",
    "test_the_tests_classes_have_twins_in_the_sandbox",
    "UsesTheProjectsMixin::test_mixin_methods_run_on_this_test",
    "test_a_module_on_a_test_object_is_out_of_reach",
    "test_a_function_of_the_trusted_process_is_out_of_reach",
    "test_dunders_of_a_test_object_are_out_of_reach",
    "UsesTheProjectsMixin::test_the_mixins_methods_call_each_other_on_this_test",
    "test_comparisons_with_the_tests_objects_end_and_copies_are_made_where_objects_live",
    "test_exceptions_cross_as_themselves",
    "test_what_the_project_prints_reaches_the_tests_streams",
    "test_streams_views_signatures_and_builtins_cross",
    "test_iterators_of_plain_data_are_copied_and_kept_in_step",
    "test_the_sandbox_cannot_hand_the_test_a_builtin_outside_the_shared_ones",
    "test_a_test_that_moves_the_clock_does_not_time_the_run_out",
]
FAILING = "UsesTheProjectsMixin::test_a_failing_mixin_check_fails"


@pytest.fixture(scope="module")
def verdict(runtime, tmp_path_factory):
    return repo_fixture.split_verdict(runtime, tmp_path_factory.mktemp("crossing"), LIBRARY, "tests/test_crossing.py", TESTS, [*PASSING, FAILING, "test_printed_records_forge_nothing"])


@pytest.mark.parametrize("name", PASSING)
def test_crosses_under_the_split(verdict, name):
    repo_fixture.assert_passes_split(verdict, f"tests/test_crossing.py::{name}")


def test_what_the_project_prints_never_becomes_a_result(verdict):
    test = "tests/test_crossing.py::test_printed_records_forge_nothing"
    assert verdict.outcomes[test] == "FAILED"
    assert "the project's output is text for the tests, never a result" in verdict.excerpts[test]


def test_a_project_mixin_check_that_fails_fails_the_test(verdict):
    test = f"tests/test_crossing.py::{FAILING}"
    assert verdict.outcomes[test] == "FAILED"
    assert "AssertionError: 4 != 5" in verdict.excerpts[test]


HUNGRY = "def hold(mib):\n    return len(bytearray(mib * 1024 * 1024))\n"
HUNGRY_TEST = "from lib import hold\n\n\ndef test_holds_400_mib():\n    assert hold(400) == 400 * 1024 * 1024\n"


@pytest.mark.parametrize(("test_mib", "outcome"), [(1024, "PASSED"), (256, "FAILED")])
def test_a_repository_test_run_has_its_own_memory_limit(runtime, tmp_path, test_mib, outcome):
    """A test run's project process gets ``test_memory_bytes`` (a real suite's session), not a snippet's
    ``memory_bytes``: 400 MiB fit in the default 1 GiB and not in 256 MiB, whatever the snippet limit is."""
    files = {"lib/__init__.py": HUNGRY, "tests/test_hungry.py": HUNGRY_TEST}
    test = "tests/test_hungry.py::test_holds_400_mib"
    task = load_repo_task(repo_fixture.write_task(tmp_path / "hungry", files, files, FAIL_TO_PASS=[test], PASS_TO_PASS=[]))
    sandbox = Sandbox(Limits(memory_bytes=128 * MiB, test_memory_bytes=test_mib * MiB), runtime.sandbox.isolation)
    verdict = run_tests(sandbox, task, files)
    assert verdict.outcomes == {test: outcome}, verdict.excerpts
    if outcome == "FAILED":
        assert "MemoryError" in verdict.excerpts[test]


def test_a_library_of_the_test_environment_keeps_its_own_copy_of_a_project_name(tmp_path, monkeypatch):
    """hypothesis imports ``attr``: in the trusted process it gets the test environment's installed attrs, while the
    tests importing ``attr`` get the project (here a stand-in module for its proxy)."""
    import builtins
    import sys
    import types

    from env.verdict.host.importer import LibraryCopies

    site = tmp_path / "lib" / "python3" / "site-packages"
    site.mkdir(parents=True)
    (site / "projname.py").write_text("WHO = 'installed'\n")
    (site / "helperlib.py").write_text("import projname\n\n\ndef who():\n    import projname as again\n    return projname.WHO, again.WHO\n")
    monkeypatch.syspath_prepend(str(site))
    proxy = types.ModuleType("projname")
    proxy.WHO = "project"
    monkeypatch.setitem(sys.modules, "projname", proxy)
    monkeypatch.setattr(builtins, "__import__", builtins.__import__)  # restored after the test
    finder = types.SimpleNamespace(names={"projname"}, enabled=True)
    LibraryCopies(finder, str(tmp_path / "tests") + "/").install()
    try:
        import helperlib

        assert helperlib.who() == ("installed", "installed")  # at import and inside its functions
        import projname

        assert projname is proxy and projname.WHO == "project" and finder.enabled
    finally:
        sys.modules.pop("helperlib", None)


def test_what_the_project_prints_is_also_the_runs_own_output(verdict):
    """The tests see it (capsys above), and so does the agent's run_tests, as before."""
    assert "hello\n" in verdict.output and "on stderr\n" in verdict.output


SUPER_LIBRARY = '''class Version:
    def __init__(self, major, minor=0):
        self.major, self.minor = major, minor

    @classmethod
    def parse(cls, text):
        major, minor = text.split(".")
        return cls(int(major), int(minor))

    def bump(self):
        return type(self)(self.major + 1)

    def describe(self):
        return "v%d.%d" % (self.major, self.minor)

    def __str__(self):
        return self.describe()
'''
SUPER_TESTS = '''from lib import Version


class Mine(Version):
    def __init__(self, major, minor=0, label="x"):
        super().__init__(major, minor)
        self.label = label

    def describe(self):
        return super().describe() + "-" + self.label

    @classmethod
    def parse(cls, text):  # semver's own test: a "v" prefix, then the project's parse, given this class
        return super().parse(text[1:])


class Plain(Mine):  # no super() of its own: Mine's methods still find theirs
    pass


class Deeper(Plain):
    def describe(self):
        return "[" + super().describe() + "]"


def test_super_in_a_subclass():
    m = Mine(1, 2, "y")
    assert m.describe() == "v1.2-y" and str(m) == "v1.2-y"  # str(): the project's __str__ calls the test's describe
    assert m.bump().describe() == "v2.0-x" and m.__class__.__name__ == "Mine"
    assert Mine.parse("v5.6").describe() == "v5.6-x"


def test_super_through_levels():
    assert Plain(3).describe() == "v3.0-x"
    assert Deeper(4, 1, "z").describe() == "[v4.1-z]"
'''


def test_zero_argument_super_in_a_tests_subclass_of_a_project_class(runtime, tmp_path):
    """semver's test_replace_from_subclass: super() in a test's subclass reaches the project class's methods, through
    the sandbox's own super(), at every level of the test's subclasses."""
    files = {"lib/__init__.py": SUPER_LIBRARY, "tests/test_v.py": SUPER_TESTS}
    ids = ["tests/test_v.py::test_super_in_a_subclass", "tests/test_v.py::test_super_through_levels"]
    verdict = run_tests(runtime.sandbox, load_repo_task(repo_fixture.write_task(tmp_path / "t", files, files, FAIL_TO_PASS=ids, PASS_TO_PASS=[])), files)
    assert verdict.outcomes == dict.fromkeys(ids, "PASSED"), verdict.excerpts or verdict.error
    assert all(verdict.trust(t) == "split" for t in ids)
