"""AST mutations that plant one realistic bug in a covered function, for task synthesis (SWE-smith's idea).

    for m in mutants(source, "pkg/mod.py", covered_lines):
        m.operator, m.mechanisms, m.function, m.start, m.end, m.source   # the whole mutated file

Each operator names the bug it plants as a mechanism of ``env.graders.mechanisms`` (what a submission's
``mechanism`` field is scored against). Edits are spliced into the text at the node's own position, so the rest of
the file keeps its formatting and the gold patch (the reverse edit) is as small as the bug: one contiguous edit a
mutant (``env.authoring.splice``). A mutant is kept only when it still parses and its AST differs from the
original's (no edit that changes nothing). The operators: ``env.authoring.mutate_expressions`` (an operator, a
bound, a range, a constant, a default, a name, a string, an exception) and ``env.authoring.mutate_statements`` (a
statement, guard or branch dropped, an early return or break, a shared mutable default).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from env.authoring import mutate_expressions as ex
from env.authoring import mutate_statements as st
from env.authoring.splice import OFF_BY_ONE, Edit, Splicer
from env.pyparse import parse

OPERATORS: dict[str, tuple[str, ...]] = {  # operator -> the mechanisms its bug is an instance of; the specific ones first
    "boundary": ("off_by_one", "wrong_operator"),
    "slice_off_by_one": ("off_by_one",),
    "range_off_by_one": ("off_by_one",),
    "wrong_exception": ("wrong_exception",),
    "negate_condition": ("wrong_condition",),
    "drop_condition": ("wrong_condition",),
    "drop_guard": ("wrong_condition", "missing_statement"),  # a check missing, and the statement that made it
    "drop_branch": ("missing_statement", "wrong_condition"),  # a case's code missing, so its condition is too
    "swap_arguments": ("swapped_arguments",),
    "string_method": ("wrong_variable", "swapped_arguments"),  # `.lower` for `.upper`: the wrong attribute, a call to the wrong function
    "drop_return": ("missing_statement",),
    "early_return": ("missing_statement",),  # the statements after it never run
    "early_break": ("wrong_order",),
    "shared_mutable_default": ("shared_mutable_state",),  # listed before drop_statement: dropping `self.items = []` is this bug
    "drop_statement": ("missing_statement",),
    "wrong_default": ("wrong_value",),  # a default moved by one is an off-by-one as well
    "wrong_variable": ("wrong_variable",),
    "swap_operator": ("wrong_operator",),
    "string_edit": ("wrong_value",),
    "change_constant": ("wrong_value",),  # an integer moved by one is an off-by-one as well (see change_constant)
}


@dataclass(frozen=True)
class Mutant:
    path: str
    function: str  # dotted qualname of the innermost function holding the edit
    start: int  # first and last line of the original file the edit replaces
    end: int
    operator: str
    description: str
    source: str  # the whole mutated file
    mechanisms: tuple[str, ...]
    reach: tuple[int, ...] = ()  # the lines screening it instead of its own (see Edit.reach): a default's, an `else`'s

    @property
    def screened(self) -> tuple[int, ...]:
        """The lines whose covering tests are this mutant's: a test executing none of them cannot see the bug."""
        return self.reach or tuple(range(self.start, self.end + 1))

    @property
    def digest(self) -> str:
        """What the project becomes: this file, at this path (two edits giving one file are one mutant)."""
        return hashlib.sha256(f"{self.path}\0{self.source}".encode()).hexdigest()[:16]

    @property
    def key(self) -> str:
        return f"{self.path}:{self.digest}"


_Function = tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]


