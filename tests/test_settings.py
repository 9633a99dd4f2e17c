"""Every environment variable is declared once (``env.settings``): the docs' tables list exactly those, nothing else
reads them from the environment directly, and the server warns about an unknown ENV_/SANDBOX_ variable at start."""

from __future__ import annotations

import ast
import logging
import re
from pathlib import Path

import pytest

from env import settings
from env.config import Settings
from env.runtime import Runtime
from env.sandbox.limits import Limits
from env.sandbox.shell import ShellLimits
from env.server.app import build_app
from env.settings import DECLARED, DEPLOYMENT, EVALUATION, VARIABLES

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| (`[^|]+`) \| ([^|]+) \| [^|]+ \|$")


def documented(doc: str, section: str | None = None) -> dict[str, str]:
    """{variable: default} from the doc's tables whose header is ``variable | default | meaning`` (in ``section`` only)."""
    text = (ROOT / doc).read_text()
    if section is not None:
        text = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in text.splitlines():
        match = ROW.match(line)
        if not match:
            continue
        names = [name.strip("` ") for name in match[1].split(",")]
        shown = match[2].strip().replace("`", "")
        defaults = shown.split(", ") if len(names) > 1 else [shown]
        assert len(defaults) == len(names), f"{doc}: {line!r} gives {len(defaults)} defaults for {len(names)} variables"
        for name, value in zip(names, defaults, strict=True):
            assert name not in rows, f"{doc} lists {name} twice"
            rows[name] = value
    return rows


def declared(doc: str) -> dict[str, str]:
    return {v.name: v.shown_default() for v in VARIABLES if v.doc == doc}


def test_the_deployment_table_lists_exactly_the_declared_server_variables_with_their_defaults():
    assert documented(DEPLOYMENT, "Configuration") == declared(DEPLOYMENT)


def test_the_evaluation_table_lists_exactly_the_declared_agent_variables_with_their_defaults():
    assert documented(EVALUATION) == declared(EVALUATION)


def test_the_models_read_at_start_up_take_their_defaults_from_the_declarations():
    assert (Settings().port, Settings().max_sessions, Settings().drain_seconds) == (8000, 256, 30.0)
    assert Limits().memory_bytes == settings.default("SANDBOX_MEMORY_BYTES") == 256 * 1024 * 1024
    assert ShellLimits().output_bytes == settings.default("SHELL_OUTPUT_BYTES")


class _DirectReads(ast.NodeVisitor):
    """``os.environ.get("X")``, ``os.environ["X"]``, ``os.getenv("X")`` and ``os.environ.pop("X")`` of a string."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def _name(self, node: ast.expr) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.names.append(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if node.args and isinstance(func, ast.Attribute):
            if (func.attr in {"get", "pop"} and ast.unparse(func.value).endswith("environ")) or func.attr == "getenv":
                self._name(node.args[0])
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Load) and ast.unparse(node.value).endswith("environ"):
            self._name(node.slice)
        self.generic_visit(node)


def test_no_module_but_the_settings_reads_a_declared_variable_from_the_environment():
    sources = [*sorted((ROOT / "env").rglob("*.py")), ROOT / "inference.py", ROOT / "app.py"]
    direct = []
    for path in sources:
        if path == ROOT / "env" / "settings.py":
            continue
        reads = _DirectReads()
        reads.visit(ast.parse(path.read_text()))
        direct += [f"{path.relative_to(ROOT)} reads {name}" for name in reads.names if name in DECLARED]
    assert direct == []


def test_the_scan_finds_a_direct_read():
    reads = _DirectReads()
    reads.visit(ast.parse('import os\nos.environ.get("ENV_WORKERS", "32")\nos.environ["PORT"]\nos.getenv("HOST")'))
    assert reads.names == ["ENV_WORKERS", "PORT", "HOST"]


def test_values_are_read_now_and_parsed_as_declared(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("SANDBOX_POOL", raising=False)
    assert settings.value("SANDBOX_POOL") == 4
    monkeypatch.setenv("SANDBOX_POOL", "7")
    assert settings.value("SANDBOX_POOL") == 7
    monkeypatch.setenv("SANDBOX_POOL", "")  # empty: the default
    assert settings.value("SANDBOX_POOL") == 4
    monkeypatch.setenv("SANDBOX_POOL", "many")
    with pytest.raises(ValueError, match="invalid literal for int"):
        settings.value("SANDBOX_POOL")
    monkeypatch.setenv("SANDBOX_ZYGOTE", "off")
    assert settings.switch("SANDBOX_ZYGOTE") is False
    monkeypatch.setenv("SANDBOX_ZYGOTE", "no")  # a switch is on unless "off", as it always was
    assert settings.switch("SANDBOX_ZYGOTE") is True
    monkeypatch.setenv("SANDBOX_ALLOW_UNSAFE", "true")  # a flag is on only with "1"
    assert settings.switch("SANDBOX_ALLOW_UNSAFE") is False
    with pytest.raises(KeyError):
        settings.raw("SANDBOX_WALL_SECOND")  # not declared: a typo in the code fails loudly


def test_an_unknown_variable_is_named_with_the_likely_intended_one():
    lines = settings.unknown({"SANDBOX_WALL_SECOND": "5", "ENV_ZZZ": "1", "PATH": "/bin", "ENV_WORKERS": "4"})
    assert lines == [
        "ENV_ZZZ is set but is not a setting of this server; see docs/deployment.md, Configuration",
        "SANDBOX_WALL_SECOND is set but is not a setting of this server (did you mean SANDBOX_WALL_SECONDS?); "
        "see docs/deployment.md, Configuration",
    ]


def test_the_server_warns_at_start_about_an_unknown_variable(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    monkeypatch.setenv("ENV_MAX_SESION", "9")
    with caplog.at_level(logging.WARNING, logger="env.server"):
        build_app(runtime=runtime, settings=Settings())
    assert "ENV_MAX_SESION is set but is not a setting of this server (did you mean ENV_MAX_SESSIONS?)" in caplog.text


def import_time_reads(source: str) -> list[int]:
    """Lines where a module reads a setting as it is imported (module or class body; a function's body runs later)."""
    found: list[int] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            func = child.func if isinstance(child, ast.Call) else None
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "settings" and func.attr in IMPORT_READS:
                found.append(child.lineno)
            walk(child)

    walk(ast.parse(source))
    return found


IMPORT_READS = {"raw", "value", "text", "integer", "switch", "load"}  # settings.default and settings.setting are the declaration, not the environment


def test_no_module_reads_a_setting_as_it_is_imported():
    """A setting is read when it is used: one read at import would miss a value set after (a test, a CLI flag)."""
    found = {str(p.relative_to(ROOT)): lines for p in (ROOT / "env").rglob("*.py") if (lines := import_time_reads(p.read_text()))}
    assert found == {}
    assert import_time_reads("from env import settings\nWARM = settings.switch('X')\n\n\ndef f():\n    return settings.text('Y')\n") == [2]
