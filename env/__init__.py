"""AgentDebuggerEnv: an OpenEnv environment in which agents debug code."""

from env.openenv_imports import hold_web_interface

hold_web_interface()  # before any of our modules imports OpenEnv: Gradio loads only for a web UI
