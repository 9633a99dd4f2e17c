"""The HTTP / WebSocket server: ``env.server.app:app`` (see ``python -m env.server``)."""