def _functions(tree: ast.AST) -> Iterator[_Function]:
    """Every function with its dotted qualname and the class whose method it is (if so), outermost first."""

    def visit(node: ast.AST, prefix: str) -> Iterator[_Function]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + child.name, child, node if isinstance(node, ast.ClassDef) else None
                yield from visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, prefix + child.name + ".")
            else:
                yield from visit(child, prefix)

    yield from visit(tree, "")


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not of the functions or classes nested in it (those are mutated as themselves)."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) and node is not function:
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def changes_code(new: str, original_dump: str) -> bool:
    """Whether a mutated file parses and means something else than the original (whose ``ast.dump`` is given)."""
    try:
        return ast.dump(parse(new)) != original_dump
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def mutants(
    source: str, path: str, covered: set[int] | None = None, operators: tuple[str, ...] = tuple(OPERATORS), check: bool = True
) -> list[Mutant]:
    """Every mutant of the functions in ``source`` whose edited line is in ``covered`` (all lines when None).

    ``check=False`` leaves out the parse of each mutated file (the costly part, ~20 ms a mutant in a large module):
    the caller checks the mutants it tries with :func:`changes_code`."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    original = ast.dump(tree)
    s = Splicer(source)
    found: dict[str, Mutant] = {}
    for qualname, function, owner in _functions(tree):
        body = function.body[1:] if function.body and isinstance(function.body[0], ast.Expr) and isinstance(function.body[0].value, ast.Constant) else function.body
        body_lines = {line for statement in body for line in range(statement.lineno, (statement.end_lineno or statement.lineno) + 1)}
        nodes = [function, *_own_nodes(function)]
        for operator in operators:
            generate = _generator(operator, s, function, nodes, owner)
            for node in nodes:
                for edit in generate(node):
                    line, last = s.line_of(edit.start), s.line_of(max(edit.start, edit.end - 1))
                    screened = edit.reach or (line,)
                    # A signature edit is in the function when the lines screening it are (never module-level code).
                    if line not in body_lines and not (edit.reach and set(edit.reach) <= body_lines):
                        continue
                    if covered is not None and not any(r in covered for r in screened):
                        continue
                    new = s.replace(edit.start, edit.end, edit.text)
                    if check and not changes_code(new, original):
                        continue
                    mechanisms = OPERATORS[operator] + (("off_by_one",) if edit.description.startswith(OFF_BY_ONE) else ())
                    mutant = Mutant(path, qualname, line, max(line, last), operator, edit.description, new, mechanisms, edit.reach)
                    found.setdefault(mutant.key, mutant)  # the same file twice: the more specific operator (listed first) names it
    return sorted(found.values(), key=lambda m: (m.start, m.operator, m.key))


def _generator(
    operator: str, s: Splicer, function: ast.FunctionDef | ast.AsyncFunctionDef, nodes: list[ast.AST], owner: ast.ClassDef | None
) -> Callable[[ast.AST], Iterator[Edit]]:
    """The operator's edits at one node of ``function`` (whose nodes are ``nodes``, the function itself first)."""
    if operator == "wrong_variable":
        return partial(ex.wrong_variable, s, locals_=ex.local_names(function))
    if operator == "change_constant":  # a slice bound is slice_off_by_one's
        bounds = {id(b) for n in nodes if isinstance(n, ast.Slice) for b in (n.lower, n.upper, n.step) if b is not None}
        return partial(ex.change_constant, s, bounds=bounds)
    if operator == "shared_mutable_default":
        return partial(st.shared_mutable_default, s, owner=owner)
    return partial(_GENERATORS[operator], s)


_GENERATORS: dict[str, Callable[..., Iterator[Edit]]] = {
    "swap_operator": partial(ex.operators, boundary=False),
    "boundary": partial(ex.operators, boundary=True),
    "negate_condition": ex.negate,
    "drop_condition": ex.drop_condition,
    "swap_arguments": ex.swap_arguments,
    "slice_off_by_one": ex.slice_off_by_one,
    "wrong_exception": ex.wrong_exception,
    "range_off_by_one": ex.range_off_by_one,
    "string_edit": ex.string_edit,
    "string_method": ex.string_method,
    "wrong_default": ex.wrong_default,
    "drop_statement": partial(st.drop_statements, returns=False),
    "drop_return": partial(st.drop_statements, returns=True),
    "drop_guard": st.drop_guard,
    "drop_branch": st.drop_branch,
    "early_return": st.early_return,
    "early_break": st.early_break,
}
