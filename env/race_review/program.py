"""The submitted module as the review reads it: its functions (each with its scope), classes and top-level names."""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

from env.race_review.findings import CannotFollow
from env.race_review.records import expand_dataclasses

FunctionNode = ast.FunctionDef | ast.Lambda | ast.AsyncFunctionDef


def key(node: ast.AST) -> str:
    """A node's identity within the module: its kind and the span it covers."""
    return (
        f"{type(node).__name__}@{getattr(node, 'lineno', 0)}:{getattr(node, 'col_offset', 0)}"
        f"-{getattr(node, 'end_lineno', 0)}:{getattr(node, 'end_col_offset', 0)}"
    )


@dataclass
class FnInfo:
    key: str
    node: FunctionNode
    name: str
    owner: str | None  # the class whose body defines it (zero-argument super())
    params: list[str]  # positional parameters, in order
    vararg: str | None
    kwonly: list[str]
    kwarg: str | None
    locals: frozenset[str]
    globals: frozenset[str]
    generator: bool
    names: frozenset[str] = frozenset()  # every name it (or a function inside it) reads: what a closure may capture
    nests: bool = False  # it defines functions (whose closures read its locals when they run)
    nonlocals: frozenset[str] = frozenset()  # its maker's locals it rebinds (``nonlocal``)
    rebound: frozenset[str] = frozenset()  # its locals a function made inside it rebinds

    @property
    def body(self) -> list[ast.stmt]:
        node = self.node
        if isinstance(node, ast.Lambda):
            made = ast.Return(value=node.body, lineno=node.lineno, col_offset=node.col_offset, end_lineno=node.end_lineno, end_col_offset=node.end_col_offset)
            return [made]
        return list(node.body)


def _own_nodes(body: list[ast.stmt] | list[ast.AST]) -> list[ast.AST]:
    """Every node of a function's own scope: nested functions, lambdas and classes are entered for their decorators,
    defaults and names only; comprehensions for their first iterable and any walrus."""
    found: list[ast.AST] = []
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            todo += node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        elif isinstance(node, ast.Lambda):
            todo += node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        elif isinstance(node, ast.ClassDef):
            todo += node.decorator_list + node.bases
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            todo.append(node.generators[0].iter)
            todo += [n for n in ast.walk(node) if isinstance(n, ast.NamedExpr)]
        else:
            todo += list(ast.iter_child_nodes(node))
    return found


def _bound_names(nodes: list[ast.AST]) -> tuple[set[str], set[str], set[str]]:
    """(names bound, names declared global, names declared nonlocal) among ``nodes``."""
    bound: set[str] = set()
    declared: set[str] = set()
    nonlocal_: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global):
            declared |= set(node.names)
        elif isinstance(node, ast.Nonlocal):
            nonlocal_ |= set(node.names)
    return bound, declared, nonlocal_


# Bases that add nothing a lock discipline depends on (typing generics, abstract bases), and class decorators that hand
# the class back unchanged but for comparison methods written from the ones it has.
NEUTRAL_BASES = frozenset({"object", "Generic", "typing.Generic", "Protocol", "typing.Protocol", "ABC", "abc.ABC"})
IDENTITY_CLASS_DECORATORS = frozenset({"total_ordering", "functools.total_ordering", "typing.final", "final", "runtime_checkable", "typing.runtime_checkable"})


def _base_name(node: ast.expr) -> str:
    """A base's name without its type arguments (``Generic[K, V]`` -> ``Generic``)."""
    return ast.unparse(node.value if isinstance(node, ast.Subscript) else node)


def _is_exception(name: str) -> bool:
    value = getattr(builtins, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


def _function(node: FunctionNode, owner: str | None) -> FnInfo:
    args = node.args
    params = [a.arg for a in args.posonlyargs + args.args]
    names = params + [a.arg for a in args.kwonlyargs] + [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    body: list[ast.AST] = [node.body] if isinstance(node, ast.Lambda) else list(node.body)
    own = _own_nodes(body)
    bound, declared, nonlocal_ = _bound_names(own)
    inner = [n for n in ast.walk(node) if n is not node and isinstance(n, ast.Nonlocal)]
    rebound = {name for n in inner for name in n.names} - set(nonlocal_)
    generator = any(isinstance(n, ast.Yield | ast.YieldFrom | ast.Await) for n in own)
    return FnInfo(
        key=key(node), node=node, name=getattr(node, "name", "<lambda>"), owner=owner, params=params,
        vararg=args.vararg.arg if args.vararg else None, kwonly=[a.arg for a in args.kwonlyargs],
        kwarg=args.kwarg.arg if args.kwarg else None, locals=frozenset((bound | set(names)) - declared - nonlocal_),
        globals=frozenset(declared), generator=generator, names=frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name)),
        nests=any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) for n in own),
        nonlocals=frozenset(nonlocal_), rebound=frozenset(rebound),
    )


