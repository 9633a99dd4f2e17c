import pytest

CONFIG = """\
[defaults]
timeout = 30s
bandwidth = 2MB/s

[mirror debian]
url = rsync://deb.example.org/debian
interval = 15m
offset = 2m

[mirror Alpine]
url = https://dl.example.org/alpine
interval = 1h
timeout = 5m
bandwidth = 20MB/s
retries = 0
"""


@pytest.fixture
def config_text():
    return CONFIG
