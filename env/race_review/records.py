"""``@dataclass`` classes, written out: the review reads the methods the decorator would write as if the module had
written them (``__init__``, ``__repr__``, ``__eq__``, the order methods), and the class body as it is left once the
decorator has run (a ``field(default=x)`` is the class attribute ``x``; a ``default_factory`` leaves none).

The written methods stand at the decorator's line (their messages point there) and read each field the way the
decorator's do: ``__repr__`` and ``__eq__`` read every field they name, without a lock. Options it does not know
(``slots``, ``match_args`` aside) or shapes it cannot write (a field order Python itself would refuse) are named as
ones it cannot follow.
"""

from __future__ import annotations

import ast
import itertools

from env.pyparse import parse
from env.race_review.findings import CannotFollow

_DECORATORS = ("dataclass", "dataclasses.dataclass")
_FIELD = ("field", "dataclasses.field")
_KNOWN_OPTIONS = frozenset({"init", "repr", "eq", "order", "frozen", "unsafe_hash", "slots", "match_args", "kw_only", "weakref_slot"})


class _Field:
    def __init__(self, name: str, default: ast.expr | None, factory: ast.expr | None, init: bool, shown: bool, compared: bool, initvar: bool):
        self.name, self.default, self.factory = name, default, factory
        self.init, self.shown, self.compared, self.initvar = init, shown, compared, initvar


def expand_dataclasses(tree: ast.Module) -> None:
    """Every module-level ``@dataclass`` class of ``tree`` rewritten in place as the decorator leaves it."""
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    fields_of: dict[str, list[_Field]] = {}
    counter = itertools.count()
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        found = [d for d in node.decorator_list if ast.unparse(d.func if isinstance(d, ast.Call) else d) in _DECORATORS]
        if not found:
            continue
        decorator = found[0]
        options = _options(decorator)
        inherited = [f for base in node.bases if isinstance(base, ast.Name) and base.id in fields_of for f in fields_of[base.id]]
        own = _fields(node)
        merged = {f.name: f for f in inherited}
        merged.update({f.name: f for f in own})
        fields = list(merged.values())
        fields_of[node.name] = fields
        node.decorator_list = [d for d in node.decorator_list if d is not decorator]
        defined = {s.name for s in node.body if isinstance(s, ast.FunctionDef)}
        source = _methods(node.name, fields, options, defined, "__post_init__" in defined or _inherits_post_init(node, classes))
        if source:
            try:
                module = parse(source)
            except SyntaxError as error:
                raise CannotFollow(node, f"the dataclass `{node.name}`: its fields in this order ({error.msg})") from error
            written = module.body if isinstance(module, ast.Module) else []
            for method in written:
                for child in ast.walk(method):  # each node a place of its own (the review keys objects by place)
                    if isinstance(child, ast.expr | ast.stmt | ast.arg | ast.keyword | ast.excepthandler):
                        column = 10_000 + next(counter)
                        child.lineno, child.col_offset = decorator.lineno, column
                        child.end_lineno, child.end_col_offset = decorator.lineno, column
            node.body = [s for s in node.body if not (isinstance(s, ast.Pass))] + written


def _options(decorator: ast.expr) -> dict[str, bool]:
    options = {"init": True, "repr": True, "eq": True, "order": False, "frozen": False}
    if isinstance(decorator, ast.Call):
        for keyword in decorator.keywords:
            if keyword.arg not in _KNOWN_OPTIONS or not isinstance(keyword.value, ast.Constant):
                raise CannotFollow(decorator, f"`{ast.unparse(decorator)}`: the option `{keyword.arg}`")
            options[keyword.arg] = bool(keyword.value.value)
    return options


