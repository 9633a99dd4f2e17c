import pytest

from wirefmt import Request, Response


def test_text_response_headers_and_body():
    response = Response.text_response("Grüße", content_type="text/plain")
    assert response.status == 200
    assert response.reason == "OK"
    assert response.headers.get("Content-Type") == "text/plain; charset=utf-8"
    assert response.body == "Grüße".encode("utf-8")
    assert response.text == "Grüße"


def test_text_response_in_latin1():
    response = Response.text_response("Grüße", charset="latin-1")
    assert response.body == b"Gr\xfc\xdfe"
    assert response.charset == "iso8859-1"


def test_json_response():
    response = Response.json_response({"city": "Zürich", "n": 3}, status=201)
    assert response.reason == "Created"
    assert response.content_type == "application/json"
    assert response.json() == {"city": "Zürich", "n": 3}


def test_iter_body_on_bytes():
    response = Response(200, {"Content-Type": "application/octet-stream"}, b"abcdefg")
    assert list(response.iter_body(3)) == [b"abc", b"def", b"g"]


def test_iter_body_on_text_keeps_characters_whole():
    response = Response.text_response("añb")
    assert list(response.iter_body(2)) == ["añ", "b"]


def test_request_form():
    body = "name=J%C3%BCrgen&city=K%C3%B6ln&empty=".encode("ascii")
    request = Request("post", "/people", {"Content-Type": "application/x-www-form-urlencoded"}, body)
    assert request.method == "POST"
    assert request.form() == {"name": "Jürgen", "city": "Köln", "empty": ""}


def test_form_requires_form_content_type():
    request = Request("POST", "/", {"Content-Type": "application/json"}, b"{}")
    with pytest.raises(ValueError):
        request.form()
