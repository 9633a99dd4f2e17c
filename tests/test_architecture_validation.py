"""The house's rules for validation and evaluation, read from the code: validation (checking the environment) lives in
env/validation/, evaluation (measuring agents) in env/eval/, and eval imports nothing of validation; episodes are
played over HTTP by one driver; a module name and the name ``Episode`` each mean one thing. Each rule is shown to
catch a planted violation."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = ROOT / "env"

# Names that meant several things before (three report.py, two run.py, episode players in three places): each names
# one module in env/ now. `report.py` is the evaluation report, `run.py` the evaluation's runs.
UNIQUE_MODULE_NAMES = ("report", "run", "episodes", "player", "drivers")


def shared_names(paths: list[Path], names: tuple[str, ...]) -> dict[str, list[str]]:
    """The listed names more than one of ``paths`` is called (``x.py``, or a package ``x/``), with their paths."""
    found: dict[str, list[str]] = {}
    for path in paths:
        stem = path.parent.name if path.name == "__init__.py" else path.stem
        if stem in names:
            found.setdefault(stem, []).append(path.as_posix())
    return {name: sorted(where) for name, where in found.items() if len(where) > 1}


def test_a_listed_module_name_means_one_module_in_env():
    assert shared_names(sorted(ENV.rglob("*.py")), UNIQUE_MODULE_NAMES) == {}


def test_the_name_check_finds_two_modules_of_one_name():
    paths = [Path("env/eval/report.py"), Path("env/x/report.py"), Path("env/y/run/__init__.py"), Path("env/z/run.py"), Path("env/a/task.py"),
             Path("env/b/task.py")]
    assert shared_names(paths, ("report", "run")) == {"report": ["env/eval/report.py", "env/x/report.py"],
                                                      "run": ["env/y/run/__init__.py", "env/z/run.py"]}


def classes_named(sources: dict[str, str], name: str) -> list[str]:
    return sorted(f"{where}:{node.lineno}" for where, source in sources.items() for node in ast.walk(ast.parse(source))
                  if isinstance(node, ast.ClassDef) and node.name == name)


def test_episode_names_one_class_in_env():
    """``Episode`` is the step loop every family's episodes subclass; what a validator recorded is a PlayedEpisode, what
    inference.py records an EpisodeOutcome."""
    paths = [*ENV.rglob("*.py"), *ROOT.glob("*.py")]  # the package and the scripts beside it (inference.py, validator.py)
    sources = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8") for path in paths}
    assert [c.split(":")[0] for c in classes_named(sources, "Episode")] == ["env/families/base.py"]


def test_the_class_check_finds_a_second_episode():
    assert classes_named({"a.py": "class Episode:\n    pass\n", "b.py": "class Episode(Base): ...\nclass PlayedEpisode: ..."}, "Episode") == ["a.py:1", "b.py:1"]


def imported_modules(source: str) -> list[str]:
    tree = ast.parse(source)
    return [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names] + [
        n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level
    ]


def validation_in_eval(files: dict[str, str]) -> list[str]:
    """In eval's files (relative path -> source): a module or package whose name says validation, and any import of
    OpenEnv's validation or of env.validation (eval measures agents; validating the environment is not its job, and
    validation imports eval's driver, so the way back would be a circle)."""
    found = []
    for rel, source in sorted(files.items()):
        if any("valid" in part or part == "v2" for part in Path(rel).with_suffix("").parts):
            found.append(f"{rel}: a validator's name")
        for module in imported_modules(source):
            if module.split(".")[:2] in (["env", "validation"], ["openenv", "validation"]):
                found.append(f"{rel} imports {module}")
    return found


def test_validation_lives_in_env_validation_not_in_eval():
    files = {path.relative_to(ENV / "eval").as_posix(): path.read_text(encoding="utf-8") for path in (ENV / "eval").rglob("*.py")}
    assert validation_in_eval(files) == []
    assert (ENV / "validation" / "presubmission.py").is_file() and (ENV / "validation" / "v2" / "suite.py").is_file()


def test_the_eval_check_finds_a_validator_filed_under_eval():
    files = {"v2/report.py": "from openenv.validation.policy import load_policy\n", "validator.py": "import os\n",
             "run.py": "from env.validation.player import play_http\nimport env.validation\n", "report.py": "from env.eval.run import seed_for\n"}
    assert validation_in_eval(files) == ["run.py imports env.validation", "run.py imports env.validation.player", "v2/report.py: a validator's name",
                                         "v2/report.py imports openenv.validation.policy", "validator.py: a validator's name"]


def test_validator_py_is_an_entry_point_only():
    """The checks are env/validation's: the root file defines nothing (docs and the image run `python validator.py`)."""
    tree = ast.parse((ROOT / "validator.py").read_text(encoding="utf-8"))
    assert [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))] == []
    assert "env.validation.__main__" in imported_modules((ROOT / "validator.py").read_text(encoding="utf-8"))


# Episodes are played over HTTP by one driver (env.eval.drivers.HttpDriver): nothing else posts /reset or /step.
# The one exception, named: a probe that posts a step naming no episode, to see the server refuse it.
HTTP_PLAYER = "env/eval/drivers.py"
RAW_STEPS_ALLOWED = {"env/validation/v2/runtime_checks.py:episode_isolation"}


def episode_posts(rel: str, source: str) -> list[str]:
    """``module:function`` of every ``.post(...)`` to ``/reset`` or ``/step`` (a literal path, or an f-string ending in one)."""
    found = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr == "post" and child.args:
                path = child.args[0]
                text = path.value if isinstance(path, ast.Constant) and isinstance(path.value, str) else \
                    path.values[-1].value if isinstance(path, ast.JoinedStr) and path.values and isinstance(path.values[-1], ast.Constant) else ""
                if str(text).endswith(("/reset", "/step")):
                    found.append(f"{rel}:{inner}")
            visit(child, inner)

    visit(ast.parse(source), "<module>")
    return found


def test_one_http_episode_player():
    sources = {p.relative_to(ROOT).as_posix(): p for p in [*ENV.rglob("*.py"), *ROOT.glob("*.py")]}
    posts = [where for rel, path in sorted(sources.items()) for where in episode_posts(rel, path.read_text(encoding="utf-8"))]
    assert {w for w in posts if not w.startswith(HTTP_PLAYER + ":")} == RAW_STEPS_ALLOWED
    assert {w.split(":")[1] for w in posts if w.startswith(HTTP_PLAYER + ":")} >= {"start", "_post_step"}


def test_the_player_check_finds_a_second_player():
    source = (
        "def play(http):\n    http.post('/reset', json={})\n    return http.post(f'{url}/step', json={})\n"
        "def other(http):\n    http.post('/mcp', json={})\n    http.get('/step')\n"
    )
    assert episode_posts("m.py", source) == ["m.py:play", "m.py:play"]
