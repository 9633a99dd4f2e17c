"""The split's wire table, loaded from its one file: ``env/sandbox/inside/protocol.py`` (the sandbox's half loads the
same file as part of its package). Found by this directory's real path, since the server starts it as ``adbg_host``
through a link; standard library only, like the rest of the test host.
"""

from __future__ import annotations

import importlib.util
import os
from types import ModuleType

FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))), "sandbox", "inside", "protocol.py")


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_adbg_wire_table", FILE)
    if spec is None or spec.loader is None or not os.path.isfile(FILE):
        raise RuntimeError(f"the split's wire table is missing ({FILE}): the test host cannot speak to the sandbox")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TABLE = _load()
agree = TABLE.agree
PURE_BUILTINS: tuple[str, ...] = TABLE.PURE_BUILTINS
