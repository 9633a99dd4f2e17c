"""What generating a procedural task leaves behind in the server's process (issue 47, finding 7): its validation runs
the generated tests in this process, and nothing of the generated package may stay once it is done: no module, no
logger (logging keeps every logger a module asks for), no cached source line or module file."""

import inspect
import linecache
import logging
import sys

from env.families.procedural.generator import sample


def _leftovers(package: str) -> list[str]:
    owned = lambda name: name == package or name.startswith(package + ".")  # noqa: E731
    found = [f"module {name}" for name in sys.modules if owned(name)]
    found += [f"logger {name}" for name in logging.Logger.manager.loggerDict if owned(name)]
    found += [f"linecache {path}" for path in linecache.cache if f"/{package}/" in path]
    found += [f"inspect {path}" for path in inspect.modulesbyfile if f"/{package}/" in path]
    return found


def test_a_generated_task_leaves_nothing_of_its_package_in_the_process():
    task = sample("medium", "train", 917)  # a fresh id: generated and validated here, in this process
    uses_logging = any("logging.getLogger(__name__)" in text for text in task.files.values())
    assert uses_logging  # (its modules ask for loggers: what logging would keep)
    assert _leftovers(task.package) == []
