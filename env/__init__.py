"""AgentDebuggerEnv: an OpenEnv environment in which agents debug code."""

from env.openenv_imports import defer_openenv_extras

defer_openenv_extras()  # before any of our modules imports OpenEnv: Gradio loads only for a web UI, FastMCP only when used
