"""Where an evaluation's episodes run: on a server (over /ws, or plain HTTP), or in this process (env.server.in_process).
All move plain dicts.

    with WsDriver("http://localhost:8000") as env:     # or HttpDriver(...), InProcessDriver(runtime)
        obs = env.reset("easy", seed=1)                # profile="pdb" ... as reset options
        obs, reward, done = env.step({"action_type": "give_up"})
        tools = env.tools()                            # the episode's tools (its tools/list), as function definitions

HttpDriver also answers with the wire's bodies as they come (``start``, ``send``, ``state``): the validators
(env/validation/player.py) play their episodes through it and read the envelope (observation, reward, done) whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from env.tool_schemas import function_definitions

if TYPE_CHECKING:  # httpx is imported where a driver is made: importing this module stays free
    import httpx


class Driver(Protocol):
    """Where one episode at a time is played; a context manager that frees what it holds on exit."""

    def tasks(self) -> list[dict[str, Any]]: ...
    def task(self, task_id: str) -> dict[str, Any] | None: ...
    def fingerprint(self) -> str: ...
    def reset(self, task_id: str, seed: int, **options: Any) -> dict[str, Any]: ...
    def step(self, action: dict[str, Any]) -> tuple[dict[str, Any], float, bool]: ...
    def tools(self) -> list[dict[str, Any]]: ...
    def __enter__(self) -> Driver: ...
    def __exit__(self, *exc: object) -> None: ...


def listed_tools(obs: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools a list_tools step answered with; an error observation (no episode) fails with its message."""
    if "tools" not in obs:
        raise RuntimeError(f"list_tools answered no tools: {obs.get('error') or obs}")
    return function_definitions(obs["tools"])


class WsDriver:
    def __init__(self, url: str):
        # here, not at the top: OpenEnv's client loads its whole server package (~0.7 s); importing a driver is free
        from openenv.core.generic_client import GenericEnvClient

        self.url = url.rstrip("/")
        self.client = GenericEnvClient(base_url=self.url)

    def tasks(self) -> list[dict[str, Any]]:
        import httpx

        return httpx.get(f"{self.url}/tasks", timeout=30).json()

    def task(self, task_id: str) -> dict[str, Any] | None:
        import httpx

        response = httpx.get(f"{self.url}/tasks/{task_id}", timeout=120)
        return response.json() if response.status_code == 200 else None

    def reset(self, task_id: str, seed: int, **options: Any) -> dict[str, Any]:
        return dict(self.client.reset(task_id=task_id, seed=seed, **options).observation)

    def fingerprint(self) -> str:
        import httpx

        return str(httpx.get(f"{self.url}/health", timeout=30).json().get("secret_fingerprint", ""))

    def step(self, action: dict[str, Any]) -> tuple[dict[str, Any], float, bool]:
        result = self.client.step(action)
        return dict(result.observation), float(result.reward or 0.0), bool(result.done)

    def tools(self) -> list[dict[str, Any]]:
        return listed_tools(dict(self.client.step({"type": "list_tools"}).observation))

    def __enter__(self) -> WsDriver:
        self.client.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.__exit__(*exc)


class HttpDriver:
    """Plain HTTP: ``POST /reset`` then ``POST /step`` with the episode's id. It holds no connection, so
    it can live in a web UI's session state and be used from any of its worker threads."""

    def __init__(self, url: str, timeout_s: float = 120.0):
        import httpx

        self.url = url.rstrip("/")
        self.http = httpx.Client(base_url=self.url, timeout=timeout_s)
        self.episode_id: str | None = None
        self.done = True

    def tasks(self) -> list[dict[str, Any]]:
        return self.http.get("/tasks").raise_for_status().json()

    def task(self, task_id: str) -> dict[str, Any] | None:
        response = self.http.get(f"/tasks/{task_id}")
        return response.json() if response.status_code == 200 else None

    def fingerprint(self) -> str:
        return str(self.http.get("/health").raise_for_status().json().get("secret_fingerprint", ""))

    def start(self, task_id: str, seed: int, **options: Any) -> dict[str, Any]:
        """``POST /reset``: its body as the wire has it ({"observation", "reward", "done"}); the episode becomes this driver's."""
        payload: dict[str, Any] = self.http.post("/reset", json={"task_id": task_id, "seed": seed, **options}).raise_for_status().json()
        self.episode_id = payload.get("observation", {}).get("episode_id") or None
        self.done = bool(payload.get("done", False))
        return payload

    def reset(self, task_id: str, seed: int, **options: Any) -> dict[str, Any]:
        payload = self.start(task_id, seed, **options)
        return {**payload.get("observation", {}), "done": payload.get("done", False), "reward": payload.get("reward")}

    def _post_step(self, action: dict[str, Any]) -> httpx.Response:
        body: dict[str, Any] = {"action": action}
        if self.episode_id:  # without it the server would continue whichever HTTP episode started last
            body["episode_id"] = self.episode_id
        return self.http.post("/step", json=body)

    def send(self, action: dict[str, Any]) -> dict[str, Any]:
        """``POST /step``: its body as the wire has it, whatever the status (a refusal's body is what a validator reports)."""
        payload: dict[str, Any] = self._post_step(action).json()
        self.done = bool(payload.get("done"))
        return payload

    def step(self, action: dict[str, Any]) -> tuple[dict[str, Any], float, bool]:
        payload = self._post_step(action).raise_for_status().json()
        obs = {**payload.get("observation", {}), "done": payload.get("done", False), "reward": payload.get("reward")}
        self.done = bool(payload.get("done"))
        return obs, float(payload.get("reward") or 0.0), bool(payload.get("done"))

    def state(self) -> dict[str, Any]:
        """``GET /state`` of this driver's episode."""
        answer: dict[str, Any] = self.http.get("/state", params={"episode_id": self.episode_id}).json()
        return answer

    def tools(self) -> list[dict[str, Any]]:
        body = {"action": {"type": "list_tools"}, "episode_id": self.episode_id}
        return listed_tools(self.http.post("/step", json=body).raise_for_status().json().get("observation", {}))

    def __enter__(self) -> HttpDriver:
        return self

    def __exit__(self, *exc: object) -> None:
        # HTTP has no "close episode": giving up finishes it, so the server's store can evict it first
        # (an open one would hold a place, and a repository's workspace, until it expires).
        try:
            if self.episode_id and not self.done:
                self.step({"action_type": "give_up"})
        except Exception:  # noqa: BLE001 (the server may be gone; nothing is left to free then)
            pass
        finally:
            self.http.close()
