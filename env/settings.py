"""Every environment variable this project reads as configuration, declared once: its name, type, default and meaning.

    from env import settings
    settings.value("SANDBOX_POOL")      # 4, or int($SANDBOX_POOL): the environment as it is now, parsed
    settings.raw("ENV_MAX_SESSIONS")    # the string as set, or None when unset or empty (for pydantic models)
    settings.default("ENV_WORKERS")     # 32, the declared default
    settings.unknown(os.environ)        # ENV_/SANDBOX_/... names set here that nothing declares, with a likely match

    class Limits(BaseModel):            # a typed section: each field names its variable once
        wall_seconds: float = setting("SANDBOX_WALL_SECONDS", "a run's wall clock", gt=0)
    settings.load(Limits)               # the model, each declared field from its variable when set

Reading is at call time, not frozen at import: modules read a variable when they need it (tests set the environment
first). The models read once at start-up (``env.config.Settings``, ``Limits``, ``ShellLimits``, ``RetryPolicy``,
``inference.Settings``...) declare each field with ``setting(NAME)`` and are built by ``load``, which passes the raw
strings on to pydantic; a value it refuses is a ``ValueError`` naming the variable, the rule and the value. An unset or
empty variable means its default. A name that is not declared here is a ``KeyError``: a typo cannot read nothing
silently. tests/test_architecture.py holds every variable to one reading place outside this module.

The tables in docs/deployment.md ("Configuration") and docs/evaluation.md list exactly the variables declared with
that ``doc``, with these defaults (``tests/test_settings.py``). The server warns at start-up about a set
``ENV_``/``SANDBOX_``/``SHELL_``/``DEBUG_``/``LLM_`` variable that is not declared (``env.server.app.build_app``).

Left out on purpose, because they are not configuration:

- ``env/sandbox/inside/*`` and ``env/verdict/host/*``: they run inside the sandbox or the test host, standard library
  only and loaded by path, so they cannot import this module; they read only ``ADBG_*`` plumbing.
- ``ADBG_*`` (``ADBG_PARENT``, ``ADBG_BIND``...): what our own processes tell each other, set by us, not by a user.
- ``PATH``, ``HOME``, ``XDG_CACHE_HOME``, ``TMPDIR``: the system's, passed through or followed as the system means them.
- ``ENABLE_WEB_INTERFACE`` is declared (it is a setting users set) but read by OpenEnv's ``create_app``, not by us.

This module imports only the standard library (pydantic only inside ``setting`` and ``load``, which models call):
``python -m env.server`` reads PORT and HOST before its slow imports.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo
    from pydantic_core import ErrorDetails

# Prefixes of the variables this project owns: a set one that is not declared is probably a typo.
OWN_PREFIXES = ("ENV_", "SANDBOX_", "SHELL_", "DEBUG_", "LLM_")

DEPLOYMENT = "docs/deployment.md"
EVALUATION = "docs/evaluation.md"


@dataclass(frozen=True)
class Variable:
    name: str
    type: str  # "int", "float", "str", "bool" (pydantic's: 1/0, true/false...), "switch" (on unless "off"), "flag" (on only if "1")
    default: object  # the value when unset; None: none, or computed where it is read (``shown`` says how)
    meaning: str
    doc: str | None = DEPLOYMENT  # the table that lists it, if one does
    shown: str | None = None  # the default as the table shows it, when not simply the value

    def shown_default(self) -> str:
        if self.shown is not None:
            return self.shown
        if isinstance(self.default, float):
            return f"{self.default:g}"
        return str(self.default)


MiB = 1024 * 1024

VARIABLES: tuple[Variable, ...] = (
    # the server (env.config.Settings, read once at start-up)
    Variable("PORT", "int", 8000, "where `python -m env.server` listens (also the demo's port, `app.py`)"),
    Variable("HOST", "str", "127.0.0.1", "the address `python -m env.server` listens on (this machine only; the image sets 0.0.0.0)"),
    Variable("ENV_MAX_SESSIONS", "int", 256, "concurrent sessions: /ws and /mcp connections, MCP sessions made over POST /mcp (one episode each)"),
    Variable("ENV_SESSION_TIMEOUT_S", "float", 600.0, "time without a message after which a WebSocket session or an HTTP episode is closed"),
    Variable("ENV_FIRST_RESET_TIMEOUT_S", "float", 60.0, "the same limit for a WebSocket connection that has not sent its first reset"),
    Variable("ENV_SINGLE_USER", "bool", False, "a /step or /state naming no episode gets the latest HTTP episode (one client per server only)", shown="0"),
    Variable("ENV_HTTP_EPISODES", "int", 1024, "HTTP episodes kept at once"),
    Variable("ENV_SESSIONS_PER_CLIENT", "int", 64, "sessions one client holds at once (and, apart, unfinished HTTP episodes)"),
    Variable("ENV_TRUSTED_PROXIES", "str", "", "balancers whose X-Forwarded-For names the client (addresses or networks, comma-separated)", shown="(empty)"),
    Variable("ENV_MAX_BODY_BYTES", "int", MiB, "largest request body or WebSocket message"),
    Variable("ENV_ACCESS_LOG", "bool", False, "log every request", shown="0"),
    Variable("ENV_SERVER_TIMING", "bool", False, "answer each HTTP request with a Server-Timing header of its phases (bench/bench_server.py --phases)", shown="0"),
    Variable("ENV_REPLICA", "str", "", "this replica's name behind a balancer; HTTP episode ids start with it", shown="(unset)"),
    Variable("ENV_DRAIN_SECONDS", "float", 30.0, "after SIGTERM, how long open episodes may go on before the replica stops"),
    Variable("ENV_STORE", "str", "", "the episode store (redis://host:port/db): any replica can take over an episode whose replica is gone", shown="(unset)"),
    Variable("ENABLE_WEB_INTERFACE", "str", "false", "`true`: mount the demo at /web (read by OpenEnv's create_app)"),
    # the shared runtime
    Variable("ENV_WORKERS", "int", 32, "threads that run sandbox work off the event loop"),
    Variable("ENV_SECRET", "str", None, "the secret verdicts derive from", shown="generated at start"),
    Variable("ENV_CPU_SLOTS", "int", 0, "runs computing at once (0: the cores, at least 2)", shown="cores (at least 2)"),
    Variable("ENV_SLOT_WAIT_S", "int", 600, "longest a run waits for a CPU slot; past it the step fails as the machine's (infra_failed: slot_wait); 0: no bound"),
    Variable("ENV_ALLOW_SANDBOXED_REWARD", "flag", False, "`1`: pay the step rewards of untrusted tasks", shown="0"),
    Variable("DEBUG_MAX_SESSIONS", "int", 64, "debugging sessions holding a process at once, server-wide"),
    # the sandbox (env.sandbox.limits.Limits, env.sandbox.shell.ShellLimits and the launcher)
    Variable("SANDBOX_WALL_SECONDS", "float", 10.0, "a run's wall clock"),
    Variable("SANDBOX_CPU_SECONDS", "int", 10, "a run's CPU time (RLIMIT_CPU)"),
    Variable("SANDBOX_MEMORY_BYTES", "int", 256 * MiB, "a run's address space (RLIMIT_AS)"),
    Variable("SANDBOX_OUTPUT_BYTES", "int", 16 * 1024, "a run's output shown"),
    Variable("SANDBOX_TEST_MEMORY_BYTES", "int", 1024 * MiB, "the memory limit of a repository test run instead"),
    Variable("SANDBOX_ZYGOTE", "switch", "on", "`off`: no warm fork server"),
    Variable("SANDBOX_ZYGOTE_RUNS", "int", 2000, "runs of a fork server before it is replaced"),
    Variable("SANDBOX_POOL", "int", 4, "pre-isolated children kept ready"),
    Variable("SANDBOX_ALLOW_UNSAFE", "flag", False, "`1`: run code although a guarantee is missing (development only)", shown="(unset)"),
    Variable("SANDBOX_STATIC_CHECK", "switch", "on", "`off`: skip the AST policy (testing only)"),
    Variable("SANDBOX_TMPDIR", "str", None, "where the server's scratch directory is made", shown="/dev/shm, else the system temp directory"),
    Variable("SANDBOX_HOST_WARM", "switch", "on", "`off`: a fresh pytest host per repository test run"),
    Variable("SANDBOX_PAIR_CPU", "switch", "on", "`off`: do not pin a split run's test host and project child to one CPU"),
    Variable("SHELL_TIMEOUT_SECONDS", "float", 10.0, "`run_bash`: wall clock of one command"),
    Variable("SHELL_OUTPUT_BYTES", "int", 16 * 1024, "`run_bash`: output shown"),
    Variable("SANDBOX_WORKSPACE_BYTES", "int", 64 * MiB, "an episode's workspace: bytes it may hold (a `run_bash` command's temporary directory included)"),
    Variable("SANDBOX_WORKSPACE_FILES", "int", 10_000, "an episode's workspace: files and directories it may hold (the same)"),
    # tasks and their test environments
    Variable("ENV_TASK_DIRS", "str", "", "extra task folders (or directories of them) to serve, colon-separated", shown="(empty)"),
    Variable("ENV_CATALOG", "str", "", "a built catalog's directory (task folders and catalog.json) to serve beside the built-in tasks, "
             "each task in its library's split", shown="(empty)"),
    Variable("ENV_TEST_ENVS", "str", None, "where repository runs' test environments are built and kept", shown="~/.cache/agentdebugger/test-envs"),
    Variable("ENV_TEST_ENVS_BUILD", "switch", "on", "`off`: never build a test environment at run time"),
    Variable("ENV_PROCEDURAL_SALT", "str", None, "a secret salt (16 characters or more): a procedural id's world, bug, defect and held-out inputs "
             "derive from it and the id; runs record its fingerprint (unset: public ids, the same task everywhere)", doc=EVALUATION, shown="(unset)"),
    Variable("ENV_PROCEDURAL_CACHE", "str", None, "where public procedural tasks are kept between processes, each generated once per "
             "version of the code (`off`: none; a salted task is never kept)", shown="~/.cache/agentdebugger/procedural"),
    Variable("ENV_TOOL_ALIASES", "str", None, "a JSON file of tool aliases added to the alias table", shown="(unset)"),
    Variable("ENV_SDIST_CACHE", "str", None, "where the compatibility bench's sdists are downloaded (env/authoring/sdist.py)", doc=None,
             shown="~/.cache/agentdebugger/sdists"),
    # the demo (app.py)
    Variable("ENV_URL", "str", None, "`app.py`: play on this server instead of in-process", shown="(unset)"),
    Variable("GRADIO_SERVER_NAME", "str", "0.0.0.0", "`app.py`: the address the demo listens on (Gradio's own name)", doc=None),
    Variable("GRADIO_SERVER_PORT", "int", None, "`app.py`: its port when PORT is unset (Gradio's own name)", doc=None, shown="7860"),
    # the LLM agent and inference.py
    Variable("LLM_TIMEOUT_S", "float", 120.0, "one model request's timeout", doc=EVALUATION),
    Variable("LLM_MAX_ATTEMPTS", "int", 5, "attempts per model call, the first included (1: no retries)", doc=EVALUATION),
    Variable("LLM_BACKOFF_BASE_S", "float", 1.0, "delay before the first retry (doubling each time)", doc=EVALUATION),
    Variable("LLM_BACKOFF_MAX_S", "float", 30.0, "the longest delay between two attempts", doc=EVALUATION),
    Variable("API_BASE_URL", "str", "https://router.huggingface.co/v1", "the model endpoint (OpenAI-compatible)", doc=EVALUATION),
    Variable("MODEL_NAME", "str", "meta-llama/Llama-3.1-70B-Instruct", "the model the LLM agent calls", doc=EVALUATION),
    Variable("HF_TOKEN", "str", None, "the model endpoint's key", doc=EVALUATION, shown="(unset)"),
    Variable("OPENAI_API_KEY", "str", None, "the key when HF_TOKEN is unset (the LLM agent of `env.eval`)", doc=EVALUATION, shown="(unset)"),
    Variable("ENV_BASE_URL", "str", "http://localhost:8000", "`inference.py`: the environment server", doc=EVALUATION),
    Variable("RESULTS_PATH", "str", "inference_results.json", "`inference.py`: where its results are written", doc=EVALUATION),
    Variable("PROFILE", "str", "default", "`inference.py`: the interface profile (default, bash, pdb, pdb_shell, minimal, trace)", doc=EVALUATION),
)  # fmt: skip

DECLARED: dict[str, Variable] = {v.name: v for v in VARIABLES}
assert len(DECLARED) == len(VARIABLES), "a variable is declared twice"

_TRUE = {"1", "true", "t", "yes", "y", "on"}
_FALSE = {"0", "false", "f", "no", "n", "off"}


def raw(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The declared variable's value as set, or None when it is unset or empty."""
    DECLARED[name]  # noqa: B018 - a KeyError names an undeclared variable
    value = (os.environ if environ is None else environ).get(name)
    return value or None


