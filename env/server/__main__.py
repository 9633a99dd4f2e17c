import sys

from env import settings
from env.server.port import port_problem

# Before the heavy imports: a port in use is said at once, with its holder, not after seconds of importing.
_port = settings.raw("PORT") or str(settings.default("PORT"))
_problem = port_problem(settings.text("HOST"), int(_port)) if _port.isdigit() else None  # else Settings says why
if _problem:
    sys.exit(f"env.server: {_problem}")

from env.sandbox.lifetime import started  # noqa: E402

started()  # dies with a parent that asks for it (the validator); sweeps the scratch of processes killed outright
from env.server.main import main  # noqa: E402

main()
