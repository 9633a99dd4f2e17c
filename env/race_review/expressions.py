"""Expressions: the values they may have on each path, the shared state they touch, and conditions as path splits.

A condition splits the paths that reach it into those where it may be true and those where it may be false. Only a
literal, or what a try-acquire returned (true exactly where it took the lock), is known; every other condition,
whatever it tests (a count, a call count, the time, a thread's name), lets both branches run: a branch no test ever
takes is judged like any other.
"""

from __future__ import annotations

import ast
import builtins

from env.race_review.dunders import BINARY, COMPARE, UNARY
from env.race_review.engine import Args, EngineBase, Frame, Results
from env.race_review.findings import CannotFollow
from env.race_review.library import BUILTINS, spec
from env.race_review.program import key
from env.race_review.values import (
    MODULE,
    NONE,
    NOTHING,
    PLAIN,
    Acquired,
    Func,
    GenObj,
    Imm,
    Library,
    LockRef,
    Packed,
    Ref,
    Value,
    const,
    new,
    plain,
    truthy,
    unconst,
    with_scope,
)
from env.race_review.world import Locks, World, join

_NO_LOCKS = Locks()

SAFE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)
CONSTANT_NAMES = {"True": True, "False": False, "None": None}


class ExpressionsMixin(EngineBase):
    def eval(self, node: ast.expr, world: World, frame: Frame) -> Results:
        if isinstance(node, ast.Constant):
            return [(world, const(node.value))]
        if isinstance(node, ast.Name):
            return self.load_name(node.id, world, frame, node)
        out: Results = []
        if isinstance(node, ast.Attribute):
            for w, v in self.eval(node.value, world, frame):
                if not v:
                    self.lost(node.value, w)
                    continue
                locks = [a for a in v if isinstance(a, LockRef)]
                if locks and len(locks) < len(v) and node.attr in ("acquire", "release", "wait", "wait_for", "notify", "notify_all"):
                    self.not_a_lock(node.value, [a for a in v if not isinstance(a, LockRef)], f"`{self.program.text(node)}` at line {node.lineno}")
                    v = frozenset(locks)  # reported: the rest of the walk follows the lock
                for atom in sorted(v, key=repr):
                    out += self.load_attr(atom, node.attr, w, frame, node)
            return out
        if isinstance(node, ast.Subscript):
            out = []
            for w, v in self.eval(node.value, world, frame):
                if not v:
                    self.lost(node.value, w)
                for w1, index in self.eval(node.slice, w, frame):
                    for atom in sorted(v, key=repr):
                        out += self.load_item(atom, index, w1, frame, node)
            return out
        if isinstance(node, ast.Call):
            return self.eval_call(node, world, frame)
        if isinstance(node, ast.BinOp):
            return self.eval_binop(node, world, frame)
        if isinstance(node, ast.UnaryOp):
            return self.eval_unary(node, world, frame)
        if isinstance(node, ast.BoolOp):
            return self.eval_boolop(node, world, frame)
        if isinstance(node, ast.Compare):
            return self.eval_compare(node, world, frame)
        if isinstance(node, ast.IfExp):
            yes, no = self.split(node.test, world, frame)
            return [r for w in yes for r in self.eval(node.body, w, frame)] + [r for w in no for r in self.eval(node.orelse, w, frame)]
        if isinstance(node, ast.Lambda):
            return self.make_function(node, world, frame)
        if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict):
            return self.eval_display(node, world, frame)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp):
            return self.eval_comprehension(node, world, frame)
        if isinstance(node, ast.GeneratorExp):
            return self.make_genexp(node, world, frame)
        if isinstance(node, ast.JoinedStr):
            return self.eval_values([v.value for v in node.values if isinstance(v, ast.FormattedValue)], world, frame, node)
        if isinstance(node, ast.FormattedValue):
            return self.eval_values([node.value], world, frame, node)
        if isinstance(node, ast.NamedExpr):
            return [(w2, v) for w, v in self.eval(node.value, world, frame) for w2 in self.assign(node.target, v, w, frame)]
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return self.eval_yield(node, world, frame)
        if isinstance(node, ast.Slice):
            parts = [p for p in (node.lower, node.upper, node.step) if p is not None]
            return self.eval_values(parts, world, frame, node)
        raise CannotFollow(node, f"the expression `{self.program.text(node)}`")

    def eval_yield(self, node: ast.Yield | ast.YieldFrom, world: World, frame: Frame) -> Results:
        """What a generator hands its consumer (the generator runs where it is iterated: calls.run_generator)."""
        if not self.yields:
            raise CannotFollow(node, "a `yield` outside a generator it can run")
        out: Results = []
        held = [k for k, n in world.locks.held if n and self.heap.locks[k].scope != "fresh"]
        if held and self.handed_out:  # (a generator the class's own code consumes runs under its caller's locks)
            self.report(
                node,
                f"{self.who(frame)} yields while holding {self.lock_name(LockRef(held[0]))}: the caller's code runs with it held, and "
                f"waits for itself (or for a thread that waits for it) if it calls back in",
                "deadlock",
            )
        for w, value in self.eval(node.value, world, frame) if node.value is not None else [(world, NONE)]:
            if isinstance(node, ast.YieldFrom):
                w, value = self.iterate(value, w, frame, node)
            self.yields[-1].update(value)
            out.append((w, PLAIN))
        return out

    def lost(self, node: ast.AST, world: World) -> None:
        """An expression the walk found no value for where one is used: the path would end here unjudged, so the
        review says it cannot follow it (a finding, kept only if the last walk sees it too)."""
        self.report(node, f"the review cannot follow `{self.program.text(node)}`: it does not know what it holds here", "cannot-follow")

    # -- names ----------------------------------------------------------------------------------

    def load_name(self, name: str, world: World, frame: Frame, node: ast.AST) -> Results:
        fn = frame.fn
        bound = world.get(name)
        if fn is not None and name in fn.rebound:  # a function made here rebinds it (``nonlocal``): whatever it bound
            return [(world, (bound or NOTHING) | self.heap.local_values.get((fn.key, name), NOTHING))]
        if bound is not None:  # a local, or a comprehension's own name
            return [(world, bound)]
        if frame.cls_body is not None and self.heap.has_field(("class", frame.cls_body), name):
            return [(world, self.heap.field(("class", frame.cls_body), name))]
        if fn is not None and name in fn.locals:
            return [(world, world.get(name) or NOTHING)]
        if fn is not None and name not in fn.globals and name in frame.closure:
            # a closure reads its maker's local when it runs, not when it was made: whatever that local is ever bound to
            return [(world, frame.closure[name] | self.heap.local_values.get((frame.parent, name), NOTHING))]
        if self.heap.has_field(MODULE, name) or (fn is not None and name in fn.globals):
            value = self.heap.field(MODULE, name)
            if (MODULE, name) in self.heap.nonfinal:
                world = self.access(Ref(MODULE), name, False, world, frame, node, f"the module-level `{name}`")
            return [(world, value if self.module_level else with_scope(unconst(value), "global", name))]
        if name in CONSTANT_NAMES:
            return [(world, const(CONSTANT_NAMES[name]))]
        if name in ("__name__", "__file__", "NotImplemented", "Ellipsis", "__doc__"):
            return [(world, PLAIN)]
        found = spec(name)
        if isinstance(found, str):
            raise CannotFollow(node, found if name in BUILTINS or hasattr(builtins, name) else f"the name `{name}`, which nothing in the module defines")
        return [(world, frozenset({Library(name)}))]

    def make_function(self, node: ast.FunctionDef | ast.Lambda, world: World, frame: Frame) -> Results:
        """A def or lambda as a value: its defaults evaluated now, the names it reads from this scope captured."""
        info = self.program.functions[key(node)]
        captured: dict[str, Value] = dict(frame.closure)
        if frame.fn is not None:  # the maker's locals, bound yet or not (the closure reads them when it runs)
            captured.update({name: NOTHING for name in frame.fn.locals})
        for name, value in world.env:
            captured[name] = value
        free = info.names - info.locals
        closure = tuple(sorted((n, v) for n, v in captured.items() if n in free))
        out: Results = []
        for w, defaults in self.eval_many(list(node.args.defaults), world, frame):
            kw_nodes = [(a.arg, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True) if d is not None]
            for w2, kw_values in self.eval_many([d for _, d in kw_nodes], w, frame):
                kw = tuple((name, v) for (name, _), v in zip(kw_nodes, kw_values, strict=True))
                if self.module_level:  # made once, at import: a mutable default is shared by every call
                    defaults = [with_scope(d, "global", f"{info.name}.__defaults__") for d in defaults]
                    kw = tuple((name, with_scope(v, "global", f"{info.name}.__kwdefaults__")) for name, v in kw)
                parent = frame.fn.key if frame.fn is not None else ""
                out.append((w2, frozenset({Func(info.key, closure, parent, tuple(defaults), kw)})))
        return out

    def make_genexp(self, node: ast.GeneratorExp, world: World, frame: Frame) -> Results:
        """A generator expression: its first iterable now, the rest whenever (and wherever) it is iterated."""
        info = self.program.functions[key(node)]
        captured: dict[str, Value] = dict(frame.closure)
        if frame.fn is not None:
            captured.update({name: NOTHING for name in frame.fn.locals})
        captured.update(dict(world.env))
        closure = tuple(sorted((n, v) for n, v in captured.items() if n in info.names - info.locals))
        parent = frame.fn.key if frame.fn is not None else ""
        func = Func(info.key, closure, parent)
        return [(w, frozenset({GenObj(func, ((".0", first),))})) for w, first in self.eval(node.generators[0].iter, world, frame)]

    def eval_many(self, nodes: list[ast.expr], world: World, frame: Frame) -> list[tuple[World, list[Value]]]:
        """``nodes`` evaluated left to right: each path with the value of every node."""
        paths: list[tuple[World, list[Value]]] = [(world, [])]
        for node in nodes:
            paths = [(w2, values + [v]) for w, values in paths for w2, v in self.eval(node, w, frame)]
        return paths

    def eval_values(self, nodes: list[ast.expr], world: World, frame: Frame, node: ast.AST) -> Results:
        """Values read as a whole into a plain result (formatting, slicing): each object's __format__/__str__ runs."""
        out: Results = []
        for w, values in self.eval_many(nodes, world, frame):
            for after in self.formatted(values, w, frame, node):
                for value in values:
                    after = self.read(frozenset(a for a in value if self.class_of(a) is None), after, frame, node)
                out.append((after, PLAIN))
        return out

    # -- operators -------------------------------------------------------------------------------

    def eval_binop(self, node: ast.BinOp, world: World, frame: Frame) -> Results:
        out: Results = []
        for w, (left, right) in self.eval_many([node.left, node.right], world, frame):
            if isinstance(node.op, ast.Mod) and plain(left):  # "%s" % value formats it: its __str__ and kin run
                worlds = self.formatted([right], w, frame, node)
                out += [(self.read(right, x, frame, node.right), PLAIN) for x in worlds]
                continue
            if self.own(left) or self.own(right):  # the operands' own __add__ / __radd__ ... run here
                ran = self.operator(left, right, BINARY[type(node.op)], w, frame, node)
                out += ran
                left = frozenset(a for a in left if self.class_of(a) is None)
                right = frozenset(a for a in right if self.class_of(a) is None)
                if ran and (not left or not right):
                    continue
                left, right = left or PLAIN, right or PLAIN  # no such method: a TypeError, or the other side's
            w = self.read(right, self.read(left, w, frame, node.left), frame, node.right)
            if not (plain(left) and plain(right) and isinstance(node.op, SAFE_OPS)):
                self.raised(w, node)
            containers: list[Ref] = [a for a in left | right if isinstance(a, Ref) and self.kind_of(a) in ("list", "tuple", "deque", "dict", "set", "frozenset")]
            if plain(left) and plain(right):
                out.append((w, PLAIN))
            elif containers and any(self.kind_of(a) in ("dict", "set", "frozenset") for a in containers):
                out.append((w, self.merged(containers, node, w)))  # d | e, s & t: a new dict or set of their items
            elif containers:
                obj = ("site", key(node))
                self.heap.set_kind(obj, "list")
                for atom in containers:  # a new list of the same items: shared ones stay shared
                    items = self.heap.items(atom.obj)
                    scope = self.scope_of(atom, w)
                    self.heap.store_item(obj, with_scope(items, scope, atom.path) if scope else items)
                out.append((w, frozenset({new(obj)})))
            else:
                out.append((w, PLAIN | frozenset(a for a in left | right if isinstance(a, Ref) and self.kind_of(a) == "ext")))
        return out

    def eval_unary(self, node: ast.UnaryOp, world: World, frame: Frame) -> Results:
        out: Results = []
        for w, value in self.eval(node.operand, world, frame):
            if isinstance(node.op, ast.Not):
                out += [(w2, PLAIN) for w2 in self.truth_of(value, w, frame, node)]
                continue
            for atom in self.own(value):
                out += self.special(atom, (UNARY[type(node.op)],), Args(), w, frame, node) or []
            rest = frozenset(a for a in value if self.class_of(a) is None)
            if rest or not value:
                out.append((self.read(rest, w, frame, node.operand), PLAIN))
        return out

    def merged(self, containers: list[Ref], node: ast.AST, world: World) -> Value:
        kind = "dict" if any(self.kind_of(a) == "dict" for a in containers) else "set"
        obj = ("site", key(node))
        self.heap.set_kind(obj, kind)
        keys, values = self.split_mapping(frozenset(containers), world)
        self.heap.store_item(obj, keys)
        if kind == "dict":
            self.heap.store(obj, "#values", values)
        return frozenset({new(obj)})

    def eval_boolop(self, node: ast.BoolOp, world: World, frame: Frame) -> Results:
        """``a and b`` / ``a or b``: the value of any operand, on the paths that stop at it or go on."""
        exits: list[World] = []
        value: Value = NOTHING
        current = [world]
        for index, operand in enumerate(node.values):
            following: list[World] = []
            for w in current:
                for w2, v in self.eval(operand, w, frame):
                    value |= v
                    following.append(w2)
            if index < len(node.values) - 1:
                exits += following
            current = following
        return [(w, value) for w in exits + current]

    def eval_compare(self, node: ast.Compare, world: World, frame: Frame) -> Results:
        out: Results = []
        for w, values in self.eval_many([node.left, *node.comparators], world, frame):
            worlds = [w]
            for op, left, right in zip(node.ops, values, values[1:], strict=False):
                step: list[World] = []
                for current in worlds:
                    if isinstance(op, ast.In | ast.NotIn):
                        ran = [x for atom in self.own(right) for x in self.special(atom, ("__contains__", "__iter__"), Args([left]), current, frame, node) or []]
                        ran += [(x, PLAIN) for x in self.run_any([left], current, frame, node)] if self.own(left) else []
                    elif isinstance(op, ast.Is | ast.IsNot):
                        ran = []
                    else:
                        ran = self.operator(left, right, COMPARE[type(op)], current, frame, node) if self.own(left) or self.own(right) else []
                    for after in [x for x, _ in ran] or [current]:
                        if not isinstance(op, ast.Is | ast.IsNot):
                            after = self.read(right, self.read(left, after, frame, node), frame, node)
                        if not isinstance(op, ast.Is | ast.IsNot | ast.Eq | ast.NotEq):
                            self.raised(after, node)  # 1 < None, an unhashable key `in` a dict: a TypeError
                        step.append(after)
                worlds = join(step)
            out += [(x, PLAIN) for x in worlds]
        return out

    def eval_call(self, node: ast.Call, world: World, frame: Frame) -> Results:
        out: Results = []
        for w, func in self.eval(node.func, world, frame):
            if not func:
                self.lost(node.func, w)
            for w2, args in self.eval_args(node, w, frame):
                out += self.call(func, args, w2, frame, node)
        return out

    def eval_args(self, node: ast.Call, world: World, frame: Frame) -> list[tuple[World, Args]]:
        paths: list[tuple[World, Args]] = [(world, Args())]
        for arg in node.args:
            step: list[tuple[World, Args]] = []
            for w, args in paths:
                expr = arg.value if isinstance(arg, ast.Starred) else arg
                for w2, v in self.eval(expr, w, frame):
                    step.append((w2, self.add_arg(args, v, isinstance(arg, ast.Starred), w2, frame, arg)))
            paths = step
        for keyword in node.keywords:
            step = []
            for w, args in paths:
                for w2, v in self.eval(keyword.value, w, frame):
                    step.append((w2, self.add_keyword(args, keyword.arg, v)))
            paths = step
        return paths

    def add_arg(self, args: Args, value: Value, starred: bool, world: World, frame: Frame, node: ast.AST) -> Args:
        if not starred:
            return Args(args.positional + [value], dict(args.keywords), args.rest, args.kwrest)
        packs = [a for a in value if isinstance(a, Packed)]
        if len(packs) == 1 and len(value) == 1 and packs[0].items is not None and args.rest is None:
            return Args(args.positional + list(packs[0].items), dict(args.keywords), None, args.kwrest)
        _, items = self.iterate(value, world, frame, node)
        return Args(list(args.positional), dict(args.keywords), (args.rest or NOTHING) | items, args.kwrest)

    def add_keyword(self, args: Args, name: str | None, value: Value) -> Args:
        if name is not None:
            return Args(list(args.positional), {**args.keywords, name: value}, args.rest, args.kwrest)
        packs = [a for a in value if isinstance(a, Packed)]
        if len(packs) == 1 and len(value) == 1 and packs[0].items is not None and args.kwrest is None:
            return Args(list(args.positional), {**args.keywords, **dict(zip(packs[0].names, packs[0].items, strict=True))}, args.rest, None)
        rest: Value = frozenset().union(*(p.rest | frozenset().union(*(p.items or ())) for p in packs))
        for atom in value:  # a dict display or any mapping: what it holds may reach any parameter
            if not isinstance(atom, Packed):
                rest |= frozenset({atom}) if not isinstance(atom, Ref) else self.mapping_values(atom)
        return Args(list(args.positional), dict(args.keywords), args.rest, (args.kwrest or NOTHING) | rest)

    def mapping_values(self, atom: Ref) -> Value:
        return self.split_mapping(frozenset({atom}), World(_NO_LOCKS))[1]

    # -- displays and comprehensions -----------------------------------------------------------

    def eval_display(self, node: ast.List | ast.Tuple | ast.Set | ast.Dict, world: World, frame: Frame) -> Results:
        if isinstance(node, ast.Dict):
            return self.eval_dict(node, world, frame)
        parts: list[ast.expr] = list(node.elts)
        out: Results = []
        for w, values in self.eval_many([p.value if isinstance(p, ast.Starred) else p for p in parts], world, frame):
            items: Value = NOTHING
            for part, value in zip(parts, values, strict=True):
                if isinstance(part, ast.Starred):
                    w, inner = self.iterate(value, w, frame, part)
                    items |= inner
                else:
                    items |= value
            kind = {ast.List: "list", ast.Tuple: "tuple", ast.Set: "set"}[type(node)]
            if kind == "tuple" and plain(items):
                out.append((w, PLAIN))
                continue
            obj = ("site", key(node))
            self.heap.set_kind(obj, kind)
            self.heap.store_item(obj, items)
            if kind == "tuple" and not any(isinstance(p, ast.Starred) for p in parts):
                for index, value in enumerate(values):  # positions, for unpacking it again
                    self.heap.store(obj, f"#{index}", value)
                self.heap.store(obj, "#len", frozenset({Imm(len(values))}))
            out.append((w, frozenset({new(obj)})))
        return out

    def eval_dict(self, node: ast.Dict, world: World, frame: Frame) -> Results:
        """A dict display: its keys are its items, its values apart; ``**m`` adds m's keys and values."""
        parts = [k if k is not None else v for k, v in zip(node.keys, node.values, strict=True)]
        values_at = [v for k, v in zip(node.keys, node.values, strict=True) if k is not None]
        out: Results = []
        for w, found in self.eval_many(parts + values_at, world, frame):
            keys: Value = NOTHING
            values: Value = frozenset().union(NOTHING, *found[len(parts) :])
            for k, value in zip(node.keys, found[: len(parts)], strict=True):
                if k is None:  # **mapping
                    more_keys, more_values = self.split_mapping(value, w)
                    keys, values = keys | more_keys, values | more_values
                else:
                    keys |= value
            obj = ("site", key(node))
            self.heap.set_kind(obj, "dict")
            self.heap.store_item(obj, keys)
            self.heap.store(obj, "#values", values)
            out.append((w, frozenset({new(obj)})))
        return out

    def eval_comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp, world: World, frame: Frame) -> Results:
        """One pass through the loops (every element is alike); the loop names stay inside."""
        outer = dict(world.env)
        elements: Value = NOTHING
        self.loop_depth += 1  # a lock made in a comprehension is one of several
        try:
            return self.comprehension_body(node, world, frame, outer, elements)
        finally:
            self.loop_depth -= 1

    def comprehension_body(self, node: ast.ListComp | ast.SetComp | ast.DictComp, world: World, frame: Frame, outer: dict[str, Value], elements: Value) -> Results:
        done: list[World] = []
        paths = [world]
        for gen in node.generators:
            if gen.is_async:
                raise CannotFollow(node, "an async comprehension")
            step: list[World] = []
            for w in paths:
                for w2, source in self.eval(gen.iter, w, frame):
                    done.append(w2)  # no item at all
                    w3, item = self.iterate(source, w2, frame, gen.iter)
                    for w4 in self.assign(gen.target, item, w3, frame):
                        keep = [w4]
                        for test in gen.ifs:
                            keep = [y for k in keep for y in self.split(test, k, frame)[0]]
                        step += keep
            paths = step
        parts: list[ast.expr] = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        mapped: Value = NOTHING
        for w in paths:
            for w2, values in self.eval_many(parts, w, frame):
                elements |= values[0]  # (a dict's key; its value apart)
                mapped |= values[-1]
                done.append(w2)
        if any(w.locks.key() != world.locks.key() for w in done):
            raise CannotFollow(node, "a comprehension that takes or lets go of a lock")
        obj = ("site", key(node))
        self.heap.set_kind(obj, {ast.ListComp: "list", ast.SetComp: "set", ast.DictComp: "dict"}[type(node)])
        self.heap.store_item(obj, elements)
        if isinstance(node, ast.DictComp):
            self.heap.store(obj, "#values", mapped)
        bound = {n.id for gen in node.generators for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        out: Results = []
        for w in done:
            env = {k: v for k, v in w.env if k not in bound}
            env.update({k: v for k, v in outer.items() if k in bound})
            out.append((w.with_env(tuple(sorted(env.items()))), frozenset({new(obj)})))
        return out

    # -- conditions ------------------------------------------------------------------------------

    def split(self, test: ast.expr, world: World, frame: Frame) -> tuple[list[World], list[World]]:
        if isinstance(test, ast.Constant):
            return ([world], []) if test.value else ([], [world])
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            yes, no = self.split(test.operand, world, frame)
            return no, yes
        if isinstance(test, ast.BoolOp):
            conjunction = isinstance(test.op, ast.And)
            going, settled = [world], []
            for operand in test.values:
                step: list[World] = []
                for w in going:
                    yes, no = self.split(operand, w, frame)
                    step += yes if conjunction else no
                    settled += no if conjunction else yes
                going = step
            return (going, settled) if conjunction else (settled, going)
        yes_worlds: list[World] = []
        no_worlds: list[World] = []
        for w, value in self.eval(test, world, frame):
            answer = self.truth(value, w)
            for tested in self.truth_of(value, w, frame, test):
                tested = self.read(frozenset(a for a in value if isinstance(a, Ref) and self.class_of(a) is None), tested, frame, test)
                if answer is not False:
                    yes_worlds.append(tested)
                if answer is not True:
                    no_worlds.append(tested)
        return yes_worlds, no_worlds

    def truth(self, value: Value, world: World) -> bool | None:
        """What a condition is on this path: a try-acquire's result is known from what it did here."""
        acquired = [a for a in value if isinstance(a, Acquired)]
        if acquired and len(acquired) == len(value):
            answers = {answer for site, answer in world.locks.facts if site in {a.site for a in acquired}}
            return answers.pop() if len(answers) == 1 else None
        return truthy(value)  # only literals are known: an attribute holding a function may hold None once a caller says so
