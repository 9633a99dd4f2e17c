"""The procedural task generator: ``T ~ D(n, b, η, δ, seed)``, validated when it is made.

    task = generate(7, "logic_error", noise=0.3, drift=0.15, seed=42)
    task.files["tests/test_pricing.py"]           # the buggy service and its tests
    task.fail_to_pass, task.fault                 # ["tests/test_cart.py::..."], "pagehouse/discounts.py::volume_bp"
    sample("hard", "ood", 7)                      # a preset's (n, η, δ) and a split's bug types and seed range

How a task is made (everything from one ``random.Random`` seeded with a string of all parameters,
iterating in fixed orders, so the same parameters give the same bytes on any machine):

1. the world: theme, package name, products, rates, thresholds (``blocks.draw_world``);
2. the defect: a site of bug type ``b`` (``bugs.sites``) whose module's dependency closure fits in
   ``n``; the kinds its downstream witnesses need are added when they fit, then the set grows to
   exactly ``n`` kinds, each addition importing something already there (a connected import DAG);
3. the files: every module's code; every kind's tests plus the witnesses of every site present, by
   one rule for all sites (the downstream witnesses whose kinds are there, else the direct one), so
   the chosen site's failing tests show the symptom in a caller when the service allows it, and
   which tests a suite holds never tells which site was chosen; the gold service, and the buggy
   one (``bugs.inject``);
4. held-out tests (``held_out``): the visible suite rebuilt from the same world with its entities in
   other roles (another product quoted at the break, another customer locked out, the other EU
   region), plus explicit witnesses at other sizes and thresholds for the sites whose tests take no
   role; only tests whose inputs differ from every visible test and whose imports reach the fault's
   module are kept. They go to ``tests/test_<kind>_other_inputs.py``, files that exist only in the
   task's ``test_patch.diff`` (never in ``files``/``repo/``), their ids in ``held_out`` (HELD_OUT);
5. validation, in process, in one session (``validate.check_states``: two runs of the buggy and two
   of the gold files, held-out tests included, and one run of the visible tests on the gold code of
   the faulty function instrumented to record the arguments they pass it): the tests that fail on
   the buggy files are FAIL_TO_PASS, the others PASS_TO_PASS, held-out ones included. The chosen
   site's witnesses must be among the failing tests; when more than 3 visible tests fail (a defect
   in a function many tests use), the other failing visible tests are dropped from the suite and it
   runs again. The 1-3 bound is on the visible FAIL_TO_PASS tests only: every held-out test the
   defect fails is held-out FAIL_TO_PASS (never seen, they need not single the defect out), and at
   least one must be. A held-out test that does not pass on the gold files in every run (a role the
   rotation broke) is dropped and the session runs again, so the report is of the files as kept;
6. the overfit (``held_out.overfit_source``): the fault's module with the faulty function
   dispatching on its arguments and its module's state (as plain data) to the gold code for exactly
   the keys the recording saw and to the buggy code otherwise: a lookup table of the visible tests.
   One more run proves it passes every visible test and fails a held-out FAIL_TO_PASS test; it is
   written to ``overfit.patch``. When it cannot fail one (the visible inputs already cover every
   input where the defect shows, as in a boundary both of whose edges are tested, or the function
   takes no input: a threshold, a snapshot, a default list), the task has no overfit: about 1 task
   in 6 (measured over 60 ids of every preset and split).
   The task keeps the ``CheckReport`` of the runs its lists were judged on (``task.validation``,
   exactly what ``validate.check(task)`` computes, the overfit's run included). A draft that is not
   valid, or that has no held-out FAIL_TO_PASS test, is not repaired: the generator draws again
   from the same random stream (another site or module set), so generation stays deterministic;
   after ``MAX_ATTEMPTS`` invalid drafts it raises ``GenerationError``.

The facts the noise and drift model needs (every function's calls and log templates) are read from
the generated code with ``ast``, not declared by hand.
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
import threading
import time
from dataclasses import dataclass

from env.families.procedural import blocks, bugs, held_out
from env.families.procedural.blocks import KINDS, Test, World, closure, ordered
from env.families.procedural.model import (
    BUG_TYPES,
    MAX_FILES,
    MIN_FILES,
    PRESETS,
    SPLIT_BASE,
    SPLIT_SIZE,
    SPLITS,
    BugType,
    CheckReport,
    FunctionInfo,
    GeneratedTask,
    split_seed,
)
from env.families.procedural.salt import ProceduralSalt
from env.families.procedural.validate import check_states, report, run_states
from env.patches import Files
from env.pyparse import parse

MAX_ATTEMPTS = 8
MAX_FAIL_TO_PASS = 3
RERUNS = 2
_LOG_LEVELS = ("debug", "info", "warning", "error", "exception", "critical")


class GenerationError(RuntimeError):
    """No valid task came out of the attempts (a defect of the generator, never of the caller)."""


# -- parameters -------------------------------------------------------------------------------------


def _check_parameters(n_files: int, bug: str, noise: float, drift: float, seed: int, difficulty: str | None, split: str | None) -> None:
    if isinstance(n_files, bool) or not isinstance(n_files, int) or not MIN_FILES <= n_files <= MAX_FILES:
        raise ValueError(f"n_files must be an integer within [{MIN_FILES}, {MAX_FILES}], got {n_files!r}")
    if bug not in BUG_TYPES:
        raise ValueError(f"unknown bug type {bug!r}; known: {', '.join(BUG_TYPES)}")
    for name, value in (("noise", noise), ("drift", drift)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0.0 <= value <= 1.0):
            raise ValueError(f"{name} must be a number within [0, 1], got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if difficulty is not None:
        if difficulty not in PRESETS:
            raise ValueError(f"unknown difficulty {difficulty!r}; known: {', '.join(PRESETS)}")
        preset = PRESETS[difficulty]
        for name, value, (low, high) in (("n_files", n_files, preset.files), ("noise", noise, preset.noise), ("drift", drift, preset.drift)):
            if not low <= value <= high:
                raise ValueError(f"difficulty {difficulty} needs {name} within [{low}, {high}], got {value!r}")
    if split is not None:
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
        if bug not in SPLITS[split]:
            raise ValueError(f"split {split} holds {', '.join(SPLITS[split])}, not {bug}")
        low = SPLIT_BASE[split]
        if not low <= seed < low + SPLIT_SIZE:
            raise ValueError(f"seed {seed} is outside the {split} split's range [{low}, {low + SPLIT_SIZE - 1}]")


def _key(n_files: int, bug: str, noise: float, drift: float, seed: int) -> str:
    # repr of a float is its shortest round-tripping form: the same text on every machine.
    return f"procedural|n={n_files}|bug={bug}|noise={float(noise)!r}|drift={float(drift)!r}|seed={seed}"


# -- plan: the defect and the modules ---------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    site: bugs.Site
    kinds: frozenset[str]


def _plan(rng: random.Random, n_files: int, bug: BugType, all_sites: list[bugs.Site]) -> Plan | None:
    options = [s for s in all_sites if s.bug == bug and len(closure([s.kind])) <= n_files]
    for site in rng.sample(options, len(options)):
        kinds = _grow(rng, site, n_files)
        if kinds is not None:
            return Plan(site, kinds)
    return None


def _grow(rng: random.Random, site: bugs.Site, n_files: int) -> frozenset[str] | None:
    """The site's module and its imports, its downstream witnesses' kinds when they fit, then more, to ``n_files``."""
    chosen = set(closure([site.kind]))
    downstream = [w for w in site.witnesses if not w.direct]
    for witness in rng.sample(downstream, len(downstream)):
        extra = closure(witness.needs) - chosen
        if len(chosen) + len(extra) <= n_files:
            chosen |= extra
    while len(chosen) < n_files:
        room = n_files - len(chosen)
        # Each addition imports something already chosen, so the import graph stays connected.
        fits = [k for k in blocks.ORDER if k not in chosen and closure([k]) & chosen and len(closure([k]) - chosen) <= room]
        if not fits:
            return None
        chosen |= closure([fits[rng.randrange(len(fits))]])
    return frozenset(chosen)


# -- assembly: the files ----------------------------------------------------------------------------


@dataclass
class Draft:
    world: World
    plan: Plan
    tests: dict[str, list[Test]]  # kind -> its test file's tests
    expected: list[str]  # test ids of the chosen site's witnesses
    primary: bugs.Witness  # the witness whose symptom is the problem statement
    gold: Files
    buggy: Files

    def test_id(self, kind: str, test: Test) -> str:
        return f"tests/test_{kind}.py::{test.name}"

    def render(self, dropped: set[str]) -> tuple[Files, Files]:
        """(buggy, gold) files without the ``dropped`` test ids."""
        tests = {}
        for kind in ordered(self.plan.kinds):
            kept = [t for t in self.tests[kind] if self.test_id(kind, t) not in dropped]
            tests[f"tests/test_{kind}.py"] = blocks.test_file(self.world, kind, kept)
        return {**self.buggy, **tests}, {**self.gold, **tests}


def _assemble(w: World, plan: Plan, all_sites: list[bugs.Site]) -> Draft:
    kinds = plan.kinds
    present = ordered(kinds)
    modules = {k: KINDS[k].build(w, kinds) for k in present}
    tests: dict[str, dict[str, Test]] = {k: {t.name: t for t in modules[k].tests} for k in present}
    for s in all_sites:
        if s.kind in kinds:
            for wt in s.carried(kinds):
                if tests[wt.kind].setdefault(wt.test.name, wt.test) != wt.test:
                    raise GenerationError(f"two different tests named {wt.test.name} in tests/test_{wt.kind}.py")
    strays = sorted({u for k in present for t in tests[k].values() for u in t.uses} - kinds)
    if strays:
        raise GenerationError(f"tests import modules the service does not have: {', '.join(strays)}")
    chosen = plan.site
    included = chosen.carried(kinds)
    pkg = w.pkg
    gold: Files = {f"{pkg}/__init__.py": f'"""{pkg}: the back end of an online {w.theme.shop}."""\n', "README.md": blocks.readme(w, present)}
    for k in present:
        gold[f"{pkg}/{k}.py"] = modules[k].source
    buggy = dict(gold)
    path = f"{pkg}/{chosen.kind}.py"
    buggy[path] = bugs.inject(gold[path], chosen)
    primary = next((wt for wt in included if not wt.direct), included[0])
    return Draft(
        world=w,
        plan=plan,
        tests={k: [tests[k][name] for name in sorted(tests[k])] for k in present},
        expected=sorted(f"tests/test_{wt.kind}.py::{wt.test.name}" for wt in included),
        primary=primary,
        gold=gold,
        buggy=buggy,
    )


# -- facts: every function, what it calls, what it logs ----------------------------------------------

ClassRef = tuple[str, str]  # (file, class name)


class _Module:
    """What one module defines and imports, for resolving the calls its functions make."""

    def __init__(self, path: str, tree: ast.Module, pkg: str):
        self.path, self.tree, self.pkg = path, tree, pkg
        self.functions: dict[str, ast.FunctionDef] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.aliases: dict[str, str] = {}  # local name -> module file
        self.imported: dict[str, tuple[str, str]] = {}  # local name -> (module file, name)
        self.globals: dict[str, ClassRef] = {}
        self.attributes: dict[str, dict[str, ClassRef]] = {}  # class -> self.attr -> class of its value
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        self.functions[f"{node.name}.{item.name}"] = item
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    local = alias.asname or alias.name
                    if node.module == pkg:
                        self.aliases[local] = f"{pkg}/{alias.name}.py"
                    elif node.module.startswith(pkg + "."):
                        self.imported[local] = (node.module.replace(".", "/") + ".py", alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith(pkg + ".") and alias.asname:
                        self.aliases[alias.asname] = alias.name.replace(".", "/") + ".py"


class _Facts:
    def __init__(self, files: Files, pkg: str):
        self.modules = {
            path: _Module(path, parse(text), pkg)  # type: ignore[arg-type]
            for path, text in sorted(files.items())
            if path.startswith(pkg + "/") and path.endswith(".py")
        }
        for module in self.modules.values():
            for node in module.tree.body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    found = self.type_of(module, node.value, {}, None)
                    if found:
                        module.globals[node.targets[0].id] = found
            for name in module.classes:
                init = module.functions.get(f"{name}.__init__")
                attrs: dict[str, ClassRef] = {}
                if init is not None:
                    local = self.locals(module, init, name)
                    for node in ast.walk(init):
                        if isinstance(node, ast.Assign) and len(node.targets) == 1:
                            target = node.targets[0]
                            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                                found = self.type_of(module, node.value, local, name)
                                if found:
                                    attrs[target.attr] = found
                module.attributes[name] = attrs

    def class_ref(self, module: _Module, expr: ast.expr | None) -> ClassRef | None:
        """The project class an annotation or a callee names."""
        if isinstance(expr, ast.Name):
            if expr.id in module.classes:
                return module.path, expr.id
            if expr.id in module.imported:
                path, name = module.imported[expr.id]
                if path in self.modules and name in self.modules[path].classes:
                    return path, name
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in module.aliases:
            path = module.aliases[expr.value.id]
            if path in self.modules and expr.attr in self.modules[path].classes:
                return path, expr.attr
        elif isinstance(expr, ast.BinOp):  # X | None
            return self.class_ref(module, expr.left) or self.class_ref(module, expr.right)
        return None

    def target(self, module: _Module, func: ast.expr, local: dict[str, ClassRef], cls: str | None) -> str | None:
        """file::name of the project function a call's callee is, if it is one."""
        if isinstance(func, ast.Name):
            if func.id in module.functions:
                return f"{module.path}::{func.id}"
            if func.id in module.imported:
                path, name = module.imported[func.id]
                if path in self.modules and name in self.modules[path].functions:
                    return f"{path}::{name}"
        if isinstance(func, ast.Attribute):
            value = func.value
            if isinstance(value, ast.Name) and value.id in module.aliases:
                path = module.aliases[value.id]
                if path in self.modules and func.attr in self.modules[path].functions:
                    return f"{path}::{func.attr}"
            elif isinstance(value, ast.Name) and value.id == "self" and cls is not None and f"{cls}.{func.attr}" in module.functions:
                return f"{module.path}::{cls}.{func.attr}"
            else:
                owner = self.type_of(module, value, local, cls)
                if owner and f"{owner[1]}.{func.attr}" in self.modules[owner[0]].functions:
                    return f"{owner[0]}::{owner[1]}.{func.attr}"
        made = self.class_ref(module, func)
        if made and f"{made[1]}.__init__" in self.modules[made[0]].functions:
            return f"{made[0]}::{made[1]}.__init__"
        return None

    def type_of(self, module: _Module, expr: ast.expr, local: dict[str, ClassRef], cls: str | None) -> ClassRef | None:
        """The project class of an expression's value, when the code says it."""
        if isinstance(expr, ast.Name):
            return local.get(expr.id) or module.globals.get(expr.id)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self" and cls is not None:
            return module.attributes.get(cls, {}).get(expr.attr)
        if isinstance(expr, ast.Call):
            made = self.class_ref(module, expr.func)
            if made:
                return made
            callee = self.target(module, expr.func, local, cls)
            if callee:
                path, name = callee.split("::")
                node = self.modules[path].functions[name]
                return self.class_ref(self.modules[path], node.returns)
        return None

    def locals(self, module: _Module, node: ast.FunctionDef, cls: str | None) -> dict[str, ClassRef]:
        found: dict[str, ClassRef] = {}
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            ref = self.class_ref(module, arg.annotation)
            if ref:
                found[arg.arg] = ref
        assigns = sorted((n for n in ast.walk(node) if isinstance(n, ast.Assign)), key=lambda n: (n.lineno, n.col_offset))
        for assign in assigns:
            if len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name):
                ref = self.type_of(module, assign.value, found, cls)
                if ref:
                    found[assign.targets[0].id] = ref
        return found

    def infos(self) -> list[FunctionInfo]:
        out = []
        for path, module in self.modules.items():
            for name, node in sorted(module.functions.items(), key=lambda item: item[1].lineno):
                cls = name.split(".")[0] if "." in name else None
                local = self.locals(module, node, cls)
                calls: list[str] = []
                logs: list[str] = []
                for call in sorted((n for n in ast.walk(node) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset)):
                    func = call.func
                    if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "log"
                            and func.attr in _LOG_LEVELS and call.args and isinstance(call.args[0], ast.Constant)
                            and isinstance(call.args[0].value, str)):
                        if call.args[0].value not in logs:
                            logs.append(call.args[0].value)
                        continue
                    callee = self.target(module, func, local, cls)
                    if callee and callee not in calls and callee != f"{path}::{name}":
                        calls.append(callee)
                out.append(FunctionInfo(file=path, name=name, calls=calls, logs=logs))
        return out


