import pytest

from migrate import CycleError, Migration, MigrationError, MigrationGraph, UnknownMigration


def graph_of(spec):
    return MigrationGraph([Migration(version, f"m{version}", (), tuple(deps)) for version, deps in spec.items()])


def test_plan_in_version_order():
    graph = graph_of({3: [], 1: [], 2: [], 5: [], 4: []})
    assert graph.plan() == [1, 2, 3, 4, 5]


def test_dependencies_come_first():
    graph = graph_of({1: [], 2: [4], 3: [], 4: [], 5: [3]})
    assert graph.plan() == [1, 4, 2, 3, 5]


def test_plan_skips_applied_and_stops_at_target():
    graph = graph_of({1: [], 2: [1], 3: [], 4: [2], 5: []})
    assert graph.plan(applied=[1]) == [2, 3, 4, 5]
    assert graph.plan(applied=[1], target=4) == [2, 4]


def test_cycles_and_unknown_versions():
    with pytest.raises(CycleError):
        graph_of({1: [3], 2: [1], 3: [2]}).plan()
    with pytest.raises(UnknownMigration):
        graph_of({1: [], 2: [7]}).plan()
    with pytest.raises(UnknownMigration):
        graph_of({1: []}).plan(applied=[9])
    with pytest.raises(MigrationError):
        graph_of({1: []}).add(Migration(1, "again"))


def test_ancestors():
    graph = graph_of({1: [], 2: [1], 3: [2], 4: []})
    assert graph.ancestors(3) == {1, 2, 3}
    assert graph.ancestors(4) == {4}


def test_plan_with_timestamp_versions():
    graph = graph_of({20240105: [], 20240112: [], 20240120: [], 20240203: [], 20240210: []})
    assert graph.plan() == [20240105, 20240112, 20240120, 20240203, 20240210]


def test_plan_with_timestamp_versions_and_dependency():
    graph = graph_of({20240105: [], 20240112: [20240203], 20240120: [], 20240203: [], 20240210: [20240105]})
    assert graph.plan(applied=[20240105]) == [20240203, 20240112, 20240120, 20240210]