def _fields(node: ast.ClassDef) -> list[_Field]:
    """The class's own fields, and its body as the decorator leaves it."""
    out: list[_Field] = []
    for statement in node.body:
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        annotation = ast.unparse(statement.annotation)
        if annotation.startswith(("ClassVar", "typing.ClassVar")) or annotation in ("KW_ONLY", "dataclasses.KW_ONLY"):
            continue
        initvar = annotation.startswith(("InitVar", "dataclasses.InitVar"))
        value = statement.value
        default, factory, init, shown, compared = value, None, True, True, True
        if isinstance(value, ast.Call) and ast.unparse(value.func) in _FIELD:
            if value.args:
                raise CannotFollow(value, f"`{ast.unparse(value)}`: positional arguments to `field`")
            default = None
            for keyword in value.keywords:
                if keyword.arg == "default":
                    default = keyword.value
                elif keyword.arg == "default_factory":
                    factory = keyword.value
                elif keyword.arg in ("init", "repr", "compare") and isinstance(keyword.value, ast.Constant):
                    flag = bool(keyword.value.value)
                    init, shown, compared = (flag, shown, compared) if keyword.arg == "init" else (init, flag, compared) if keyword.arg == "repr" else (init, shown, flag)
                elif keyword.arg not in ("hash", "metadata", "kw_only", "doc"):
                    raise CannotFollow(value, f"`{ast.unparse(value)}`: the argument `{keyword.arg}` of `field`")
            statement.value = default  # what the class attribute is once the decorator ran (none for a factory)
            if default is None:
                statement.simple = 1
        out.append(_Field(statement.target.id, default, factory, init, shown, compared, initvar))
    return out


def _inherits_post_init(node: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> bool:
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            parent = classes[base.id]
            if any(isinstance(s, ast.FunctionDef) and s.name == "__post_init__" for s in parent.body) or _inherits_post_init(parent, classes):
                return True
    return False


def _methods(name: str, fields: list[_Field], options: dict[str, bool], defined: set[str], post_init: bool) -> str:
    lines: list[str] = []
    stored = [f for f in fields if not f.initvar]
    if options["init"] and "__init__" not in defined:
        params, body = ["self"], []
        for f in fields:
            if f.init:
                if f.factory is not None:
                    params.append(f"{f.name}=None")
                    body.append(f"self.{f.name} = ({ast.unparse(f.factory)})() if {f.name} is None else {f.name}")
                    continue
                params.append(f"{f.name}={ast.unparse(f.default)}" if f.default is not None else f.name)
                if not f.initvar:
                    body.append(f"self.{f.name} = {f.name}")
            elif f.factory is not None:
                body.append(f"self.{f.name} = ({ast.unparse(f.factory)})()")
            elif f.default is not None:
                body.append(f"self.{f.name} = {ast.unparse(f.default)}")
        if post_init:
            body.append("self.__post_init__(" + ", ".join(f.name for f in fields if f.initvar) + ")")
        lines += [f"def __init__({', '.join(params)}):", *(f"    {line}" for line in body or ["pass"])]
    if options["repr"] and "__repr__" not in defined:
        shown = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in stored if f.shown)
        lines += ["def __repr__(self):", f"    return f'{name}({shown})'"]
    compared = [f for f in stored if f.compared]
    mine = "(" + "".join(f"self.{f.name}, " for f in compared) + ")"
    theirs = "(" + "".join(f"other.{f.name}, " for f in compared) + ")"
    if options["eq"] and "__eq__" not in defined:
        lines += ["def __eq__(self, other):", "    if type(other) is not type(self):", "        return NotImplemented", f"    return {mine} == {theirs}"]
    if options["order"]:
        for method, op in (("__lt__", "<"), ("__le__", "<="), ("__gt__", ">"), ("__ge__", ">=")):
            lines += [f"def {method}(self, other):", "    if type(other) is not type(self):", "        return NotImplemented", f"    return {mine} {op} {theirs}"]
    if (options["frozen"] and options["eq"]) or options.get("unsafe_hash"):
        lines += ["def __hash__(self):", f"    return hash({mine})"]
    return "\n".join(lines) + "\n" if lines else ""
