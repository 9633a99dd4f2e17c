from syncplan import Mirror, Run, build_schedule, load_config, max_concurrency
from syncplan.schedule import runs_per_day


def mirror(name, interval, timeout=30.0, offset=0.0):
    return Mirror(name=name, url=f"rsync://{name}", interval=interval, timeout=timeout, bandwidth=1e6, offset=offset)


def test_schedule_for_mirrors_built_in_code():
    runs = build_schedule([mirror("b", 1800.0, offset=60.0), mirror("a", 1200.0)], horizon=3600)
    assert [(r.at, r.mirror) for r in runs] == [
        (0.0, "a"),
        (60.0, "b"),
        (1200.0, "a"),
        (1860.0, "b"),
        (2400.0, "a"),
    ]
    assert runs[1] == Run(60.0, "b", 90.0)


def test_max_concurrency_counts_overlaps():
    runs = build_schedule(
        [mirror("a", 600.0, timeout=400.0), mirror("b", 600.0, timeout=100.0, offset=300.0)],
        horizon=1200,
    )
    assert max_concurrency(runs) == 2
    assert max_concurrency(build_schedule([mirror("c", 600.0, timeout=600.0)], 3600)) == 1


def test_runs_per_day():
    assert runs_per_day(mirror("a", 3600.0)) == 24
    assert runs_per_day(mirror("b", 7200.0, offset=3600.0)) == 12


def test_schedule_from_config(config_text):
    config = load_config(config_text)
    runs = build_schedule(list(config.mirrors.values()), horizon=3600)
    assert [(r.at, r.mirror) for r in runs] == [
        (0, "alpine"),
        (120, "debian"),
        (1020, "debian"),
        (1920, "debian"),
        (2820, "debian"),
    ]
    assert runs[1].deadline == 150
    assert runs_per_day(config.mirrors["debian"]) == 96
