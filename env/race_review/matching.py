"""``match`` statements: each case's pattern read against the subject, on every path (the review cannot tell which
case runs, so every case may, and none: the code after the statement).

A pattern reads what it looks at: a value pattern compares (``__eq__`` of the module's classes runs), a sequence
pattern reads the length and the items, a mapping pattern the keys it names, a class pattern the attributes it names (``Point(x=0)``). Capture patterns bind what they
matched. Positional parts of a class pattern name attributes through ``__match_args__``: the review follows them only
for the builtin types that match themselves (``int(n)``).
"""

from __future__ import annotations

import ast

from env.race_review.dunders import COMPARE
from env.race_review.engine import EngineBase, Frame
from env.race_review.findings import CannotFollow
from env.race_review.values import Value
from env.race_review.world import Flow, World

# builtin classes whose one positional sub-pattern matches the subject itself (``case int(n):``)
SELF_MATCHING = frozenset({"bool", "bytearray", "bytes", "dict", "float", "frozenset", "int", "list", "set", "str", "tuple"})
Matched = tuple[list[World], list[World]]  # the paths where the pattern may match (names bound), and where it may not


class MatchingMixin(EngineBase):
    def stmt_Match(self, stmt: ast.Match, world: World, frame: Frame) -> Flow:
        flow = Flow()
        pending = list(self.eval(stmt.subject, world, frame))
        for case in stmt.cases:
            matched: list[World] = []
            rest: list[tuple[World, Value]] = []
            for current, subject in pending:
                yes, no = self.match_pattern(case.pattern, subject, current, frame)
                rest += [(w, subject) for w in no]
                if case.guard is None:
                    matched += yes
                    continue
                for w in yes:
                    passed, failed = self.split(case.guard, w, frame)
                    matched += passed
                    rest += [(f, subject) for f in failed]
            self.conditional += 1
            try:
                body = self.exec_block(case.body, matched, frame) if matched else Flow()
            finally:
                self.conditional -= 1
            flow.absorb(body)
            flow.normal = flow.normal + body.normal
            pending = rest
        flow.normal = flow.normal + [w for w, _ in pending]
        return flow

    def match_pattern(self, pattern: ast.pattern, subject: Value, world: World, frame: Frame) -> Matched:
        if isinstance(pattern, ast.MatchAs):
            yes: list[World]
            no: list[World]
            if pattern.pattern is None:
                yes, no = [world], []
            else:
                yes, no = self.match_pattern(pattern.pattern, subject, world, frame)
            if pattern.name is not None:
                yes = [b for w in yes for b in self.assign(ast.Name(id=pattern.name, ctx=ast.Store(), lineno=pattern.lineno, col_offset=pattern.col_offset), subject, w, frame)]
            return yes, no
        if isinstance(pattern, ast.MatchSingleton):
            return [world], [world]  # (``is``: nothing read)
        if isinstance(pattern, ast.MatchValue):
            compared = self.compare_equal(subject, pattern.value, world, frame, pattern)
            return compared, compared
        if isinstance(pattern, ast.MatchOr):
            matched: list[World] = []
            current = [world]
            for alternative in pattern.patterns:
                yes, current = self.match_each(alternative, subject, current, frame)
                matched += yes
            return matched, current
        if isinstance(pattern, ast.MatchSequence):
            return self.match_sequence(pattern, subject, world, frame)
        if isinstance(pattern, ast.MatchMapping):
            return self.match_mapping(pattern, subject, world, frame)
        if isinstance(pattern, ast.MatchClass):
            return self.match_class(pattern, subject, world, frame)
        raise CannotFollow(pattern, f"the pattern `{ast.unparse(pattern)}`")

    def match_each(self, pattern: ast.pattern, subject: Value, worlds: list[World], frame: Frame) -> Matched:
        """``pattern`` matched on each of ``worlds``: every path where it may match, and every one where it may not."""
        yes: list[World] = []
        no: list[World] = []
        for world in worlds:
            matched, failed = self.match_pattern(pattern, subject, world, frame)
            yes += matched
            no += failed
        return yes, no

    def compare_equal(self, subject: Value, expr: ast.expr, world: World, frame: Frame, node: ast.AST) -> list[World]:
        """``subject == expr``, as a value pattern compares."""
        out: list[World] = []
        for w, target in self.eval(expr, world, frame):
            ran = self.operator(subject, target, COMPARE[ast.Eq], w, frame, node) if self.own(subject) or self.own(target) else []
            out += [self.read(target, self.read(subject, after, frame, node), frame, node) for after in [x for x, _ in ran] or [w]]
        return out

    def match_sequence(self, pattern: ast.MatchSequence, subject: Value, world: World, frame: Frame) -> Matched:
        read = self.read(subject, world, frame, pattern)  # its length, then its items
        read, items = self.iterate(subject, read, frame, pattern)
        failed = [read]
        current = [read]
        for part in pattern.patterns:
            if isinstance(part, ast.MatchStar):
                if part.name is not None:
                    star = ast.Name(id=part.name, ctx=ast.Store(), lineno=part.lineno, col_offset=part.col_offset)
                    current = [b for w in current for b in self.assign(star, self.starred_list(items, part), w, frame)]
                continue
            current, no = self.match_each(part, items, current, frame)
            failed += no
        return current, failed

    def match_mapping(self, pattern: ast.MatchMapping, subject: Value, world: World, frame: Frame) -> Matched:
        if pattern.rest is not None:
            raise CannotFollow(pattern, f"the pattern `{ast.unparse(pattern)}`: `**{pattern.rest}` copies what the mapping holds")
        read = self.read(subject, world, frame, pattern)
        failed = [read]
        current = [read]
        for key_expr, part in zip(pattern.keys, pattern.patterns, strict=True):
            step: list[World] = []
            for w in current:
                for w2, key in self.eval(key_expr, w, frame):
                    for atom in sorted(subject, key=repr):
                        for w3, value in self.load_item(atom, key, w2, frame, pattern):
                            yes, no = self.match_pattern(part, value, w3, frame)
                            step += yes
                            failed += no
            current = step
        return current, failed

    def match_class(self, pattern: ast.MatchClass, subject: Value, world: World, frame: Frame) -> Matched:
        """``case Point(x=0)``: an isinstance check, then each named attribute read and matched."""
        itself = isinstance(pattern.cls, ast.Name) and pattern.cls.id in SELF_MATCHING and len(pattern.patterns) == 1
        if pattern.patterns and not itself:
            raise CannotFollow(pattern, f"the pattern `{ast.unparse(pattern)}`: its positional parts name attributes through `__match_args__`")
        current = [w for w, _ in self.eval(pattern.cls, world, frame)]
        failed = list(current)
        if itself:
            current, no = self.match_each(pattern.patterns[0], subject, current, frame)
            failed += no
        for name, part in zip(pattern.kwd_attrs, pattern.kwd_patterns, strict=True):
            step = []
            for w in current:
                for atom in sorted(subject, key=repr):
                    for w2, value in self.load_attr(atom, name, w, frame, pattern):
                        yes, no = self.match_pattern(part, value, w2, frame)
                        step += yes
                        failed += no
            current = step
        return current, failed
