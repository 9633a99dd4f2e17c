import pytest

from svcconf.fields import BoolField, ChoiceField, IntField, ListField, StrField


def test_int_field_parses_and_checks_range():
    field = IntField("workers", minimum=1, maximum=64)
    assert field.parse(" 8 ") == 8
    with pytest.raises(ValueError) as excinfo:
        field.parse("0")
    assert str(excinfo.value) == "must be at least 1, got 0"
    with pytest.raises(ValueError):
        field.parse("eight")


def test_int_field_allows_underscores():
    assert IntField("max_body").parse("1_000_000") == 1000000


@pytest.mark.parametrize("raw, expected", [("yes", True), ("ON", True), ("0", False), ("false", False)])
def test_bool_field(raw, expected):
    assert BoolField("debug").parse(raw) is expected


def test_choice_field_is_case_insensitive():
    field = ChoiceField("log_level", ["debug", "info", "warning"])
    assert field.parse("INFO") == "info"
    with pytest.raises(ValueError):
        field.parse("verbose")


def test_list_field_parses_items():
    field = ListField("ports", item=IntField("port", minimum=1))
    assert field.parse("80, 443,,8080") == [80, 443, 8080]
    with pytest.raises(ValueError) as excinfo:
        field.parse("80,http")
    assert str(excinfo.value) == "item 2: 'http' is not a whole number"


def test_required_and_defaults():
    assert StrField("database_url").required
    assert not IntField("workers", default=4).required
    assert IntField("workers", default="6").default == 6
