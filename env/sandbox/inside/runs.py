"""What one run is: the modules it needs loaded before isolation, then the classic, repository, debug or pytest run
its setup names."""

import os
import sys

from . import LAYERS, sibling
from .classic import load_classic, serve_classic
from .encoder import exception_reply, safe_str
from .framing import recv, send
from .serve import load_repo, run_repo

# ---------------------------------------------------------------------------------------------
# the harness-owned concurrency driver (the only test code that must share this process). It is handed from
# function to function as an argument and never stored in a global: nothing the submission can walk to by
# attribute (this file is ``sys.modules["__main__"]``) leads to it.


def _load_explorer():
    """env/sandbox/explorer.py, loaded by path before isolation (never in sys.modules)."""
    return sibling("_adbg_explorer", "explorer.py")


# ---------------------------------------------------------------------------------------------
# debug mode: the project's files, and one test or script run under the tracer (env/sandbox/tracer.py);
# the trusted side's commands arrive while the program is stopped


def prepare(config):
    """Modules read from the server's tree load before isolation (they are out of reach afterwards): the race
    explorer for a verdict sandbox (returned, never stored in a global); pytest and the tracer for a debug sandbox."""
    if not config.get("debug"):
        explorer = _load_explorer()
        # A repository task's declared requirements, for the project's own imports (after its own paths: the
        # project always wins over an installed copy of itself).
        sys.path.extend(p for p in config.get("site", ()) if p not in sys.path)
        return explorer
    sys.path.extend(p for p in config.get("site", ()) if p not in sys.path)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the server's own pytest plugins are not the project's
    sys.modules["_adbg_tracer"] = sibling("_adbg_tracer", "tracer.py")
    import _pytest.python  # noqa: F401
    import pytest  # noqa: F401  (and the plugins pytest.main loads: imported once, here)

    if config.get("host"):  # a sandboxed verdict run reports with the trusted test process's own plugin
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "adbg_host", os.path.join(config["host"], "__init__.py"), submodule_search_locations=[config["host"]]
        )
        package = importlib.util.module_from_spec(spec)
        sys.modules["adbg_host"] = package
        spec.loader.exec_module(package)
        __import__("adbg_host.pytest_host")


def _run_debug(setup):
    import json

    try:
        root = load_repo(setup)
        os.environ["TMPDIR"] = root
    except BaseException as exc:
        sys.stdout.flush()
        send(exception_reply(0, exc, ""))
        return

    def reply(rid, data):
        sys.stdout.flush()
        send(json.dumps({"id": rid, "ok": data}))

    def request():
        try:
            return recv()
        except EOFError:  # the server closed the session
            os._exit(0)

    tracer = sys.modules["_adbg_tracer"].Tracer(root, reply, request, setup.get("stop_at_entry", True))
    for path, line, condition, log in setup.get("breakpoints", ()):
        try:
            tracer.add_break(path, line, condition, log)
        except SyntaxError:
            continue  # checked by the trusted side when it was set
    target = setup["target"]
    if target["kind"] == "test":
        tracer.run_test(target["id"])
    else:
        tracer.run_script(os.path.join(root, target["path"]))
    reply(tracer.pending, tracer.ended)


def name_process(name):
    # Shown by ps and /proc/<pid>/comm: "adbg-idle" waits in the pool, "adbg-run" serves a run.
    LAYERS.load_libc()[1].prctl(15, name, 0, 0, 0)  # PR_SET_NAME


def _run_pytest(setup):
    """A sandboxed verdict run: the project and its tests together here, pytest loaded before any of their code;
    the records (collected ids, each test's outcome) are the one reply."""
    import json

    try:
        root = load_repo(setup)
        os.environ["TMPDIR"] = root
    except BaseException as exc:
        sys.stdout.flush()
        send(exception_reply(0, exc, ""))
        return
    records = []

    class _NoRemote:
        ops = 0  # nothing crosses a process boundary here

    recorder = sys.modules["adbg_host.pytest_host"].Recorder(records.append, setup["select"], _NoRemote())
    plugins = [recorder]
    measure = _Coverage(root) if setup.get("coverage") else None
    if measure is not None:
        plugins.append(measure)
    ini = os.path.join(root, "adbg-pytest.ini")
    with open(ini, "w", encoding="utf-8") as handle:
        handle.write("[pytest]\n")  # the project's own pytest settings are the agent's to write: never read
    args = ["-q", "--no-header", "--rootdir", root, "-c", ini, "--tb=short", "-W", "ignore::DeprecationWarning"]
    for plugin in sys.modules["adbg_host.pytest_host"].UNUSED_PLUGINS:
        args += ["-p", "no:" + plugin]
    try:
        if measure is not None:
            measure.start()
        sys.modules["pytest"].main(args + list(setup["collect"]), plugins=plugins)
    except BaseException as exc:  # what the project's code did to the session: the run says so, outcomes stand
        records.append({"fatal": "the test session ended early: " + safe_str(exc)[:300]})
    if measure is not None:
        records.append({"coverage": measure.finish()})
    sys.stdout.flush()
    send(json.dumps({"id": 0, "ok": records}))


class _Coverage:
    """Which lines of the project each test executed (the coverage package, one dynamic context per test): for task
    synthesis, which mutates covered lines and screens each mutant with the tests that cover it."""

    def __init__(self, root):
        import coverage  # from the task's test environment

        self.root = root
        self.cov = coverage.Coverage(data_file=None, config_file=False, include=[root + "*"], auto_data=False)

    def start(self):
        self.cov.start()

    def pytest_runtest_logstart(self, nodeid, location):
        self.cov.switch_context(nodeid)

    def pytest_runtest_logfinish(self, nodeid, location):
        self.cov.switch_context("")

    def finish(self):
        """{"tests": [ids], "lines": {path: {line: [indices into tests]}}}: compact, a reply has a size limit."""
        self.cov.stop()
        data = self.cov.get_data()
        tests, index, lines = [], {}, {}
        for path in data.measured_files():
            if not path.startswith(self.root):
                continue
            per_line = {}
            for line, contexts in sorted(data.contexts_by_lineno(path).items()):
                ids = []
                for context in contexts:
                    if context:
                        if context not in index:
                            index[context] = len(tests)
                            tests.append(context)
                        ids.append(index[context])
                if ids:
                    per_line[str(line)] = sorted(ids)
            if per_line:
                lines[path[len(self.root):]] = per_line
        return {"tests": tests, "lines": lines}


def run(setup, explorer):
    """Load the submission and answer calls until the server is done with this run."""
    name_process(b"adbg-run")
    if setup.get("mode") == "repo":
        return run_repo(setup)
    if setup.get("mode") == "pytest":
        return _run_pytest(setup)
    if setup.get("mode") == "debug":
        return _run_debug(setup)
    try:
        module, filename = load_classic(setup)
    except BaseException as exc:
        sys.stdout.flush()
        send(exception_reply(0, exc, os.path.join(os.getcwd(), setup["filename"])))
        return
    sys.stdout.flush()
    send('{"id":0,"ok":"ready"}')
    serve_classic(module, filename, explorer)
    sys.stdout.flush()


def main(parent):
    """The fresh-interpreter path: isolate this process (dying with ``parent``), then run."""
    setup = recv()
    explorer = prepare(setup["config"])
    LAYERS.isolate(setup["config"], parent)
    run(setup, explorer)
