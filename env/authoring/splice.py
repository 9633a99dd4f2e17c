"""Text edits spliced into a Python file at its AST nodes' positions, for the mutation operators.

    s = Splicer(source)
    start, end = s.span(node)                       # byte offsets (col_offset counts UTF-8 bytes)
    Edit(start, end, "<=", "`<` became `<=`")       # one contiguous replacement: a mutant is exactly one

The rest of the file keeps its formatting, so the gold patch (the reverse edit) is as small as the bug.
"""

from __future__ import annotations

import ast
import bisect
import io
import tokenize
from typing import NamedTuple


class Edit(NamedTuple):
    start: int  # byte offsets in the original file
    end: int
    text: str
    description: str
    # The lines whose covering tests screen the edit instead of its own, for an edit no test executes: a default in
    # the signature runs at import, an `else:` line never; the function's first statement runs on every call.
    reach: tuple[int, ...] = ()


OFF_BY_ONE = "an integer moved by one"  # a description starting so adds off_by_one to the operator's mechanisms


class Splicer:
    """Byte offsets of AST positions (col_offset counts UTF-8 bytes), and edits spliced there."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.data = source.encode("utf-8")
        # Lines as the parser counts them: bytes split only at \n, \r\n and \r (str.splitlines also splits at a
        # form feed or U+2028, which would shift every position after one).
        self.lines = self.data.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def at(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.at(node.lineno, node.col_offset), self.at(node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.at(node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def node_text(self, node: ast.AST) -> str:
        return self.text(*self.span(node))

    def replace(self, start: int, end: int, text: str) -> str:
        return (self.data[:start] + text.encode("utf-8") + self.data[end:]).decode("utf-8")

    def line_start(self, line: int) -> int:
        return self.starts[line - 1]

    def line_end(self, line: int) -> int:
        """The offset just past a line's end of line (the file's end for its last line)."""
        return self.starts[line] if line < len(self.starts) else len(self.data)

    def indent(self, statement: ast.stmt) -> str:
        return self.lines[statement.lineno - 1][: statement.col_offset].decode("utf-8")

    def rest_is_blank(self, line: int, col: int) -> bool:
        """Whether nothing but spaces or a comment follows byte ``col`` of ``line``."""
        return not self.lines[line - 1][col:].decode("utf-8", "replace").split("#")[0].strip()

    def line_block(self, statement: ast.stmt) -> tuple[int, int] | None:
        """The byte span of whole lines a statement occupies alone, or None if it shares a line."""
        if self.lines[statement.lineno - 1][: statement.col_offset].strip():
            return None
        last = statement.end_lineno or statement.lineno
        if not self.rest_is_blank(last, statement.end_col_offset or 0):
            return None
        return self.line_start(statement.lineno), self.line_end(last)


def plain_string(text: str) -> bool:
    """Whether ``text`` is one plain string literal on one line: no prefix, no implicit concatenation, no triple quotes."""
    if "\n" in text or text[:1] not in ("'", '"') or text.startswith(("'''", '"""')):
        return False
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in (tokenize.NEWLINE, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError):
        return False
    return len(tokens) == 1 and tokens[0].type == tokenize.STRING


def string_literal(value: str, like: str) -> str:
    """``value`` as a literal quoted as ``like`` is (a plain literal), so the edit changes only the characters."""
    literal = repr(value)
    if like[0] == '"' and literal[0] == "'" and '"' not in value and "'" not in value:
        literal = '"' + literal[1:-1] + '"'
    return literal
