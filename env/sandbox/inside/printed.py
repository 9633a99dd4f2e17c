"""The project's output in a repository run: what it prints goes to the tests with the next message."""

import sys

MAX_OUTPUT = 4 * 1024 * 1024  # what one run may print for the tests to see; past it, a note says it was cut


class Output:
    """The project's sys.stdout / sys.stderr: what it prints goes to the trusted process with its next message, and
    is written there to the test's own stream (capsys, redirect_stdout and pyparsing's debug tests read it); it also
    goes where it went before, the run's own output (the agent's run_tests shows it)."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, state, key, original):
        self.state, self.key, self.original = state, key, original

    def write(self, text):
        if type(text) is not str:
            raise TypeError("write() argument must be str, not " + type(text).__name__)
        self.original.write(text)
        state = self.state
        if state["printed"] < MAX_OUTPUT:
            kept = text[: MAX_OUTPUT - state["printed"]]
            state["printed"] += len(text)
            if len(kept) < len(text):
                kept += "\n[the project's output past %d characters is not shown]\n" % MAX_OUTPUT
            state["out"].append((self.key, kept))
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        self.original.flush()

    def isatty(self):
        return False

    def writable(self):
        return True

    def fileno(self):
        raise OSError("the project's output goes to the tests, not to a file")


def pending_output(state):
    """The pending output as a member of the next message (``,"o":[[stream, text], ...]``), then forgotten."""
    if not state["out"]:
        return ""
    sys.stdout.flush()  # the run's own output, in step with the tests'
    sys.stderr.flush()
    pending, state["out"] = state["out"], []
    quote = __import__("_json").encode_basestring_ascii
    return ',"o":[' + ",".join('["%s",%s]' % (key, quote(text)) for key, text in pending) + "]"
