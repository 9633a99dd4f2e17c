"""TRL's OpenRewardSpec (trl 1.16, `trl.experimental.openreward`) over the Open Reward Standard, without a model.

    pip install "trl[openreward]"
    python examples/trainers/trl_openreward.py [http://localhost:8000]

OpenRewardSpec gives a GRPOTrainer its three inputs: `train_dataset` (a row per task of a split), `environment_factory`
(an environment per rollout, with each of the task's tools as a method) and `reward_funcs` (the last reward a
rollout's calls returned). Here a scripted policy stands in for the model: it fixes the binary search of the `easy`
task and gives up on anything else. Pass `spec.train_dataset`, `spec.environment_factory` and `spec.reward_funcs` to
`GRPOTrainer(...)` to train; `grade_reward` below trains on the episode's grade instead of the last call's reward.
"""

import os
import sys

URL = sys.argv[1] if len(sys.argv) > 1 else "http://localhost:8000"
ENV_NAME = "agentdebugger-env"
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
# the openreward SDK reaches a session server at sessions.<host> unless told where it is
os.environ.setdefault("OPENREWARD_SESSION_URL", URL)
os.environ.setdefault("OPENREWARD_DISABLE_UPDATE_CHECK", "1")

from trl.experimental.openreward import OpenRewardSpec  # noqa: E402


def act(env, prompt: str) -> None:
    """One scripted episode: the tools are the environment's methods, called with keyword arguments."""
    if "binary_search" not in prompt:
        print("  give_up ->", env.give_up(final_diagnosis="not sure").splitlines()[-1])
        return
    print("  query_context ->", env.query_context(query_type="test_details", query_target="test_finds_last_element").splitlines()[-1])
    buggy = prompt.split("```python\n", 1)[1].split("```", 1)[0]
    fixed = buggy.replace("while left < right:", "while left <= right:")
    print("  submit_fix ->", env.submit_fix(fixed_code=fixed, hypothesis="the loop stops before checking the last element").splitlines()[-1])


def grade_reward(environments, **_) -> list[float]:
    """A reward function on the episode's grade, which the finishing call's metadata carries (`grade`)."""
    return [float(env.metadata[-1].get("grade") or 0.0) if env.finished else 0.0 for env in environments]


def main() -> None:
    spec = OpenRewardSpec(URL, split="test", indices=[0, 1], env_name=ENV_NAME)
    dataset = spec.train_dataset
    print("dataset:", dataset.num_rows, "rows; task ids", list(dataset["id"]))
    environments = []
    for row in dataset:
        env = spec.environment_factory()
        prompt = env.reset(**row)  # a session on the row's task (its split and index)
        print(f"task {row['id']}: {prompt.splitlines()[0][:80]}")
        act(env, prompt)
        print(f"  rewards per call {env.rewards}, finished {env.finished}, grade {env.metadata[-1]['grade']}")
        environments.append(env)
    print("reward_funcs (the last call's reward):", spec.reward_funcs(environments=environments))
    print("grade_reward (the episode's grade):", grade_reward(environments=environments))
    for env in environments:
        env._close()  # GRPOTrainer closes them at the end of a run


if __name__ == "__main__":
    main()
