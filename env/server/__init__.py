"""The HTTP / WebSocket server: ``env.server.main:app`` (see ``python -m env.server``)."""
