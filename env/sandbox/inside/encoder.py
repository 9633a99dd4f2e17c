"""Values of a classic run: plain data crosses as JSON; anything else stays here behind a numbered handle. Also the
exception reply every mode shares."""

from _json import encode_basestring_ascii as quote  # once: an import in each encoder cost a tenth of a small reply

MAX_DEPTH = 32
MAX_ITEMS = 100_000


class Encoder:
    def __init__(self, handles):
        self.handles = handles
        self.items = 0
        self.quote = quote

    def tick(self, depth):
        self.items += 1
        if depth > MAX_DEPTH or self.items > MAX_ITEMS:
            raise ValueError("value too large or too deeply nested to return")

    def scalar(self, value, kind):
        """JSON for None, bool, int, float and str; None for anything else."""
        if value is None:
            return "null"
        if kind is bool:
            return "true" if value else "false"
        if kind is int:
            return int.__repr__(value)
        if kind is float:
            if value != value:
                return "NaN"
            if value in (float("inf"), float("-inf")):
                return "Infinity" if value > 0 else "-Infinity"
            return float.__repr__(value)
        if kind is str:
            return self.quote(value)
        return None

    def encode(self, value, depth=0):
        self.tick(depth)
        kind = type(value)
        text = self.scalar(value, kind)
        if text is not None:
            return text
        if kind is list or kind is tuple:
            return "[" + ",".join(self.encode(v, depth + 1) for v in list.__iter__(list(value))) + "]"
        if kind is dict and all(type(k) is str for k in dict.keys(value)):
            pairs = ",".join(
                "[" + self.quote(k) + "," + self.encode(v, depth + 1) + "]" for k, v in dict.items(value)
            )
            return '{"d":[' + pairs + "]}"
        handle = len(self.handles) + 1
        self.handles[handle] = value
        return '{"h":' + str(handle) + ',"t":' + self.quote(kind.__name__[:100]) + "}"


def decode(value, handles):
    kind = type(value)
    if kind is list:
        return [decode(v, handles) for v in value]
    if kind is dict:
        if "$h" in value:
            return handles[value["$h"]]
        return {k: decode(v, handles) for k, v in value.items()}
    return value


def exception_reply(rid, exc, filename):
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    lines = traceback.format_list(frames[-8:])
    detail = "".join(lines) + "".join(traceback.format_exception_only(type(exc), exc))
    quote = __import__("_json").encode_basestring_ascii
    return '{"id":%d,"exc":%s,"msg":%s,"tb":%s}' % (
        rid,
        quote(type(exc).__name__[:100]),
        quote(safe_str(exc)[:2000]),
        quote(detail[-4000:]),
    )


def safe_str(exc):
    try:
        return str(exc)
    except BaseException:
        return "<unprintable exception>"
