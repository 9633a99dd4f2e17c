"""Play the easy task over WebSocket with the typed client (one connection = one episode).

    python examples/ws_episode.py [http://localhost:8000]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env.client import DebugAction, DebugEnvClient  # noqa: E402  (no OpenEnv import: the client loads in a fraction of a second)
from examples.http_episode import FIX  # noqa: E402


def main(url: str) -> None:
    with DebugEnvClient(base_url=url) as client:
        result = client.reset(task_id="easy", seed=1)
        print(f"{result.observation.tests_passed}/{result.observation.tests_total} tests pass on the buggy code")
        result = client.step(DebugAction(action_type="submit_fix", fixed_code=FIX, hypothesis="off-by-one: the loop must run while left <= right"))
        obs = result.observation
        print(f"reward {result.reward}, done {result.done}, tests {obs.tests_passed}/{obs.tests_total}, grade {obs.grader_score}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://localhost:8000")
