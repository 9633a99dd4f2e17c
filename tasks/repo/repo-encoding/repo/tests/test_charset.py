import codecs

from wirefmt.charset import charset_of, decode_text, normalize_charset, with_charset


def test_normalize_charset():
    assert normalize_charset("UTF8") == "utf-8"
    assert normalize_charset("Latin-1") == "iso8859-1"
    assert normalize_charset("no-such-codec") == "utf-8"
    assert normalize_charset(None, default="ascii") == "ascii"


def test_charset_of_content_type():
    assert charset_of("text/plain; charset=ISO-8859-1") == "iso8859-1"
    assert charset_of("text/plain") == "utf-8"
    assert charset_of(None) == "utf-8"


def test_with_charset():
    assert with_charset("text/html", "UTF8") == "text/html; charset=utf-8"


def test_decode_drops_utf8_bom():
    assert decode_text(codecs.BOM_UTF8 + "süß".encode("utf-8"), "utf-8") == "süß"
    assert decode_text("süß".encode("latin-1"), "latin-1") == "süß"
