"""The special methods Python calls for you: operators, truth tests, builtins and the library handed an object of the
module's classes run that class's ``__lt__``, ``__len__``, ``__abs__`` ... wherever it happens, so the review walks
them there too (the method, with the caller's locks, and what it returns)."""

from __future__ import annotations

import ast

from env.race_review.engine import Args, EngineBase, Frame, Results
from env.race_review.values import PLAIN, Atom, Value, new
from env.race_review.world import World, join

# operator -> (the method on the left operand, the reflected one on the right)
BINARY = {
    ast.Add: ("__add__", "__radd__"), ast.Sub: ("__sub__", "__rsub__"), ast.Mult: ("__mul__", "__rmul__"),
    ast.MatMult: ("__matmul__", "__rmatmul__"), ast.Div: ("__truediv__", "__rtruediv__"),
    ast.FloorDiv: ("__floordiv__", "__rfloordiv__"), ast.Mod: ("__mod__", "__rmod__"), ast.Pow: ("__pow__", "__rpow__"),
    ast.LShift: ("__lshift__", "__rlshift__"), ast.RShift: ("__rshift__", "__rrshift__"), ast.BitAnd: ("__and__", "__rand__"),
    ast.BitOr: ("__or__", "__ror__"), ast.BitXor: ("__xor__", "__rxor__"),
}
COMPARE = {
    ast.Eq: ("__eq__", "__eq__"), ast.NotEq: ("__ne__", "__ne__"), ast.Lt: ("__lt__", "__gt__"), ast.LtE: ("__le__", "__ge__"),
    ast.Gt: ("__gt__", "__lt__"), ast.GtE: ("__ge__", "__le__"),
}
UNARY = {ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__"}
TRUTH = ("__bool__", "__len__")
# builtin -> the methods it may call on an object of the module's classes (the first its class defines)
BUILTIN = {
    "len": ("__len__",), "str": ("__str__", "__repr__"), "repr": ("__repr__",), "ascii": ("__repr__",), "bool": TRUTH,
    "hash": ("__hash__",), "iter": ("__iter__",), "format": ("__format__", "__str__", "__repr__"), "int": ("__int__", "__index__"),
    "float": ("__float__", "__index__"), "complex": ("__complex__",), "abs": ("__abs__",), "round": ("__round__",),
    "bytes": ("__bytes__",), "divmod": ("__divmod__",), "pow": ("__pow__",), "next": ("__next__",), "reversed": ("__reversed__",),
    "bin": ("__index__",), "hex": ("__index__",), "oct": ("__index__",), "print": ("__str__", "__repr__"),
}
# what the library may call on an object of the module's classes it is handed, directly or among the items it reads
ANY = (
    "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__hash__", "__bool__", "__len__", "__str__", "__repr__",
    "__format__", "__int__", "__float__", "__index__", "__abs__", "__add__", "__radd__", "__iter__", "__next__",
    "__contains__", "__getitem__", "__round__",
)


class DundersMixin(EngineBase):
    def own(self, value: Value) -> list[Atom]:
        """The objects of the module's classes in ``value``."""
        return sorted((a for a in value if self.class_of(a) is not None), key=repr)

    def special(self, atom: Atom, names: tuple[str, ...], args: Args, world: World, frame: Frame, node: ast.AST) -> Results | None:
        """The first of ``names`` the object's class defines, called; None when it defines none."""
        for name in names:
            found = self.dunder(atom, name, args, world, frame, node)
            if found is not None:
                return found
        return None

    def operator(self, left: Value, right: Value, names: tuple[str, str], world: World, frame: Frame, node: ast.AST) -> Results:
        """``left <op> right`` where either holds objects of the module's classes: their methods, both ways round."""
        out: Results = []
        for atom in self.own(left):
            out += self.special(atom, (names[0],), Args([right]), world, frame, node) or []
        for atom in self.own(right):
            out += self.special(atom, (names[1],), Args([left]), world, frame, node) or []
        return out

    def formatted(self, values: list[Value], world: World, frame: Frame, node: ast.AST) -> list[World]:
        """Values formatted into text (an f-string, ``%``, ``str.format``): each object of the module's classes among
        them (or in a tuple or list of them) runs its __format__, __str__ and __repr__, whichever it defines."""
        atoms = [a for value in values for a in self.own(value)]
        for value in values:
            for holder in value:
                if self.kind_of(holder) in ("tuple", "list", "dict"):
                    atoms += self.own(self.heap.items(holder.obj) | self.heap.values(holder.obj))  # type: ignore[union-attr]
        worlds = [world]
        for atom in dict.fromkeys(atoms):
            for name in ("__format__", "__str__", "__repr__"):
                step: list[World] = []
                for w in worlds:
                    called = self.dunder(atom, name, Args([frozenset({new(("ext",))})]), w, frame, node)
                    step += [w2 for w2, _ in called] if called is not None else [w]
                worlds = join(step) or worlds
        return worlds

    def truth_of(self, value: Value, world: World, frame: Frame, node: ast.AST) -> list[World]:
        """The paths after testing ``value``: an object of the module's classes runs its __bool__ (or __len__)."""
        worlds = [world]
        for atom in self.own(value):
            worlds = [w2 for w in worlds for w2, _ in self.special(atom, TRUTH, Args(), w, frame, node) or [(w, PLAIN)]]
        return join(worlds) or [world]

    def run_any(self, values: list[Value], world: World, frame: Frame, node: ast.AST) -> list[World]:
        """Library code handed objects of the module's classes (or containers holding them) may call any of their
        special methods: each one the class defines is walked, on every path."""
        atoms = [a for value in values for a in self.own(value)]
        for value in values:
            for holder in value:
                if self.kind_of(holder) in ("list", "dict", "set", "deque", "tuple", "frozenset", "copy"):
                    atoms += self.own(self.heap.items(holder.obj))  # type: ignore[union-attr]
        worlds = [world]
        for atom in dict.fromkeys(atoms):
            for name in ANY:
                found: list[World] = []
                for w in worlds:
                    called = self.dunder(atom, name, Args([frozenset({new(("ext",))})]), w, frame, node)
                    found += [w2 for w2, _ in called] if called is not None else [w]
                worlds = join(found) or worlds
        return worlds
