"""The catalog of real-library tasks: a committed manifest (libraries pinned by sdist hash, and per task only what
regenerates it), and the commands that build, verify and count it (``python -m env.authoring catalog ...``)."""
