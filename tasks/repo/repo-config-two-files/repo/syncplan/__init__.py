"""syncplan: mirror sync configuration, scheduling and transfer planning."""

from syncplan.config import SyncConfig, load_config
from syncplan.errors import ConfigError, SyncPlanError, UnitError
from syncplan.mirror import Mirror
from syncplan.schedule import Run, build_schedule, max_concurrency
from syncplan.transfer import TransferPlan, plan_transfer

__all__ = [
    "ConfigError",
    "Mirror",
    "Run",
    "SyncConfig",
    "SyncPlanError",
    "TransferPlan",
    "UnitError",
    "build_schedule",
    "load_config",
    "max_concurrency",
    "plan_transfer",
]
