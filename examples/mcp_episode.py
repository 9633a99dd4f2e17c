"""Play the easy task through OpenEnv's tool protocol (MCP) with OpenEnv's own MCPToolClient.

    python examples/mcp_episode.py [http://localhost:8000]

The client opens an MCP session (POST /mcp openenv/session/create) and attaches /ws to it; reset goes over /ws,
list_tools and call_tool over /mcp. A call's answer holds the step's reward and done, and the observation's
fields in ``result["data"]``.
"""

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openenv.core.mcp_client import MCPToolClient  # noqa: E402

from examples.http_episode import FIX  # noqa: E402


async def main(url: str) -> None:
    async with MCPToolClient(base_url=url) as env:
        await env.reset(task_id="easy", seed=1)
        print("tools:", ", ".join(tool.name for tool in await env.list_tools()))
        called = await env.call_tool("submit_fix", fixed_code=FIX, hypothesis="off-by-one: the loop must run while left <= right")
        obs = called["result"]["data"]
        print(f"reward {called['reward']}, done {called['done']}, tests {obs['tests_passed']}/{obs['tests_total']}, grade {obs['grader_score']}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "http://localhost:8000"))
