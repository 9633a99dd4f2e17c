"""OpenEnv's server core without its Gradio web interface until a web UI is asked for.

OpenEnv 0.10's ``openenv.core.env_server`` package imports its web interface (and so Gradio, about 2.3 s) on
import, whether or not ENABLE_WEB_INTERFACE is on. Its own ``__init__`` already handles that import failing, as it
does where Gradio is not installed: the package's ``create_web_interface_app`` and ``WebInterfaceManager`` are then
``None``, and ``create_app`` imports ``web_interface`` itself when the web UI is on. ``hold_web_interface`` makes
that eager import fail, and only it: the request is refused only while the package is still running its
``__init__`` (it has not bound ``WebInterfaceManager`` yet). Every later import of ``web_interface``, the one
``create_app`` makes for the web UI included, loads the real module.

Installed by ``env/__init__.py``, so it is in place before any of our modules reaches OpenEnv; it imports nothing,
so processes that never touch OpenEnv (the sandbox's test host) pay nothing for it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importlib.abc costs ~20 ms at import; a finder needs only the method
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

PACKAGE = "openenv.core.env_server"
WEB_INTERFACE = f"{PACKAGE}.web_interface"
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


def hold_web_interface() -> None:
    """Install the finder once; a no-op when OpenEnv's server package is already imported (too late to matter)."""
    if PACKAGE in sys.modules or any(isinstance(finder, HoldWebInterface) for finder in sys.meta_path):
        return
    sys.meta_path.insert(0, HoldWebInterface())
