"""Procedurally generated debugging tasks under controlled noise and drift (the DebugOps-RX design)."""
