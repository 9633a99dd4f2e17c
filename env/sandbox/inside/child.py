"""The sandbox child's entry: loads the submission's code and answers calls from the trusted side.

``env.sandbox.runner`` starts this file as ``python -s -P -S -B -X utf8 child.py REQ_FD RESP_FD PARENT`` in
the run's private directory, with a near-empty environment, stdout/stderr going to a capped file,
one pipe carrying requests and one carrying replies (``framing.py``). The zygote is ``child.py --zygote``,
the start-up probe ``child.py --probe``.

The tests and their expected values never enter this process: it only answers "call f(args)"
with a value or an exception. Standard library only, and nothing slow to import, because this
start-up is paid on every run. No ``env`` package is importable here: this folder is loaded by its path
as the package ``_adbg_inside`` (``__init__.py`` says what each module does), before isolation, and leaves
``sys.modules`` once loaded.
"""

import os
import sys

PACKAGE = "_adbg_inside"


def _inside(*names):
    """This folder as the package ``_adbg_inside`` with its modules ``names`` loaded, then out of ``sys.modules``
    (the modules keep one another; the submission finds none of them by name)."""
    import importlib
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(PACKAGE, os.path.join(here, "__init__.py"), submodule_search_locations=[here])
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    try:
        spec.loader.exec_module(package)
        for name in names:
            importlib.import_module(PACKAGE + "." + name)
    finally:
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]
    return package


if __name__ == "__main__":
    # read at start-up (the trusted test host's seed, env.sandbox.launch): the run's code sees the environment it did
    os.environ.pop("PYTHONHASHSEED", None)
    if sys.argv[1:2] == ["--probe"]:
        _inside().LAYERS.probe(sys.argv[2] or None, int(sys.argv[3]) if sys.argv[3] else None)
    elif sys.argv[1:2] == ["--zygote"]:
        inside = _inside("zygote")
        inside.zygote.zygote(int(sys.argv[2]), inside.LAYERS.parent_from_argv())
    else:
        inside = _inside("runs")
        parent = inside.LAYERS.parent_from_argv()
        inside.framing.REQ_FD, inside.framing.RESP_FD = int(sys.argv[1]), int(sys.argv[2])
        inside.runs.main(parent)
