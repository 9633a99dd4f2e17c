from syncplan import Mirror, load_config, plan_transfer
from syncplan.report import overview


def test_plan_for_mirror_built_in_code():
    m = Mirror(name="m", url="rsync://m", interval=3600.0, timeout=30.0, bandwidth=1_000_000.0, retries=2)
    plan = plan_transfer(m, size=100_000_000)
    assert plan.chunks == 12
    assert plan.chunks_per_attempt == 3
    assert plan.attempts == 4
    assert plan.fits is False
    assert plan.seconds == 100.0


def test_small_transfer_fits_in_one_attempt():
    m = Mirror(name="m", url="rsync://m", interval=3600.0, timeout=60.0, bandwidth=4_000_000.0, retries=0)
    plan = plan_transfer(m, size=20_000_000)
    assert (plan.chunks, plan.attempts, plan.fits) == (3, 1, True)
    assert plan.summary() == "m: 3 chunks in 1 attempt(s), fits"


def test_plan_for_configured_mirrors(config_text):
    config = load_config(config_text)
    debian = plan_transfer(config.mirrors["debian"], size=300_000_000)
    assert (debian.chunks, debian.chunks_per_attempt, debian.attempts, debian.fits) == (36, 7, 6, False)
    alpine = plan_transfer(config.mirrors["alpine"], size=1_000_000_000)
    assert (alpine.chunks, alpine.chunks_per_attempt, alpine.attempts, alpine.fits) == (120, 715, 1, True)


def test_empty_transfer_and_too_slow_link():
    m = Mirror(name="slow", url="rsync://s", interval=3600.0, timeout=1.0, bandwidth=1000.0)
    assert plan_transfer(m, 0).attempts == 0
    starved = plan_transfer(m, 10_000_000)
    assert starved.attempts is None
    assert starved.fits is False
    assert "cannot finish" in starved.summary()


def test_overview_report(config_text):
    text = overview(load_config(config_text), sizes={"debian": 300_000_000})
    assert text.splitlines() == [
        "alpine: every 1h, timeout 5m, 20 MB/s, 0 retries; 24 runs/day",
        "debian: every 15m, timeout 30s, 2 MB/s, 2 retries; 96 runs/day; debian: 36 chunks in 6 attempt(s), does not fit",
        "120 runs in horizon, at most 2 at once",
    ]
