"""The published OpenAPI schema, fuzzed with schemathesis: no request may get a 500."""

import schemathesis
from hypothesis import HealthCheck, settings

from env.config import Settings
from env.families.registry import TaskRegistry
from env.runtime import Runtime
from env.sandbox.isolation import probe_isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.server.app import build_app

# Built at import, as schemathesis needs the schema at collection; one short-limit runtime.
APP = build_app(
    runtime=Runtime(TaskRegistry.builtin(), Sandbox(Limits(wall_seconds=2, cpu_seconds=1), probe_isolation()), workers=4),
    settings=Settings(),
)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_request_gets_a_server_error(case):
    response = case.call()
    assert response.status_code < 500, f"{case.method} {case.path} -> {response.status_code}: {response.text[:300]}"
