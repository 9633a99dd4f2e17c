"""Play the easy task over plain HTTP (any HTTP client works; this uses httpx).

    python examples/http_episode.py [http://localhost:8000]
"""

import sys

import httpx

FIX = '''def binary_search(arr, target):
    left, right = 0, len(arr) - 1
    while left <= right:
        mid = (left + right) // 2
        if arr[mid] == target:
            return mid
        if arr[mid] < target:
            left = mid + 1
        else:
            right = mid - 1
    return -1
'''


def main(url: str) -> None:
    with httpx.Client(base_url=url, timeout=60) as http:
        obs = http.post("/reset", json={"task_id": "easy", "seed": 1}).json()["observation"]
        episode = obs["episode_id"]
        print(f"episode {episode}: {obs['tests_passed']}/{obs['tests_total']} tests pass on the buggy code")
        step = http.post("/step", json={"episode_id": episode, "action": {"action_type": "query_context", "query_type": "test_details", "query_target": "test_finds_last_element"}}).json()
        print(step["observation"]["query_result"])
        action = {"action_type": "submit_fix", "fixed_code": FIX, "hypothesis": "off-by-one: the while loop stops when left == right; it must be left <= right"}
        step = http.post("/step", json={"episode_id": episode, "action": action}).json()
        obs = step["observation"]
        print(f"reward {step['reward']}, done {step['done']}, tests {obs['tests_passed']}/{obs['tests_total']}, grade {obs['grader_score']}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://localhost:8000")
