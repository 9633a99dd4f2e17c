"""What runs inside the sandbox: standard library only, never imported as part of ``env``.

The entry is ``child.py``, started as a script (``python -s -P -S -B -X utf8 child.py ...``) by ``env.sandbox.launch``. It
loads this folder by path as the package ``_adbg_inside`` (its files use relative imports, as ``env/verdict/host`` does
in the trusted test host), each job a module: ``framing`` (the pipes), ``encoder`` (a classic run's values),
``classic`` (the classic server), ``values``/``ops``/``serve``/``printed`` (the sandbox half of the split: the
repository run), ``runs`` (which run, and the debug and pytest runs), ``zygote`` (the warm fork server), and
``protocol`` (the wire tags, shared with the trusted half). All of it is loaded before isolation and before any
submitted code; then the package leaves ``sys.modules``, so nothing more of this folder can be imported by name.

Files loaded by path on their own (never in ``sys.modules`` under this package): ``layers.py`` (the isolation layers,
shared with ``shell_child.py``, run_bash's launcher), ``explorer.py`` (the race explorer, which loads ``schedule.py``,
one schedule's worker threads, scheduler and tracer, itself loading ``points.py``, the scheduling points,
``hammer.py``, the real-threads run, ``plausible.py``, its own quick look, ``reduction.py``, the strategies and the
sweep's reduction, and ``plan_runs.py``, one run of a scenario by kind of plan, beside itself) and ``tracer.py`` (the
debugger), through ``sibling``.
"""

import os

PACKAGE = "_adbg_inside"
# The package's modules, in the order the entry loads them (a pickle made here names their classes as made here).
MODULES = ("framing", "encoder", "classic", "protocol", "printed", "values", "ops", "serve", "runs", "zygote")


def sibling(name, filename):
    """A file of this folder that is not part of the package, loaded by its path (never in ``sys.modules``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(os.path.abspath(__file__)), filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Loaded at start-up, on every path (a fresh child, the zygote before it forks, the probe): before any
# submitted code, and while the server's tree is still readable (Landlock shuts it away).
LAYERS = sibling("_adbg_layers", "layers.py")
