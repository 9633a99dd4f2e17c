"""sensorkit: parsing, smoothing, alerting and reporting for sensor readings."""

from sensorkit.alerts import Alert, AlertRule, evaluate
from sensorkit.readings import Reading, parse_line, parse_lines
from sensorkit.smoothing import ewma, moving_average
from sensorkit.window import last_n, sliding, tumbling

__all__ = [
    "Alert",
    "AlertRule",
    "Reading",
    "evaluate",
    "ewma",
    "last_n",
    "moving_average",
    "parse_line",
    "parse_lines",
    "sliding",
    "tumbling",
]
