"""The house's rules, read from the code: no import circles in env/, and nothing private imported from another
package (an underscore name is its own package's business). Imports inside functions count too."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def parsed(source: str) -> ast.Module:
    """Each distinct source parsed once per run: every check below walks the same files (and only reads the trees)."""
    return ast.parse(source)


def modules() -> dict[str, Path]:
    found = {}
    for path in (ROOT / "env").rglob("*.py"):
        rel = path.relative_to(ROOT)
        name = ".".join(rel.with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path], typing_too: bool = False) -> list[tuple[str, str]]:
    """(module imported, name taken from it or "") for every import statement in the file (``typing_too``: those under
    ``if TYPE_CHECKING:`` as well)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    tree = parsed(path.read_text(encoding="utf-8"))
    # ``if TYPE_CHECKING:`` imports never run: a name for an annotation is no import circle
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and ast.unparse(block.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
                   for n in ast.walk(block)} if not typing_too else set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((full, "") if full in known else (base, alias.name))
    return found


def owner(module: str, known: dict[str, Path]) -> str | None:
    while module and module not in known:
        module = module.rpartition(".")[0]
    return module or None


def graph(typing_too: bool = False) -> dict[str, set[str]]:
    known = modules()
    edges: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for module, _ in imports(name, path, known, typing_too):
            target = owner(module, known)
            if target and target != name:
                edges[name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circles_in_env():
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# Packages whose modules form no circle even through ``if TYPE_CHECKING:`` imports: a module that needs, for an
# annotation, a module importing it is missing a shared type (a protocol, as env/verdict/host/remote_run.py's
# RemoteRun, or a module of the type's own, as env/tools/reports.py).
NO_CIRCLE_EVEN_FOR_ANNOTATIONS = ("env.sandbox.inside", "env.verdict.host", "env.tools")


def circles_within(edges: dict[str, set[str]], package: str) -> list[list[str]]:
    def inside(module: str) -> bool:
        return module == package or module.startswith(package + ".")

    return cycles({name: {t for t in targets if inside(t)} for name, targets in edges.items() if inside(name)})


def test_no_import_circles_within_the_split_s_halves_and_the_tools_even_for_annotations():
    edges = graph(typing_too=True)
    assert {package: circles_within(edges, package) for package in NO_CIRCLE_EVEN_FOR_ANNOTATIONS} == dict.fromkeys(NO_CIRCLE_EVEN_FOR_ANNOTATIONS, [])


def test_an_annotation_s_import_counts_for_the_circles_within_a_package(tmp_path):
    # a needs c for an annotation only, and c imports a inside a function: a circle for this check, none at run time
    (tmp_path / "a.py").write_text("from typing import TYPE_CHECKING\nfrom p.b import B\nif TYPE_CHECKING:\n    from p.c import C\n")
    (tmp_path / "b.py").write_text("import os\n")
    (tmp_path / "c.py").write_text("def f():\n    from p.a import A\n")
    known = {f"p.{n}": tmp_path / f"{n}.py" for n in "abc"}

    def edges(typing_too: bool) -> dict[str, set[str]]:
        return {name: {m for m, _ in imports(name, path, known, typing_too)} & set(known) for name, path in known.items()}

    assert circles_within(edges(typing_too=True), "p") == [["p.a", "p.c"]]
    assert circles_within(edges(typing_too=False), "p") == [] and circles_within(edges(typing_too=True), "q") == []


def test_nothing_private_is_imported_from_another_package():
    known = modules()
    crossing = []
    for name, path in known.items():
        for module, taken in imports(name, path, known):
            target = owner(module, known)
            if not (taken.startswith("_") and not taken.startswith("__")) or target is None:
                continue
            if target.rpartition(".")[0] != name.rpartition(".")[0]:
                crossing.append(f"{name} imports {taken} from {target}")
    assert crossing == []


# The layers, lowest first: a module imports only from its own layer or below. What a layer is for:
LAYERS = (
    # vocabulary: wire models, the episode contract, registries, rewards and shared grading, patches, the project-task model
    ("env.settings", "env.models", "env.wire", "env.contract", "env.registry", "env.secret", "env.scratch", "env.config",
     "env.pyparse", "env.race_review", "env.patches", "env.test_source", "env.project", "env.rewards", "env.graders", "env.held_out", "env.tool_schemas", "env.openenv_imports", "env.infra", "env.timing", "env.process_state"),
    # processes: the sandbox, the debugger driving it, workspaces on disk
    ("env.sandbox", "env.debugger", "env.workspace"),
    # the repository-style test verdict
    ("env.verdict",),
    # what episodes are built from: tools, interface profiles, the shared runtime
    ("env.tools", "env.interface", "env.runtime"),
    # the task families, each a slice
    ("env.families",),
    # what uses families: the listing, authoring tools, agents
    ("env.listing", "env.authoring", "env.agents"),
    # the surfaces: the server, evaluation, validation, the demo, the client
    ("env.server", "env.eval", "env.validation", "env.demo", "env.client"),
)  # fmt: skip


def wire_fields(module: str) -> bool:
    """The families' wire fields (env.families.fields and each env.families.<name>.fields): vocabulary like env.wire,
    which composes them, though each lives in its family's folder (issue 52, item 1). Pydantic only
    (test_the_families_wire_fields_import_nothing_of_env_but_each_other)."""
    parts = module.split(".")
    return parts[:2] == ["env", "families"] and parts[-1] == "fields" and len(parts) in (3, 4)


def layer(module: str) -> int:
    if wire_fields(module):
        return 0
    for rank, members in enumerate(LAYERS):
        if any(module == m or module.startswith(m + ".") for m in members):
            return rank
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/test_architecture.py")


def test_no_import_runs_upward_from_a_lower_layer():
    upward = []
    for name, targets in graph().items():
        if name == "env":
            continue
        upward += [f"{name} (layer {layer(name)}) imports {t} (layer {layer(t)})" for t in sorted(targets) if t != "env" and layer(t) > layer(name)]
    assert upward == []


def test_the_layer_check_finds_an_upward_import():
    assert layer("env.sandbox.runner") < layer("env.families.classic.judge") < layer("env.server.app")


# A family's differences live in its folder under env/families/: everything else asks the family through the
# catalog (``FAMILIES[task.family].validate(...)``), never imports one family nor tests which model a task is.
# The one exception, named: the red-team tests import the classic family's lookup_table and noop_variants from
# env.authoring.degenerate, where they used to live.
FAMILY_IMPORTS_ALLOWED = {("env.authoring.degenerate", "env.families.classic.policies")}


def family_folders() -> list[str]:
    return sorted(p.parent.name for p in (ROOT / "env" / "families").glob("*/family.py"))


def task_models() -> set[str]:
    """The task model of every family: ``X`` in ``class ...(Family[X])`` in env/families/<name>/family.py."""
    models = set()
    for name in family_folders():
        for node in ast.walk(parsed((ROOT / "env" / "families" / name / "family.py").read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    if isinstance(base, ast.Subscript) and ast.unparse(base.value) == "Family":
                        models.add(ast.unparse(base.slice))
    return models


def family_crossings(name: str, source: str, families: list[str], models: set[str]) -> list[str]:
    """Imports of a particular family, isinstance checks against a task model and comparisons with a family's name
    in one module's source."""
    found = []
    packages = tuple(f"env.families.{f}" for f in families)
    for node in ast.walk(parsed(source)):
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        for module in modules:
            if any(module == p or module.startswith(p + ".") for p in packages) and (name, module) not in FAMILY_IMPORTS_ALLOWED:
                found.append(f"{name}:{node.lineno} imports {module}")
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("isinstance", "issubclass") and len(node.args) == 2:
            named = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)} | {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
            if named & models:
                found.append(f"{name}:{node.lineno} {ast.unparse(node)}")
        if isinstance(node, ast.Compare) and "family" in ast.unparse(node):
            if {n.value for n in ast.walk(node) if isinstance(n, ast.Constant)} & set(families):
                found.append(f"{name}:{node.lineno} {ast.unparse(node)}")
    return found


def outside_the_families() -> dict[str, Path]:
    found = {name: path for name, path in modules().items() if not (name + ".").startswith("env.families.")}
    found.update({path.stem: path for path in ROOT.glob("*.py")})  # validator.py, inference.py, app.py
    return found


def test_nothing_outside_the_families_imports_one_family_tests_a_task_s_model_or_compares_a_family_name():
    families, models = family_folders(), task_models()
    assert families == ["classic", "procedural", "race", "repo"] and models == {"TaskSpec", "RepoTask", "ProceduralTask"}
    found = []
    for name, path in outside_the_families().items():
        found += family_crossings(name, path.read_text(encoding="utf-8"), families, models)
    assert found == []


def test_the_family_check_finds_an_import_and_an_isinstance():
    source = (
        "from env.families.repo.family import REPO\nimport env.families.classic.task\nfrom env.families.registry import FAMILIES\n"
        "from env.families.base import Family\nif isinstance(task, (RepoTask, str)): pass\nif isinstance(task, dict): pass\n"
        "if task.family == 'repo': pass\nif task.family == name: pass\n"
    )
    assert family_crossings("env.x", source, ["classic", "repo"], {"RepoTask"}) == [
        "env.x:1 imports env.families.repo.family", "env.x:2 imports env.families.classic.task", "env.x:5 isinstance(task, (RepoTask, str))",
        "env.x:7 task.family == 'repo'",
    ]


# Sizes: a module is one job (at most 800 lines) and a function fits in a reading (at most 150 lines). The only
# exceptions are data tables, named here.
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 150
LONG_FUNCTIONS_ALLOWED = {
    # tables of mutation sites: one entry per site, data rather than logic
    "env/families/procedural/bugs/logic_error.py:sites",
    "env/families/procedural/bugs/dependency_error.py:sites",
    "env/families/procedural/bugs/state_corruption.py:sites",
}


def oversized() -> list[str]:
    found = []
    for path in sorted((ROOT / "env").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > MAX_MODULE_LINES:
            found.append(f"{rel}: {len(text.splitlines())} lines")
        for node in ast.walk(parsed(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES and f"{rel}:{node.name}" not in LONG_FUNCTIONS_ALLOWED:
                    found.append(f"{rel}:{node.name}: {length} lines")
    return found


def test_no_module_over_800_lines_and_no_function_over_150():
    assert oversized() == []


def test_every_allowed_long_function_still_exists_and_is_long():
    """The allow-list shrinks as tables are cut down: an entry that no longer applies goes."""
    for entry in LONG_FUNCTIONS_ALLOWED:
        rel, _, name = entry.partition(":")
        lengths = [(n.end_lineno or n.lineno) - n.lineno + 1 for n in ast.walk(parsed((ROOT / rel).read_text(encoding="utf-8")))
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
        assert any(length > MAX_FUNCTION_LINES for length in lengths), entry


def boundary_imports(folder: Path, allowed: set[str]) -> list[str]:
    """Absolute imports in ``folder`` of anything but the standard library and ``allowed``."""
    import sys

    found = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(parsed(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in allowed:
                    found.append(f"{path.relative_to(ROOT)}: {name}")
    return found


def test_the_sandbox_inside_and_the_test_host_import_only_the_standard_library_and_themselves():
    """env/sandbox/inside runs in the sandbox child and env/verdict/host in the trusted test host: neither can import
    ``env`` (each is loaded by path as a package of its own, its files reaching one another by relative import)."""
    assert boundary_imports(ROOT / "env" / "sandbox" / "inside", {"__future__", "_adbg_tracer", "_pytest", "pytest", "coverage"}) == []
    assert boundary_imports(ROOT / "env" / "verdict" / "host", {"__future__", "_pytest", "pytest", "pluggy"}) == []



# The split's two halves are packages loaded by path, each file one job reaching its siblings by relative import (the
# sandbox's also load some by path, ``sibling``): what a file takes from a sibling is that sibling's public surface.
# An underscore name is its own file's business, so a file can change its insides without breaking another.
SURFACED = ("env/sandbox/inside", "env/verdict/host")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_crossings(name: str, source: str, package: str) -> list[str]:
    """The underscore names module ``name`` of ``package`` takes from a sibling: ``from .x import _y``, ``from
    package.x import _y``, ``from . import _y``, and ``x._y`` where ``x`` is a sibling it imported or loaded by path."""
    tree = parsed(source)
    found: list[tuple[int, str]] = []
    siblings: set[str] = set()  # the names the file holds a sibling module (or the package's own namespace) under
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            absolute = node.level == 0 and (node.module == package or (node.module or "").startswith(package + "."))
            if node.level != 1 and not absolute:
                continue
            base = (node.module or "").removeprefix(package).lstrip(".") if absolute else node.module or ""
            for alias in node.names:
                if _private(alias.name):
                    found.append((node.lineno, f"{name}:{node.lineno} imports {alias.name} from {base or 'the package'}"))
                elif not base:  # from . import framing, LAYERS: a sibling module, or a module the package loaded
                    siblings.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            siblings.update(a.asname for a in node.names if a.asname and a.name.startswith(package + "."))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            called = node.value.func
            if (called.id if isinstance(called, ast.Name) else called.attr if isinstance(called, ast.Attribute) else "").endswith("sibling"):
                siblings.update(t.id for t in node.targets if isinstance(t, ast.Name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = ast.unparse(node.value)
            if owner in siblings or owner.startswith(package + "."):
                found.append((node.lineno, f"{name}:{node.lineno} reads {owner}.{node.attr}"))
    return [message for _, message in sorted(found)]


def test_no_private_name_crosses_a_file_of_the_split_s_halves():
    found = []
    for folder in SURFACED:
        for path in sorted((ROOT / folder).glob("*.py")):
            found += private_crossings(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8"), folder.replace("/", "."))
    assert found == []


def test_the_surface_check_finds_a_private_name_taken_from_a_sibling():
    source = (
        "from .ops import _pull, repo_ops\nfrom env.sandbox.inside.values import _chain as chain\nfrom . import framing, _FLAG\n"
        "import env.sandbox.inside.printed as printed\nHAMMER = sibling('_adbg_hammer', 'hammer.py')\nfrom os import _exit\n"
        "framing._recv(); printed._output(); HAMMER._starts(); framing.send(); self._own(); env.sandbox.inside.encoder._quote\n"
    )
    assert private_crossings("m", source, "env.sandbox.inside") == [
        "m:1 imports _pull from ops", "m:2 imports _chain from values", "m:3 imports _FLAG from the package",
        "m:7 reads HAMMER._starts", "m:7 reads env.sandbox.inside.encoder._quote", "m:7 reads framing._recv",
        "m:7 reads printed._output",
    ]

def test_names_mean_one_thing():
    """A registry is env.registry.Registry and nothing else; the tasks a server serves are a catalog; what /tasks
    says of a task is a listing; the authoring commands are not a second thing called "tasks"."""
    registries, catalogues = [], []
    for path in sorted((ROOT / "env").rglob("*.py")):
        for node in ast.walk(parsed(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Registry") and node.name != "Registry":
                registries.append(f"{path.relative_to(ROOT)}: class {node.name}")
            if isinstance(node, ast.Name | ast.arg | ast.Attribute):
                name = node.id if isinstance(node, ast.Name) else node.arg if isinstance(node, ast.arg) else node.attr
                if "catalogue" in name.lower():
                    catalogues.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    assert registries == [] and catalogues == []
    assert not (ROOT / "env" / "tasks").exists() and not (ROOT / "env" / "catalogue.py").exists()


def test_docs_architecture_names_every_package_and_top_level_module():
    """docs/architecture.md's tree names each package of env/ (as `name/`, under its parent where it nests) and each
    module directly in env/ (as `name.py`)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    tree = text.split("```", 2)[1]
    packages = sorted(p.parent.relative_to(ROOT / "env").as_posix() for p in (ROOT / "env").rglob("__init__.py") if p.parent != ROOT / "env")
    unnamed = [p for p in packages if f"{p}/" not in tree and f" {p.rpartition('/')[2]}/" not in tree]
    unnamed += [p.name for p in (ROOT / "env").glob("*.py") if p.name != "__init__.py" and p.name not in tree]
    assert unnamed == []



def package_graph(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph folded into env's packages (env.server, env.demo ...): an edge where any module of one imports
    any module of another."""

    def package(module: str) -> str:
        return "env.wire" if wire_fields(module) else ".".join(module.split(".")[:2])

    folded: dict[str, set[str]] = {}
    for source, targets in edges.items():
        folded.setdefault(package(source), set())
        for target in targets:
            if package(target) != package(source):
                folded[package(source)].add(package(target))
                folded.setdefault(package(target), set())
    return folded


def test_no_import_circles_between_env_s_packages():
    # the demo is composed by its callers (app.py, the server's /web), so it imports neither the server nor the harness
    assert cycles(package_graph(graph())) == []
    assert cycles(package_graph({"env.a.x": {"env.b.y"}, "env.b.y": set(), "env.b.z": {"env.a.w"}, "env.a.w": set()})) == [["env.a", "env.b"]]


# Configuration is one table (env/settings.py): each variable is read at one place, a typed model's field declared
# with ``setting(NAME)`` (``settings.load`` fills it) or one call of a reader, and no field is mapped to its variable
# by hand (the old ``from_env``: ``{"wall_seconds": "SANDBOX_WALL_SECONDS", ...}`` beside ``default(...)``). What needs
# a value asks the model or the function that reads it. Not here: env/sandbox/inside and env/verdict/host, which
# cannot import the settings (env/settings.py says why), and messages that name a variable for a person to set.
SETTING_READERS = {"raw", "value", "text", "integer", "switch", "default", "user_cache", "setting"}
# The one exception, named: the server's command line writes its flags into these variables (HOST, PORT, ENV_WORKERS,
# ENV_TASK_DIRS), shows their defaults in --help and checks the port before its slow imports.
READ_AGAIN = {"env.server.__main__": {"HOST", "PORT", "ENV_WORKERS", "ENV_TASK_DIRS"}}


def configured_modules() -> dict[str, Path]:
    """The modules that may read settings: env/ but the table itself and the split's halves, and the top-level scripts."""
    found = {name: path for name, path in modules().items()
             if name != "env.settings" and not name.startswith(("env.sandbox.inside", "env.verdict.host"))}
    found.update({path.stem: path for path in ROOT.glob("*.py")})  # inference.py, app.py, validator.py
    return found


def setting_reads(name: str, source: str, declared: set[str]) -> list[tuple[str, str]]:
    """(variable, "module:line") for each place a module names a declared variable to read it: the first argument of a
    reader of env.settings (``settings.text("X")``, ``setting("X")``), a value of a dict literal (a hand-made map), or a
    constant bound to it (read through the constant)."""
    found = []
    for node in ast.walk(parsed(source)):
        named: list[ast.expr | None] = []
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) and ast.unparse(func.value).endswith("settings") else func.id if isinstance(func, ast.Name) else ""
            named = [node.args[0]] if called in SETTING_READERS else []
        elif isinstance(node, ast.Dict):
            named = list(node.values)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            named = [node.value]  # VARIABLE = "ENV_PROCEDURAL_SALT": the name written once, read through the constant
        found += [(n.value, f"{name}:{node.lineno}") for n in named if isinstance(n, ast.Constant) and n.value in declared]
    return sorted(found)


def read_twice(reads: dict[str, list[tuple[str, str]]], exempt: dict[str, set[str]]) -> dict[str, list[str]]:
    """{variable: its places} for each variable read at more than one place ({module: its reads} given)."""
    places: dict[str, list[str]] = {}
    for module, found in reads.items():
        for variable, place in found:
            if variable not in exempt.get(module, set()):
                places.setdefault(variable, []).append(place)
    return {variable: sorted(where) for variable, where in sorted(places.items()) if len(where) > 1}


def test_each_setting_is_read_at_one_place():
    from env.settings import DECLARED

    reads = {name: setting_reads(name, path.read_text(encoding="utf-8"), set(DECLARED)) for name, path in configured_modules().items()}
    assert read_twice(reads, READ_AGAIN) == {}
    for module, variables in READ_AGAIN.items():  # the exception shrinks when it no longer applies
        assert variables <= {variable for variable, _ in reads[module]}, module


def test_the_one_place_check_finds_a_hand_made_map_and_a_second_reader():
    declared = {"SANDBOX_WALL_SECONDS", "SANDBOX_WORKSPACE_FILES", "SANDBOX_POOL", "PORT"}
    limits = (
        "from env import settings\nfrom env.settings import default, setting\nclass Limits(BaseModel):\n"
        "    wall_seconds: float = Field(default('SANDBOX_WALL_SECONDS'), gt=0)\n    files: int = setting('SANDBOX_WORKSPACE_FILES')\n"
        "    @classmethod\n    def from_env(cls):\n        return cls(**settings.raws({'wall_seconds': 'SANDBOX_WALL_SECONDS'}))\n"
        "def note():\n    return 'set SANDBOX_POOL' + str(settings.value('NOT_DECLARED')) + str(os.environ.get('PORT'))\n"
    )  # a message naming a variable is no read (and a direct read of os.environ is tests/test_settings.py's business)
    runner = "from env import settings\nVARIABLE = 'SANDBOX_POOL'\ndef pool():\n    return settings.integer(VARIABLE), settings.text('PORT')\n"
    reads = {"env.limits": setting_reads("env.limits", limits, declared), "env.runner": setting_reads("env.runner", runner, declared)}
    assert reads["env.limits"] == [("SANDBOX_WALL_SECONDS", "env.limits:4"), ("SANDBOX_WALL_SECONDS", "env.limits:8"),
                                   ("SANDBOX_WORKSPACE_FILES", "env.limits:5")]
    assert read_twice(reads, {}) == {"SANDBOX_WALL_SECONDS": ["env.limits:4", "env.limits:8"]}
    reads["env.server"] = setting_reads("env.server", "from env.settings import text\nPORT = lambda: text('PORT')\n", declared)
    assert read_twice(reads, {"env.runner": {"PORT"}}) == {"SANDBOX_WALL_SECONDS": ["env.limits:4", "env.limits:8"]}
    assert read_twice(reads, {})["PORT"] == ["env.runner:4", "env.server:2"]
    assert reads["env.runner"] == [("PORT", "env.runner:4"), ("SANDBOX_POOL", "env.runner:2")]


# A family's actions are its own (issue 52, item 1): the classic family's three are registered tools in
# env/families/classic/tools.py. Outside the families nothing names its action lists or the hand-made tables they
# replaced, and nothing branches on a task's ``interaction`` string: agents and the demo ask the task's tools
# (env.tool_schemas.submits_a_module, arguments_of), the server asks the family (``Family.actions``) or the tool
# (``Tool.submits``). ``own_submits`` and ``SUBMISSIONS`` (a second list of the actions that submit) are gone everywhere.
CLASSIC_NAMES = frozenset({"ACTION_TYPES", "CLASSIC_TOOLS", "CLASSIC_ACTIONS", "CLASSIC_EXTRA", "FIELDS_OF", "validate_action"})
SUBMISSION_LISTS = frozenset({"SUBMISSIONS", "own_submits"})


def names_used(name: str, source: str, banned: frozenset[str]) -> list[str]:
    """Where the module names one of ``banned``: a name, an attribute, an import or a definition."""
    found = []
    for node in ast.walk(parsed(source)):
        used = (
            [node.id] if isinstance(node, ast.Name) else [node.attr] if isinstance(node, ast.Attribute)
            else [a.asname or a.name for a in node.names] if isinstance(node, ast.Import | ast.ImportFrom)
            else [node.name] if isinstance(node, ast.FunctionDef | ast.ClassDef) else []
        )  # fmt: skip
        found += [f"{name}:{node.lineno} {u}" for u in used if u.split(".")[-1] in banned]
    return found


def interaction_branches(name: str, source: str) -> list[str]:
    """Comparisons that read a task's ``interaction`` (``task["interaction"] == "code"``, ``.get("interaction")``, ``.interaction``)."""
    found = []
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.Compare):
            reads = [n for n in ast.walk(node) if (isinstance(n, ast.Constant) and n.value == "interaction") or (isinstance(n, ast.Attribute) and n.attr == "interaction")]
            if reads:
                found.append(f"{name}:{node.lineno} {ast.unparse(node)}")
    return found


def test_nothing_outside_the_families_names_the_classic_actions_or_branches_on_interaction():
    found = []
    for name, path in outside_the_families().items():
        source = path.read_text(encoding="utf-8")
        found += names_used(name, source, CLASSIC_NAMES) + interaction_branches(name, source)
    for name, path in modules().items():
        found += names_used(name, path.read_text(encoding="utf-8"), SUBMISSION_LISTS)
    assert found == []


def test_the_classic_action_checks_find_a_name_an_import_and_an_interaction_branch():
    source = (
        "from env.interface import CLASSIC_ACTIONS\nimport env.models as m\nx = m.ACTION_TYPES\nSUBMISSIONS = {'submit'}\n"
        "if task['interaction'] == 'code': pass\nif task.get('interaction') != 'tools': pass\nif family.interaction == 'code': pass\n"
        "if task['family'] == 'code': pass\n"
    )
    assert names_used("env.x", source, CLASSIC_NAMES) == ["env.x:1 CLASSIC_ACTIONS", "env.x:3 ACTION_TYPES"]
    assert names_used("env.x", source, SUBMISSION_LISTS) == ["env.x:4 SUBMISSIONS"]
    assert interaction_branches("env.x", source) == [
        "env.x:5 task['interaction'] == 'code'", "env.x:6 task.get('interaction') != 'tools'", "env.x:7 family.interaction == 'code'",
    ]


def test_every_action_of_a_bundled_family_is_a_registered_tool_described_by_its_arguments():
    """No family answers an action the tool registry does not hold, nor publishes a hand-written definition: each name
    an interface offers resolves to a registered tool, whose schema is generated from its ``Args``."""
    from env.families.registry import FAMILIES
    from env.tools import TOOLS

    unregistered, hand_written = [], []
    for family in FAMILIES.values():
        hand_written += [f"{family.name}: {t['function']['name']}" for t in family.own_tools()]
        for profile in family.profiles():
            interface = family.interface(profile)
            unregistered += [f"{family.name}/{profile}: {n}" for n in interface.tools if interface.own_actions and n in interface.own_actions]
            unregistered += [f"{family.name}/{profile}: {n}" for n in interface.tools if interface.registered(n) not in TOOLS]
    assert unregistered == [] and hand_written == []


def test_the_registered_tool_check_finds_a_family_s_own_action():
    from env.interface import PROFILES, Interface
    from env.tools import TOOLS

    interface = Interface(PROFILES["default"], ("submit", "set_op"), own_actions=("set_op",))
    assert [n for n in interface.tools if n in interface.own_actions] == ["set_op"]
    assert [n for n in interface.tools if interface.registered(n) not in TOOLS] == ["set_op"]


# Each family declares its own wire fields (issue 52, item 1): env/families/<name>/fields.py holds what only that
# family's actions take or its observations show, gathered by env.families.fields; env.wire keeps only the fields
# every family shares, so a new family adds nothing to it.
def names_in(paths: list[Path]) -> set[str]:
    """Every keyword argument, attribute and string constant the files name."""
    found: set[str] = set()
    for path in paths:
        for node in ast.walk(parsed(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg:
                found.add(node.arg)
            elif isinstance(node, ast.Attribute):
                found.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.add(node.value)
    return found


def test_each_family_declares_its_own_wire_fields_and_the_shared_ones_are_shared():
    from env import wire
    from env.families.fields import FamilyActionFields, FamilyObservationFields, parts

    families = ROOT / "env" / "families"
    named = {f: names_in([p for p in (families / f).rglob("*.py") if p.name != "fields.py"]) for f in family_folders()}
    for part in (*parts(FamilyActionFields), *parts(FamilyObservationFields)):
        folder = part.__module__.split(".")
        assert folder[:2] == ["env", "families"] and folder[3:] == ["fields"], part  # env.families.<family>.fields
        unused = [f for f in part.model_fields if f not in named[folder[2]]]
        assert unused == [], f"{part.__qualname__} declares fields its family never sets or reads: {unused}"
    # A shared field is one the families' common base, or at least two families, name.
    base = names_in([families / "base.py"])
    for shared in (wire.SharedActionFields, wire.SharedObservationFields):
        for field in shared.model_fields:
            users = [f for f, names in named.items() if field in names]
            assert field in base or len(users) >= 2, f"{shared.__name__}.{field} is named by {users} only: declare it in that family's fields.py"
    assert list(wire.ObservationFields.model_fields)[-3:] == ["visible_files", "logs", "time_remaining"]  # the families' after the shared


def test_a_wire_field_declared_twice_is_refused_naming_both():
    from pydantic import BaseModel

    from env.families.classic.fields import ClassicObservationFields
    from env.families.fields import DuplicateField, refuse_duplicates
    from env.wire import SharedObservationFields

    class Extra(BaseModel):
        buggy_code: str = ""

    class Rewarding(BaseModel):
        reward: float = 0.0

    with pytest.raises(DuplicateField) as raised:
        refuse_duplicates(SharedObservationFields, ClassicObservationFields, Extra)
    assert str(raised.value) == "the wire field 'buggy_code' is declared by both ClassicObservationFields and test_a_wire_field_declared_twice_is_refused_naming_both.<locals>.Extra: declare it once"
    with pytest.raises(DuplicateField) as raised:
        refuse_duplicates(SharedObservationFields, Rewarding)
    assert str(raised.value).startswith("the wire field 'reward' is declared by both SharedObservationFields and ")
    refuse_duplicates(SharedObservationFields, ClassicObservationFields)  # the real parts: no error


def test_the_families_wire_fields_import_nothing_of_env_but_each_other():
    edges = graph()
    found = {name: sorted(t for t in edges[name] if not wire_fields(t)) for name in modules() if wire_fields(name)}
    assert found == dict.fromkeys(["env.families.fields", "env.families.classic.fields", "env.families.procedural.fields", "env.families.repo.fields"], [])
