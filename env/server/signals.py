"""How a process started by this project stops: SIGTERM ends it normally, so its scratch files go with it.

    exit_cleanly_on_sigterm()   # in the main thread of the server and of the demo, before serving

Uvicorn (and Gradio) end with SIGTERM's default action, which skips atexit: the generated tasks and workspace
templates on /dev/shm were left behind by every stopped server. As an exception, the process exits normally and
cleans up. (Uvicorn restores the handler found here and re-raises the signal to it once it has shut down.)
"""

from __future__ import annotations

import signal
import threading
from types import FrameType


def exit_cleanly_on_sigterm() -> None:
    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)

    if threading.current_thread() is threading.main_thread():  # a handler can only be set there
        signal.signal(signal.SIGTERM, stop)