def default(name: str) -> object:
    """The declared default, as a message shows it (a model's field takes it through ``setting``)."""
    return DECLARED[name].default


def value(name: str) -> object:
    """The variable parsed as declared (its default when unset). A bad number raises the ValueError ``int()`` or
    ``float()`` gives."""
    variable = DECLARED[name]
    text = raw(name)
    if variable.type == "switch":
        return (text or str(variable.default)) != "off"
    if variable.type == "flag":
        return text == "1"
    if text is None:
        return variable.default
    if variable.type == "int":
        return int(text)
    if variable.type == "float":
        return float(text)
    if variable.type == "bool":
        lowered = text.strip().lower()
        if lowered not in _TRUE | _FALSE:
            raise ValueError(f"{name} must be one of 1/0, true/false, on/off, not {text!r}")
        return lowered in _TRUE
    return text


def text(name: str) -> str:
    """A string variable's value, or its declared default ("" when it has none)."""
    found = value(name)
    return "" if found is None else str(found)


def integer(name: str) -> int:
    found = value(name)
    assert isinstance(found, int), f"{name} is not an int variable"
    return found


def switch(name: str) -> bool:
    found = value(name)
    assert isinstance(found, bool), f"{name} is not a switch or a flag"
    return found


def unknown(environ: Mapping[str, str] | None = None) -> list[str]:
    """One line per set variable with one of our prefixes that nothing declares, with the likely intended name."""
    lines = []
    for name in sorted(os.environ if environ is None else environ):
        if not name.startswith(OWN_PREFIXES) or name in DECLARED:
            continue
        close = difflib.get_close_matches(name, list(DECLARED), n=1, cutoff=0.8)
        hint = f" (did you mean {close[0]}?)" if close else ""
        lines.append(f"{name} is set but is not a setting of this server{hint}; see docs/deployment.md, Configuration")
    return lines


