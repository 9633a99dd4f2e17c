"""Retries for calls to the model endpoint: transient failures are retried with exponential backoff, others raised at once.

    policy = RetryPolicy.from_env()
    response = policy.call(lambda: client.chat.completions.create(**kwargs))

- Transient: a timeout, a lost or refused connection, HTTP 408, 429 and 5xx. Anything else (400, 401,
  403, 404, 422 ...) will fail the same way again, so it is raised on the first attempt.
- The delay before retry n (1, 2, ...) is ``base * 2**(n-1)``, capped at ``max``, less up to 25% of random
  jitter (so clients that failed together do not retry together). A ``Retry-After`` header (429, 503) is
  honoured instead, up to ``max``.
- When the attempts are spent, ``ModelUnavailable`` is raised from the last error.
- Every retry is logged (logger ``env.agents.retry``, level WARNING) with the error and the delay.

Why not the OpenAI SDK's own ``max_retries`` (openai 3.57, read against this module's tests): the SDK retries
HTTP 409, which fails the same way again here; its backoff is fixed (0.5 s doubling to 8 s), so the settings below
and the tests' fast retries cannot reach it; it gives up at once on a Retry-After over 120 s instead of waiting the
cap; it retries only its own errors, not a timeout raised by another client; and when its attempts are spent it
raises the last error, so a caller cannot tell "retried and still failing" (``ModelUnavailable``: the run stops,
naming the attempts) from a first failure. The SDK's ``timeout`` is used (``LLMAgent`` passes ``timeout_s``) and
its retries are off, so that attempts do not multiply.

Settings, from the environment (``RetryPolicy.from_env``, which ``env.settings.load`` fills and checks), declared with
their defaults in ``env/settings.py`` (listed in docs/evaluation.md): LLM_TIMEOUT_S (one request's timeout, the OpenAI
client's ``timeout``), LLM_MAX_ATTEMPTS (attempts per model call, the first included), LLM_BACKOFF_BASE_S (the first
retry's delay, doubling on each further one) and LLM_BACKOFF_MAX_S (the longest delay between two attempts).
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from env import settings
from env.settings import setting

log = logging.getLogger(__name__)
T = TypeVar("T")

TRANSIENT_STATUS = frozenset({408, 429})  # and every 5xx


class ModelUnavailable(RuntimeError):
    """The model endpoint kept failing transiently until the attempts were spent."""


def is_transient(exc: BaseException) -> bool:
    import openai  # here, not at the top: the SDK takes ~0.4 s to import, and only a failed request needs it

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in TRANSIENT_STATUS or exc.status_code >= 500
    # APITimeoutError is an APIConnectionError; the builtins cover clients other than OpenAI's
    return isinstance(exc, openai.APIConnectionError | TimeoutError | ConnectionError)


def describe(exc: BaseException) -> str:
    """One line naming the error (an HTTP status says more than the exception's class)."""
    import openai

    text = " ".join(str(exc).split()) or "(no message)"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {text}"
    return f"{type(exc).__name__}: {text}"


def retry_after(exc: BaseException) -> float | None:
    """The server's requested delay in seconds (Retry-After, or the non-standard retry-after-ms), if it sent one."""
    import openai

    if not isinstance(exc, openai.APIStatusError):
        return None
    headers: Mapping[str, str] = exc.response.headers
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name, ""))
        except ValueError:
            continue  # absent, or an HTTP date: fall back to our own backoff
        if math.isfinite(value) and value >= 0:
            return value / divisor
    return None


class RetryPolicy(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    timeout_s: float = setting("LLM_TIMEOUT_S", ge=0.001, allow_inf_nan=False)
    max_attempts: int = setting("LLM_MAX_ATTEMPTS", ge=1)
    base_delay_s: float = setting("LLM_BACKOFF_BASE_S", ge=0, allow_inf_nan=False)
    max_delay_s: float = setting("LLM_BACKOFF_MAX_S", ge=0, allow_inf_nan=False)
    jitter: float = 0.25  # the delay is cut by up to this fraction, at random
    sleep: Callable[[float], None] = Field(time.sleep, repr=False)
    rng: random.Random = Field(default_factory=random.Random, repr=False)

    # The same policy whatever clock it sleeps on and whatever dice it throws: those two are not compared.
    def _compared(self) -> tuple[float, int, float, float, float]:
        return self.timeout_s, self.max_attempts, self.base_delay_s, self.max_delay_s, self.jitter

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RetryPolicy) and self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    @classmethod
    def from_env(cls) -> RetryPolicy:
        return settings.load(cls)

    def delay(self, retry: int, exc: BaseException | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first retry)."""
        asked = retry_after(exc) if exc is not None else None
        if asked is not None:
            return min(asked, self.max_delay_s)
        backoff = min(self.base_delay_s * 2 ** min(retry - 1, 62), self.max_delay_s)
        return backoff * (1 - self.jitter * self.rng.random())

    def call(self, request: Callable[[], T]) -> T:
        for attempt in range(1, self.max_attempts + 1):
            try:
                return request()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                if attempt == self.max_attempts:
                    raise ModelUnavailable(f"the model endpoint failed {attempt} time(s); last: {describe(exc)}") from exc
                wait = self.delay(attempt, exc)
                log.warning("model request failed (%s); retry %d/%d in %.2fs", describe(exc), attempt, self.max_attempts - 1, wait)
                self.sleep(wait)
        raise AssertionError("unreachable: max_attempts is at least 1")  # for the type checker
