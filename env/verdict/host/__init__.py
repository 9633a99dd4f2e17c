"""The trusted test process of a repository run, and nothing else: pytest and the task's test files here, the project's
code in the sandbox, reached through proxies.

It runs in a test environment of its own (``env.verdict.testenv``: the standard library, pytest and the task's declared
requirements, nothing of the server) and imports only the standard library, pytest and its siblings here, by relative
import: the server starts it as the package ``adbg_host`` (a link to this directory), never as part of ``env``.
"""