def functions(files: Files, pkg: str) -> list[FunctionInfo]:
    """Every function and method of the package in ``files``: the project functions it calls, its log templates."""
    return _Facts(files, pkg).infos()


# -- generation -----------------------------------------------------------------------------------


def _statement(draft: Draft) -> str:
    w = draft.world
    modules = len(draft.plan.kinds)
    return (
        f"{draft.primary.symptom}\n\n"
        f"This is the `{w.pkg}` service, the back end of our online {w.theme.shop} ({modules} modules in `{w.pkg}/`, tests in "
        "`tests/`). Please find the cause and fix it without breaking anything else."
    )


@dataclass
class Checked:
    """A draft as validated: its lists (held-out ids included), the report, the held-out files and the overfit."""

    draft: Draft
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    report: CheckReport
    held_out: list[str]
    held_out_files: Files
    overfit: Files


def _attempt(
    rng: random.Random, w: World, all_sites: list[bugs.Site], other_sites: list[bugs.Site], n_files: int, bug: BugType, seed_text: str,
) -> Checked:
    """One draft and its check, ``draft`` holding the files as kept."""
    plan = _plan(rng, n_files, bug, all_sites)
    if plan is None:
        raise _Redraw(f"no set of {n_files} modules holds a {bug} site")
    draft = _assemble(w, plan, all_sites)
    held_tests = held_out.held_out_tests(w, plan.kinds, draft.tests, other_sites, plan.site.kind, seed_text)
    fault_path, function = f"{w.pkg}/{plan.site.kind}.py", plan.site.function
    dropped: set[str] = set()  # visible tests left out: a defect many tests show
    # Held-out tests left out: those that do not pass on the gold files every time (a role the rotation broke), and
    # FAIL_TO_PASS ones the lookup table of the visible calls passes (they call the function only as the visible
    # tests do, so a table of the visible arguments would earn their credit).
    unsound: set[str] = set()
    for _ in range(8):
        buggy_files, gold_files = draft.render(dropped)
        kept = {k: [t for t in tests if held_out.held_out_id(k, t) not in unsound] for k, tests in held_tests.items()}
        held_files = {held_out.held_out_file(k): blocks.test_file(w, k, tests) for k, tests in kept.items() if tests}
        held = sorted(held_out.held_out_id(k, t) for k, tests in kept.items() for t in tests)
        visible = sorted(f"tests/test_{kind}.py::{t.name}" for kind, tests in draft.tests.items() for t in tests)
        visible = [test for test in visible if test not in dropped]
        # One session: the buggy and gold files twice each (held-out tests included), and the gold code of the faulty
        # function recording the arguments the visible tests (only they) pass it, for the overfit's table.
        token = f"{plan.site.id}|{id(draft)}|{threading.get_ident()}|{time.monotonic_ns()}"
        # Only the test files that can reach the fault's module: the others never call the function.
        reach = {f"tests/test_{k}.py" for k, tests in draft.tests.items() if plan.site.kind in closure({k, *(u for t in tests for u in t.uses)})}
        recording = {p: text for p, text in gold_files.items() if not p.startswith("tests/") or p in reach}
        recording[fault_path] = held_out.recording_source(buggy_files[fault_path], gold_files[fault_path], function, token)
        try:
            first, extra = check_states(buggy_files, gold_files, draft.expected, [t for t in visible if t not in draft.expected], RERUNS,
                                        held_files, held, extra={"recording": recording})
        finally:
            keys = held_out.take(token)
        if any(status != "PASSED" for status in extra["recording"].values()):
            raise _Redraw(f"{plan.site.id}: the visible tests do not all pass with the recording in place")
        failing = sorted(test for test in visible if first.buggy[0].get(test) in ("FAILED", "ERROR"))
        missing = [test for test in draft.expected if test not in failing]
        if missing:
            raise _Redraw(f"{plan.site.id}: the defect's tests pass on the buggy files: {', '.join(missing)}")
        if len(failing) > MAX_FAIL_TO_PASS:
            keep = (draft.expected + [t for t in failing if t not in draft.expected])[:MAX_FAIL_TO_PASS]
            dropped |= set(failing) - set(keep)
            continue
        runs = first.buggy + first.gold
        bad = {test for test in held if any(run.get(test) != runs[0].get(test) for run in first.buggy)
               or any(run.get(test) != "PASSED" for run in first.gold)}
        if bad:
            unsound |= bad
            continue  # judged again without them, so the report is of the files as kept
        held_failing = [test for test in held if first.buggy[0].get(test) in ("FAILED", "ERROR")]
        if not held_failing:
            raise _Redraw(f"{plan.site.id}: no held-out test fails on the defect")
        fail_to_pass = sorted(failing + held_failing)
        pass_to_pass = sorted(set(first.buggy[0]) - set(fail_to_pass))
        judged = report(fail_to_pass, pass_to_pass, first.buggy, first.gold, first.seconds, held)
        overfit = {fault_path: held_out.overfit_source(buggy_files[fault_path], gold_files[fault_path], function, keys)}
        started = time.monotonic()
        fitted = run_states({"overfit": {**buggy_files, **overfit, **held_files}})["overfit"]
        tabled = {test for test in held_failing if fitted.get(test) == "PASSED"}
        if tabled and tabled != set(held_failing):
            unsound |= tabled
            continue  # judged again without them: every held-out FAIL_TO_PASS test then defeats the table
        with_overfit = report(fail_to_pass, pass_to_pass, first.buggy, first.gold, first.seconds + time.monotonic() - started, held, fitted)
        if with_overfit.ok or not judged.ok:
            judged = with_overfit
        else:
            # The table passes every held-out test: the visible calls' keys are every key the function is called with
            # where the defect shows (no argument, no state of its own), so the table is the fix itself (documented).
            overfit = {}
        draft.buggy, draft.gold = buggy_files, gold_files
        return Checked(draft, fail_to_pass, pass_to_pass, judged, held, held_files, overfit)
    raise _Redraw(f"{plan.site.id}: more than {MAX_FAIL_TO_PASS} tests keep failing, or held-out tests keep failing on the gold files "
                   "or passing on the lookup table of the visible calls")


