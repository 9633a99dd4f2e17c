"""The Gradio demo: play an episode as the agent, watch a baseline play, replay a saved trajectory.

    python app.py                          # in-process environment, http://localhost:7860
    python app.py --url http://host:8000   # against a running server
    ENABLE_WEB_INTERFACE=true python -m env.server   # mounted on the server at /web

``session`` holds one browser session's episode, ``trajectory`` saves, loads and replays episodes,
``commands`` turns pdb-like text into debugger tool calls, ``view`` renders observations (pure
functions), and ``ui`` wires them into Gradio blocks.
"""