def user_cache(variable: str, leaf: str) -> Path:
    """``$variable`` if set, else ``agentdebugger/<leaf>`` under the user's cache directory (XDG_CACHE_HOME, ~/.cache)."""
    configured = raw(variable)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentdebugger" / leaf


# -- typed sections: pydantic models whose fields each name their variable once ----------------------------------------

M = TypeVar("M", bound="BaseModel")


def setting(name: str, description: str | None = None, *, gt: float | None = None, ge: float | None = None,
            pattern: str | None = None, allow_inf_nan: bool | None = None) -> Any:
    """A model field read from the declared variable ``name`` by ``load``: its default is the declaration's, its
    description ``"NAME: meaning"`` (the declared meaning unless ``description`` says more), the constraints pydantic's.
    Typed ``Any``, as pydantic's ``Field`` is, so that the field takes it as its own type."""
    from pydantic import Field  # here, not at the top: see the module's docstring

    variable = DECLARED[name]
    return Field(variable.default, description=f"{name}: {description or variable.meaning}", json_schema_extra={"env": name},
                 gt=gt, ge=ge, pattern=pattern, allow_inf_nan=allow_inf_nan)


def variable_of(field: FieldInfo) -> str | None:
    """The variable a field declared with ``setting`` reads, else None."""
    extra = field.json_schema_extra
    name = extra.get("env") if isinstance(extra, dict) else None
    return name if isinstance(name, str) else None