class _Redraw(Exception):
    pass


def _generate(
    n_files: int, bug: BugType, noise: float, drift: float, seed: int, difficulty: str | None, split: str | None, salt: ProceduralSalt,
) -> tuple[GeneratedTask, list[str]]:
    """The task, and why earlier attempts were drawn again (empty when the first draft was valid)."""
    _check_parameters(n_files, bug, noise, drift, seed, difficulty, split)
    key = _key(n_files, bug, noise, drift, seed)
    seed_text = salt.seed_text(key)  # the key itself when public: the same task everywhere
    rng = random.Random(seed_text)
    world = blocks.draw_world(rng)
    all_sites = bugs.sites(world)
    other_sites = bugs.sites(held_out.rotate(world))  # the held-out tests' witnesses: the same sites, other inputs
    history: list[str] = []
    for _ in range(MAX_ATTEMPTS):
        try:
            made = _attempt(rng, world, all_sites, other_sites, n_files, bug, seed_text)
        except _Redraw as why:
            history.append(str(why))
            continue
        draft, fail_to_pass, pass_to_pass, checked = made.draft, made.fail_to_pass, made.pass_to_pass, made.report
        if not checked.ok:
            history.append(f"{draft.plan.site.id}: " + "; ".join(checked.problems[:3]))
            continue
        site = draft.plan.site
        fault_file = f"{world.pkg}/{site.kind}.py"
        task = GeneratedTask(
            id="proc-" + hashlib.sha256(seed_text.encode()).hexdigest()[:12],
            name=f"{site.title} ({world.pkg}, {n_files} modules)",
            seed=seed,
            n_files=n_files,
            bug=bug,
            noise=float(noise),
            drift=float(drift),
            difficulty=difficulty,
            split=split,
            package=world.pkg,
            files=draft.buggy,
            gold_files=draft.gold,
            fail_to_pass=fail_to_pass,
            pass_to_pass=pass_to_pass,
            held_out=made.held_out,
            held_out_files=made.held_out_files,
            overfit=made.overfit,
            fault=f"{fault_file}::{site.function}",
            functions=functions(draft.buggy, world.pkg),
            problem_statement=_statement(draft),
            environment={},
            max_steps=15 + 3 * n_files,
            tags=["procedural", bug.replace("_", "-")],
            validation=checked,
        )
        return task, history
    raise GenerationError(f"no valid task for {key} ({salt.record}) after {MAX_ATTEMPTS} attempts: " + " | ".join(history))


