import os
import sys

from env.server.port import port_problem

# Before the heavy imports: a port in use is said at once, with its holder, not after seconds of importing.
_port = os.environ.get("PORT") or "8000"
_problem = port_problem(os.environ.get("HOST") or "0.0.0.0", int(_port)) if _port.isdigit() else None  # else Settings says why
if _problem:
    sys.exit(f"env.server: {_problem}")

from env.sandbox.lifetime import started  # noqa: E402

started()  # dies with a parent that asks for it (the validator); sweeps the scratch of processes killed outright
from env.server.main import main  # noqa: E402

main()
