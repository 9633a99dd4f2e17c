"""OpenEnv's server core without its Gradio web interface until a web UI is asked for, nor FastMCP until MCP is used.

OpenEnv 0.10's ``openenv.core.env_server`` package imports its web interface (and so Gradio, about 2.3 s) on
import, whether or not ENABLE_WEB_INTERFACE is on. Its own ``__init__`` already handles that import failing, as it
does where Gradio is not installed: the package's ``create_web_interface_app`` and ``WebInterfaceManager`` are then
``None``, and ``create_app`` imports ``web_interface`` itself when the web UI is on. ``HoldWebInterface`` makes
that eager import fail, and only it: the request is refused only while the package is still running its
``__init__`` (it has not bound ``WebInterfaceManager`` yet). Every later import of ``web_interface``, the one
``create_app`` makes for the web UI included, loads the real module.

OpenEnv's ``http_server`` also imports ``mcp_environment`` for one helper, ``get_server_tools``, which it calls only
for an environment that carries its own FastMCP server (ours speaks MCP itself, ``env/server/mcp.py``); that module
imports FastMCP and the MCP SDK (about 0.4 s). ``DeferMCPEnvironment`` hands the package, while it initialises, a
stand-in module: its ``get_server_tools`` loads the real module on first call, and any other name read after the
package's ``__init__`` (``MCPEnvironment`` for a subclass) loads it too. During that ``__init__`` the stand-in answers
``MCPEnvironment`` as OpenEnv's own code expects when FastMCP is absent (ModuleNotFoundError, so the package binds
``None``): ``from openenv.core.env_server.mcp_environment import MCPEnvironment`` is the way to the real class.

Installed by ``env/__init__.py``, so it is in place before any of our modules reaches OpenEnv; it imports nothing,
so processes that never touch OpenEnv (the sandbox's test host) pay nothing for it.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.abc costs ~20 ms at import; a finder needs only the method
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

PACKAGE = "openenv.core.env_server"
WEB_INTERFACE = f"{PACKAGE}.web_interface"
MCP_ENVIRONMENT = f"{PACKAGE}.mcp_environment"
# bound by the package's __init__ right after its web-interface import, whether that import worked or not
BOUND_AFTER = "WebInterfaceManager"


class HoldWebInterface:
    """Refuses ``openenv.core.env_server.web_interface`` while its package is initialising; finds nothing else."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname == WEB_INTERFACE:
            package = sys.modules.get(PACKAGE)
            if package is not None and BOUND_AFTER not in vars(package):
                raise ModuleNotFoundError(f"{WEB_INTERFACE} loads when a web UI is built, not on import", name=fullname)
        return None


def _initialising() -> bool:
    package = sys.modules.get(PACKAGE)
    return package is not None and BOUND_AFTER not in vars(package)


def _real_mcp_environment() -> ModuleType:
    """Load OpenEnv's own ``mcp_environment`` in place of the stand-in (once; later imports get the real module)."""
    module = sys.modules.get(MCP_ENVIRONMENT)
    if module is None or isinstance(module, DeferredMCPEnvironment):
        sys.modules.pop(MCP_ENVIRONMENT, None)
        import importlib

        module = importlib.import_module(MCP_ENVIRONMENT)
        package = sys.modules.get(PACKAGE)
        if package is not None:
            package.mcp_environment = module  # type: ignore[attr-defined]
    return module


def _get_server_tools(mcp_server: object) -> dict[str, object]:
    tools: dict[str, object] = _real_mcp_environment().get_server_tools(mcp_server)
    return tools


class DeferredMCPEnvironment(types.ModuleType):
    """Stands in for ``openenv.core.env_server.mcp_environment`` until a name other than ``get_server_tools`` is read."""

    def __init__(self) -> None:
        super().__init__(MCP_ENVIRONMENT)
        self.get_server_tools = _get_server_tools

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)  # import machinery's probes (__path__, __file__ ...) must not load the module
        if _initialising():
            raise ModuleNotFoundError(f"{MCP_ENVIRONMENT}.{name} loads when it is used, not on import", name=MCP_ENVIRONMENT)
        return getattr(_real_mcp_environment(), name)


class _StandInLoader:
    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return DeferredMCPEnvironment()

    def exec_module(self, module: ModuleType) -> None:
        return None


class DeferMCPEnvironment:
    """Finds the stand-in for ``mcp_environment`` while OpenEnv's server package initialises; finds nothing else."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname != MCP_ENVIRONMENT or not _initialising():
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(fullname, _StandInLoader())  # type: ignore[arg-type]


def defer_openenv_extras() -> None:
    """Install the finders once; a no-op when OpenEnv's server package is already imported (too late to matter)."""
    if PACKAGE in sys.modules or any(isinstance(finder, HoldWebInterface) for finder in sys.meta_path):
        return
    sys.meta_path[:0] = [HoldWebInterface(), DeferMCPEnvironment()]
