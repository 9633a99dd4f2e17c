"""Request and response objects."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http import HTTPStatus
from urllib.parse import parse_qsl

from wirefmt.charset import charset_of, decode_text, with_charset
from wirefmt.headers import Headers, split_header_value


class Message:
    """Headers plus a body kept as bytes, or as text for streamed text bodies."""

    def __init__(self, headers: Headers | dict[str, str] | None = None, body: bytes = b""):
        self.headers = headers.copy() if isinstance(headers, Headers) else Headers(headers)
        self._body = body
        self._text: str | None = None

    @property
    def body(self) -> bytes:
        if self._text is not None:
            return self._text.encode(self.charset)
        return self._body

    @property
    def content_type(self) -> str:
        return split_header_value(self.headers.get("Content-Type", ""))[0]

    @property
    def charset(self) -> str:
        return charset_of(self.headers.get("Content-Type"))

    @property
    def text(self) -> str:
        if self._text is not None:
            return self._text
        return decode_text(self._body, self.charset)

    def json(self):
        return json.loads(self.text)

    def iter_body(self, chunk_size: int) -> Iterator[str | bytes]:
        """The body in pieces of at most ``chunk_size`` units.

        Text bodies are cut between characters (never inside a multi-byte
        sequence) and handed out as ``str``; other bodies as ``bytes``.
        """
        if chunk_size <= 0:
            raise ValueError("chunk_size must be positive")
        source: str | bytes = self._text if self._text is not None else self._body
        for offset in range(0, len(source), chunk_size):
            yield source[offset:offset + chunk_size]


class Response(Message):
    def __init__(self, status: int = 200, headers=None, body: bytes = b"", reason: str | None = None):
        super().__init__(headers, body)
        self.status = status
        if reason is None:
            try:
                reason = HTTPStatus(status).phrase
            except ValueError:
                reason = ""
        self.reason = reason

    @classmethod
    def text_response(cls, text: str, status: int = 200, content_type: str = "text/plain",
                      charset: str = "utf-8") -> Response:
        response = cls(status, {"Content-Type": with_charset(content_type, charset)})
        response._text = text
        return response

    @classmethod
    def json_response(cls, value, status: int = 200) -> Response:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return cls.text_response(text, status, content_type="application/json")

    def __repr__(self) -> str:
        return f"<Response {self.status} {self.reason}>"


class Request(Message):
    def __init__(self, method: str, target: str, headers=None, body: bytes = b""):
        super().__init__(headers, body)
        self.method = method.upper()
        self.target = target

    def form(self) -> dict[str, str]:
        """Fields of an ``application/x-www-form-urlencoded`` body."""
        if self.content_type != "application/x-www-form-urlencoded":
            raise ValueError(f"not a form body: {self.content_type or 'no content type'}")
        return dict(parse_qsl(self.text, keep_blank_values=True, encoding=self.charset))

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.target}>"