def generate(
    n_files: int, bug: BugType, noise: float, drift: float, seed: int, difficulty: str | None = None, split: str | None = None,
    salt: ProceduralSalt | None = None,
) -> GeneratedTask:
    """A validated task of ``n_files`` service modules with one ``bug``; ``noise`` and ``drift`` are carried. ``salt``:
    None reads the setting (ENV_PROCEDURAL_SALT), so every caller makes the same task of the same parameters."""
    return _generate(n_files, bug, noise, drift, seed, difficulty, split, salt or ProceduralSalt.from_env())[0]


def sample(difficulty: str, split: str, index: int, salt: ProceduralSalt | None = None) -> GeneratedTask:
    """The ``index``-th task of a split at a difficulty: (n, η, δ) from the preset, the bug from the split; with a salt
    (None: the setting's), these draws too derive from the salt and the id."""
    if difficulty not in PRESETS:
        raise ValueError(f"unknown difficulty {difficulty!r}; known: {', '.join(PRESETS)}")
    salt = salt or ProceduralSalt.from_env()
    seed = split_seed(split, index)
    preset = PRESETS[difficulty]
    rng = random.Random(salt.seed_text(f"procedural-sample|{difficulty}|{split}|{index}"))
    n_files = rng.randint(*preset.files)
    noise = round(rng.uniform(*preset.noise), 3)
    drift = round(rng.uniform(*preset.drift), 3)
    bug = SPLITS[split][rng.randrange(len(SPLITS[split]))]
    return generate(n_files, bug, noise, drift, seed, difficulty, split, salt)


def digest(task: GeneratedTask) -> str:
    """sha256 of the task's files (buggy, gold, held-out tests, overfit), for comparing generations byte for byte."""
    data = json.dumps({"files": task.files, "gold": task.gold_files, "held_out": task.held_out_files, "overfit": task.overfit},
                      sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def import_graph(task: GeneratedTask) -> dict[str, list[str]]:
    """Each service module (file) and the service modules it imports."""
    graph: dict[str, list[str]] = {}
    for path in task.source_files:
        module = _Module(path, parse(task.files[path]), task.package)  # type: ignore[arg-type]
        graph[path] = sorted(set(module.aliases.values()) | {p for p, _ in module.imported.values()})
    return graph


def connected(graph: dict[str, list[str]]) -> bool:
    """Whether the undirected version of ``graph`` is one component."""
    if not graph:
        return False
    links: dict[str, set[str]] = {node: set() for node in graph}
    for node, targets in graph.items():
        for target in targets:
            if target in links:
                links[node].add(target)
                links[target].add(node)
    seen, stack = set(), [min(graph)]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(links[node] - seen)
    return len(seen) == len(graph)

