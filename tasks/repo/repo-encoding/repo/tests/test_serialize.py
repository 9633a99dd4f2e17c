from wirefmt import Request, Response, serialize_request, serialize_response


def test_content_length_counts_bytes():
    raw = serialize_response(Response.text_response("café"))
    assert raw == (
        b"HTTP/1.1 200 OK\r\n"
        b"Content-Type: text/plain; charset=utf-8\r\n"
        b"Content-Length: 5\r\n"
        b"\r\n"
        b"caf\xc3\xa9"
    )


def test_chunked_ascii_text():
    raw = serialize_response(Response.text_response("hello world"), chunk_size=5)
    assert raw.endswith(b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n5\r\n worl\r\n1\r\nd\r\n0\r\n\r\n")
    assert b"Content-Length" not in raw


def test_chunked_binary_body():
    response = Response(200, {"Content-Type": "application/octet-stream"}, bytes(range(250, 256)) + b"\x00")
    raw = serialize_response(response, chunk_size=4)
    assert raw.endswith(b"\r\n\r\n4\r\n\xfa\xfb\xfc\xfd\r\n3\r\n\xfe\xff\x00\r\n0\r\n\r\n")


def test_chunked_utf8_text_framing():
    raw = serialize_response(Response.text_response("naïve café"), chunk_size=4)
    body = raw.split(b"\r\n\r\n", 1)[1]
    assert body == b"5\r\nna\xc3\xafv\r\n4\r\ne ca\r\n3\r\nf\xc3\xa9\r\n0\r\n\r\n"


def test_get_request_has_no_content_length():
    raw = serialize_request(Request("get", "/search?q=x", {"Host": "example.test"}))
    assert raw == b"GET /search?q=x HTTP/1.1\r\nHost: example.test\r\n\r\n"


def test_header_values_are_latin1_on_the_wire():
    response = Response(200, {"X-Name": "Müller"}, b"")
    assert b"X-Name: M\xfcller\r\n" in serialize_response(response)