def load(model: type[M], **given: object) -> M:
    """``model`` with each field declared by ``setting`` taken from its variable when set (its default otherwise) and
    the fields in ``given`` as given. A value the model refuses raises a ValueError naming the variable: what a person
    setting it must read, not the field's name."""
    from pydantic import ValidationError

    read: dict[str, str] = {}
    names: dict[str, str] = {}
    for field, info in model.model_fields.items():
        name = variable_of(info)
        if name is not None and field not in given and (value := raw(name)) is not None:
            read[field], names[field] = value, name
    try:
        return model(**read, **given)
    except ValidationError as exc:
        problems = [_problem(error, names, read) for error in exc.errors()]
        if not all(problems):
            raise  # a given value's fault, or the model's: pydantic says it best
        raise ValueError("; ".join(p for p in problems if p)) from None


_RULES = {  # pydantic's error types, as a sentence about a variable ends
    "int_parsing": "must be a whole number", "int_from_float": "must be a whole number", "float_parsing": "must be a number",
    "bool_parsing": "must be one of 1/0, true/false, yes/no, on/off", "finite_number": "must be a finite number",
}


def _problem(error: ErrorDetails, names: Mapping[str, str], read: Mapping[str, str]) -> str | None:
    """``NAME must be ..., not 'value'`` for an error in a field read from the environment, else None."""
    field = error["loc"][0] if error["loc"] else None
    if not isinstance(field, str) or field not in names:
        return None
    name, ctx = names[field], error.get("ctx", {})
    if error["type"] == "value_error":
        message = str(ctx.get("error", error["msg"]))  # the model's own validator's words
        return message if message.startswith(name) else f"{name}: {message}"
    if error["type"] in ("greater_than", "greater_than_equal"):
        bound = float(ctx["gt" if error["type"] == "greater_than" else "ge"])
        rule = f"must be {'more than' if error['type'] == 'greater_than' else 'at least'} {bound:g}"
    elif error["type"] == "string_pattern_mismatch":
        rule = f"must match {ctx['pattern']}"
    else:
        rule = _RULES.get(error["type"], f"is refused ({error['msg']})")
    return f"{name} {rule}, not {read[field]!r}"
