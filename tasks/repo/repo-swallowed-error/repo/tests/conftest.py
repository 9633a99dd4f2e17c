import pytest

from svcconf.fields import BoolField, ChoiceField, DurationField, IntField, ListField, StrField
from svcconf.schema import Schema


@pytest.fixture
def schema():
    return Schema(
        StrField("database_url", help="where the data lives"),
        IntField("workers", default=4, minimum=1, maximum=64, help="worker processes"),
        BoolField("debug", default=False),
        ChoiceField("log_level", ["debug", "info", "warning", "error"], default="info"),
        DurationField("request_timeout", default="30s"),
        ListField("allowed_hosts", default=["localhost"]),
    )