def _genexp(node: ast.GeneratorExp) -> ast.FunctionDef:
    """A generator expression as the generator function Python makes of it: ``def <genexpr>(.0): for ... in .0:
    [if ...:] yield elt`` (its first iterable is evaluated where it is written, the rest when it is iterated)."""
    body: ast.stmt = ast.Expr(ast.Yield(node.elt))
    for index, gen in reversed(list(enumerate(node.generators))):
        for test in reversed(gen.ifs):
            body = ast.If(test=test, body=[body], orelse=[])
        source = ast.Name(id=".0", ctx=ast.Load()) if index == 0 else gen.iter
        body = ast.For(target=gen.target, iter=source, body=[body], orelse=[])
    arguments = ast.arguments(posonlyargs=[], args=[ast.arg(arg=".0")], kwonlyargs=[], kw_defaults=[], defaults=[])
    made = ast.FunctionDef(name="<genexpr>", args=arguments, body=[body], decorator_list=[], returns=None, type_comment=None)
    for each in ast.walk(made):  # what was made here sits where the expression is; its parts keep their own places
        if not hasattr(each, "lineno") or each is made or isinstance(each, ast.arguments | ast.arg):
            ast.copy_location(each, node)
    return made


@dataclass
class Program:
    tree: ast.Module
    functions: dict[str, FnInfo] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    exceptions: set[str] = field(default_factory=set)  # classes of this module that are exceptions (their instances hold no state)
    records: dict[str, list[str]] = field(default_factory=dict)  # NamedTuple classes of this module -> their fields
    constants: set[str] = field(default_factory=set)  # Enum classes of this module (their members are constants)
    lines: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, tree: ast.Module, source: str) -> Program:
        expand_dataclasses(tree)  # (the methods the decorator writes, written out where the review can read them)
        program = cls(tree=tree, lines=source.splitlines())
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                program.classes[node.name] = node
                base = node.bases[0] if len(node.bases) == 1 else None
                if isinstance(base, ast.Name) and (base.id in program.exceptions or _is_exception(base.id)):
                    program.exceptions.add(node.name)
                elif base is not None and ast.unparse(base) in ("NamedTuple", "typing.NamedTuple"):
                    program.records[node.name] = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
                elif base is not None and ast.unparse(base) in ("Enum", "IntEnum", "StrEnum", "enum.Enum", "enum.IntEnum", "enum.StrEnum"):
                    program.constants.add(node.name)
        todo: list[tuple[ast.AST, str | None]] = [(tree, None)]
        while todo:  # every function, with the class whose body (or whose method) defines it
            parent, owner = todo.pop()
            for child in ast.iter_child_nodes(parent):
                if isinstance(child, ast.ClassDef):
                    todo.append((child, child.name))
                    continue
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                    info = _function(child, owner)
                    program.functions[info.key] = info
                elif isinstance(child, ast.GeneratorExp):
                    info = _function(_genexp(child), owner)
                    info.key = key(child)
                    program.functions[info.key] = info
                todo.append((child, owner))
        return program

    def text(self, node: ast.AST) -> str:
        """The source of ``node``, on one line, shortened for a message."""
        try:
            text = ast.unparse(node)
        except (ValueError, TypeError, AttributeError, RecursionError):  # a node built by the review itself
            return "?"
        text = " ".join(text.split())
        return text if len(text) <= 60 else text[:57] + "..."

    def mro(self, name: str) -> list[str]:
        """``name`` and the module's classes it inherits from, nearest first (one base each, or ``object``)."""
        chain: list[str] = []
        current: str | None = name
        while current is not None:
            if current in chain:
                raise CannotFollow(self.classes[name], f"the classes of `{name}` inherit from each other in a circle")
            chain.append(current)
            node = self.classes[current]
            decorators = [d for d in node.decorator_list if self.text(d) not in IDENTITY_CLASS_DECORATORS]
            if node.keywords or decorators:
                raise CannotFollow(node, f"the class `{current}` has a metaclass, keyword arguments or a decorator")
            bases = [b for b in node.bases if _base_name(b) not in NEUTRAL_BASES]
            if len(bases) > 1:
                raise CannotFollow(node, f"the class `{current}` has several bases")
            if not bases:
                current = None
            elif isinstance(bases[0], ast.Name) and bases[0].id in self.classes:
                current = bases[0].id
            else:
                raise CannotFollow(node, f"the class `{current}` inherits from `{self.text(bases[0])}`, which is not a class of this module")
        return chain
