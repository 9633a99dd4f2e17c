import pytest

from wirefmt import (
    IncompleteMessage,
    ProtocolError,
    Request,
    Response,
    parse_request,
    parse_response,
    serialize_request,
    serialize_response,
)


def test_round_trip_with_content_length():
    raw = serialize_response(Response.text_response("Ünïcødé ✓", status=404))
    parsed = parse_response(raw)
    assert parsed.status == 404
    assert parsed.reason == "Not Found"
    assert parsed.text == "Ünïcødé ✓"


def test_round_trip_chunked_ascii():
    raw = serialize_response(Response.text_response("x" * 50), chunk_size=16)
    assert parse_response(raw).text == "x" * 50


def test_round_trip_chunked_latin1():
    raw = serialize_response(Response.text_response("Déjà vu à Noël", charset="latin-1"), chunk_size=3)
    assert parse_response(raw).text == "Déjà vu à Noël"


@pytest.mark.parametrize("chunk_size", [1, 4, 64], ids=["tiny", "small", "large"])
def test_round_trip_chunked_utf8(chunk_size):
    raw = serialize_response(Response.text_response("Ünïcødé ✓ Grüße"), chunk_size=chunk_size)
    assert parse_response(raw).text == "Ünïcødé ✓ Grüße"


def test_round_trip_chunked_json():
    raw = serialize_response(Response.json_response({"greeting": "こんにちは"}), chunk_size=8)
    assert parse_response(raw).json() == {"greeting": "こんにちは"}


def test_parse_request_with_body():
    request = Request("POST", "/form", {"Content-Type": "application/x-www-form-urlencoded"}, b"a=1&b=%C3%A9")
    parsed = parse_request(serialize_request(request))
    assert parsed.method == "POST"
    assert parsed.target == "/form"
    assert parsed.form() == {"a": "1", "b": "é"}


def test_parse_chunked_with_extensions_and_trailers():
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3;name=x\r\nabc\r\n2\r\nde\r\n0\r\nX-Checksum: 1\r\n\r\n"
    )
    parsed = parse_response(raw)
    assert parsed.body == b"abcde"
    assert "Transfer-Encoding" not in parsed.headers


@pytest.mark.parametrize(
    "raw, error",
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", IncompleteMessage),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nlonger", ProtocolError),
        (b"HTTP/1.0 200 OK\r\n\r\n", ProtocolError),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabc", IncompleteMessage),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", ProtocolError),
    ],
    ids=["short-body", "extra-bytes", "http10", "cut-chunk", "bad-size"],
)
def test_malformed_responses(raw, error):
    with pytest.raises(error):
        parse_response(raw)
