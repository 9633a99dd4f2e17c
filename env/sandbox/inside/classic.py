"""The classic server: one submitted module loaded here, and "call f(args)" answered with a value or an exception.
The tests and their expected values never enter this process."""

import os
import sys

from .encoder import Encoder, decode, exception_reply
from .framing import recv, send


def load_classic(setup):
    import types

    filename = os.path.join(os.getcwd(), setup["filename"])
    with open(filename, "w", encoding="utf-8") as handle:  # for tracebacks (linecache)
        handle.write(setup["source"])
    module = types.ModuleType(setup["module"])
    module.__file__ = filename
    sys.modules[setup["module"]] = module
    exec(compile(setup["source"], filename, "exec"), module.__dict__)
    return module, filename


def serve_classic(module, filename, explorer):
    handles = {}
    while True:
        try:
            request = recv()
        except EOFError:
            return
        rid = request["id"]
        op = request["op"]
        if op == "exit":
            return
        try:
            if op == "explore":
                value = explorer.explore(module, filename, request["plan"])
            elif op == "hammer":
                value = explorer.hammer(module, request["plan"])
            else:
                owner = handles[request["handle"]] if "handle" in request else module
                member = getattr(owner, request["name"])
                if op == "call":
                    args = decode(request.get("args", []), handles)
                    kwargs = decode(request.get("kwargs", {}), handles)
                    value = member(*args, **kwargs)
                else:  # "getattr"
                    value = member
            reply = '{"id":%d,"ok":%s}' % (rid, Encoder(handles).encode(value))
        except BaseException as exc:  # the submission's exceptions are data for the tests
            reply = exception_reply(rid, exc, filename)
        sys.stdout.flush()
        send(reply)
