import pytest

from syncplan import ConfigError, load_config


def test_mirrors_and_inherited_defaults(config_text):
    config = load_config(config_text)
    assert config.names() == ["alpine", "debian"]
    debian = config.mirrors["debian"]
    assert debian.url == "rsync://deb.example.org/debian"
    assert debian.bandwidth == 2_000_000.0
    assert debian.retries == 2
    alpine = config.mirrors["alpine"]
    assert alpine.bandwidth == 20_000_000.0
    assert alpine.retries == 0


def test_durations_are_seconds(config_text):
    config = load_config(config_text)
    debian = config.mirrors["debian"]
    assert (debian.interval, debian.timeout, debian.offset) == (900, 30, 120)
    alpine = config.mirrors["alpine"]
    assert (alpine.interval, alpine.timeout, alpine.offset) == (3600, 300, 0)


@pytest.mark.parametrize(
    "text, section",
    [
        ("[mirror a]\ninterval = 1h\n", "mirror a"),
        ("[mirror a]\nurl = x\nspeed = 1MB/s\n", "mirror a"),
        ("[defaults]\ncolour = red\n[mirror a]\nurl = x\n", "defaults"),
        ("[mirror a]\nurl = x\ninterval = soon\n", "mirror a"),
        ("[mirrors]\nurl = x\n", "mirrors"),
    ],
    ids=["missing-url", "unknown-key", "unknown-default", "bad-duration", "unknown-section"],
)
def test_invalid_configs(text, section):
    with pytest.raises(ConfigError) as excinfo:
        load_config(text)
    assert excinfo.value.section == section


def test_empty_config_rejected():
    with pytest.raises(ConfigError):
        load_config("[defaults]\ntimeout = 1m\n")
