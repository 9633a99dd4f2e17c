"""A live debugger over the API: one sandboxed session per episode (see ``session.py``)."""
