"""TRL GRPOTrainer with `environment_factory`: two GRPO steps of a tiny random model against a running server.

    python examples/trainers/trl_grpo.py [http://localhost:8000]

Nothing is downloaded: the model (Qwen3, 2 layers, hidden 64) and a byte-level tokenizer are built here, with TRL's
Qwen3 chat template so that TRL parses tool calls. Swap in a real model for real training.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402
from trl.chat_template_utils import qwen3_chat_template  # noqa: E402

from env.client import DebugAction, DebugEnvClient  # noqa: E402

URL = sys.argv[1] if len(sys.argv) > 1 else "http://localhost:8000"


class DebugEnv:
    """One instance per rollout, kept for the whole run: one WebSocket session, one episode per `reset`."""

    def __init__(self):
        self.client = DebugEnvClient(base_url=URL).sync()
        self.client.connect()

    def reset(self, task_id="easy", seed=0, **_):
        self.result = self.client.reset(task_id=task_id, seed=seed)
        self.rewards = []
        return f"\n{self.result.observation.task_description}\n\n{self.result.observation.buggy_code}"

    def _act(self, **fields) -> str:
        if self.result.done:
            return "The episode is over."
        self.result = self.client.step(DebugAction(**fields))
        self.rewards.append(self.result.reward)
        obs = self.result.observation
        return obs.error or obs.query_result or f"{obs.tests_passed}/{obs.tests_total} tests pass\n{obs.current_error_output}"

    def submit_fix(self, fixed_code: str, hypothesis: str) -> str:
        """Submit the whole corrected module and run the tests.

        Args:
            fixed_code: The complete corrected module.
            hypothesis: Your theory of the bug.
        """
        return self._act(action_type="submit_fix", fixed_code=fixed_code, hypothesis=hypothesis)

    def query_context(self, query_type: str, query_target: str) -> str:
        """Ask about the code or the tests.

        Args:
            query_type: One of function_signature, related_code, error_explanation, test_details.
            query_target: A function, class or test name.
        """
        return self._act(action_type="query_context", query_type=query_type, query_target=query_target)

    def give_up(self, final_diagnosis: str) -> str:
        """End the episode.

        Args:
            final_diagnosis: What you believe the bug is.
        """
        return self._act(action_type="give_up", final_diagnosis=final_diagnosis)

    def get_reward(self) -> float:
        if not self.result.done:  # the model stopped without ending the episode: giving up grades it
            self.give_up("unfinished")
        return sum(self.rewards)  # the step rewards of an episode sum to its return


def tiny_model_and_tokenizer():
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer, bpe.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    bpe.train_from_iterator(["def binary_search(arr, target): return -1"], trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                  padding_side="left", chat_template=qwen3_chat_template)
    config = Qwen3Config(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=16384,
                         eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    return Qwen3ForCausalLM(config), tok


model, tokenizer = tiny_model_and_tokenizer()
prompt = [{"role": "user", "content": "Fix the bug with the tools."}]
data = Dataset.from_dict({"prompt": [prompt] * 2, "task_id": ["easy", "medium"], "seed": [1, 2]})
args = GRPOConfig(output_dir="/tmp/trl-grpo-debugenv", max_steps=2, per_device_train_batch_size=2, num_generations=2,
                  max_completion_length=24, max_tool_calling_iterations=2, use_cpu=True, report_to="none",
                  logging_steps=1, save_strategy="no", shuffle_dataset=False)
trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=data, environment_factory=DebugEnv)
trainer.train()
logs = [log for log in trainer.state.log_history if "reward" in log]
envs = [env for pool in trainer._environment_pool.values() for env in pool]
print(f"trained {trainer.state.global_step} steps; mean reward per step {[round(log['reward'], 4) for log in logs]};",
      f"{len(envs)} sessions; last episodes done: {[env.result.done for env in envs]}")
