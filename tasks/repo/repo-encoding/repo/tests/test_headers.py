import pytest

from wirefmt.errors import ProtocolError
from wirefmt.headers import Headers, split_header_value


def test_lookup_is_case_insensitive():
    headers = Headers({"Content-Type": "text/plain"})
    assert headers.get("content-type") == "text/plain"
    assert "CONTENT-TYPE" in headers
    assert "Accept" not in headers


def test_repeated_fields_keep_order():
    headers = Headers([("Set-Cookie", "a=1"), ("Vary", "Accept"), ("set-cookie", "b=2")])
    assert headers.get_all("Set-Cookie") == ["a=1", "b=2"]
    assert headers.get("set-cookie") == "a=1, b=2"
    assert list(headers) == ["Set-Cookie", "Vary", "set-cookie"]


def test_set_replaces_all_values():
    headers = Headers([("X-Tag", "one"), ("x-tag", "two")])
    headers.set("X-Tag", "three")
    assert headers.items() == [("X-Tag", "three")]
    assert len(headers) == 1


@pytest.mark.parametrize("name, value", [("Bad Name", "x"), ("X-Ok", "line\r\nbreak"), ("", "x")],
                         ids=["space-in-name", "crlf-in-value", "empty-name"])
def test_invalid_fields_are_rejected(name, value):
    with pytest.raises(ProtocolError):
        Headers().add(name, value)


def test_split_header_value():
    assert split_header_value('Text/HTML; Charset="UTF-8"; q=1') == ("text/html", {"charset": "UTF-8", "q": "1"})
    assert split_header_value("application/json") == ("application/json", {})
