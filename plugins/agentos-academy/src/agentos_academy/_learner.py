"""The blocking side of an agent service: one AgentOS agent built from its folder, kept in memory."""

from __future__ import annotations

import os
import tempfile
import threading

#: Trainer settings that population-based training may copy and perturb (when the trainer has them).
TUNABLE = ("alpha", "gamma", "epsilon", "epsilon_decay", "learning_rate", "lr")


def _plain(value):
    """Numpy scalars and arrays as plain Python values, so any serializer carries them."""
    tolist = getattr(value, "tolist", None)
    return tolist() if callable(tolist) else value


class Learner:
    """An agent folder's agent, its recent returns, and the lock that serialises its use."""

    def __init__(self, agent_dir: str):
        from agentos import AgentContext
        from agentos.plugin_api import agent_ini_path

        self.path = agent_ini_path(str(agent_dir), "agentos serve PATH")
        self.name = os.path.basename(os.path.dirname(os.path.abspath(self.path)))
        self.context = AgentContext.from_path(self.path)
        self.agent = self.context.build_agent()
        self.returns: list[float] = []
        self.episodes_trained = 0
        self.steps_trained = 0
        self.lock = threading.Lock()

    def decide(self, observation):
        import numpy as np

        with self.lock:
            return _plain(self.agent.policy.decide(np.asarray(observation)))

    def run(self, episodes: int, seed: int | None = None) -> dict:
        from agentos import run_agent

        with self.lock:
            return run_agent(self.agent, episodes, seed=seed, config_path=self.path)

    def train(self, episodes: int | None = None, steps: int | None = None, seed: int | None = None) -> dict:
        if (episodes is None) == (steps is None):
            raise ValueError("give episodes or steps, not both")
        new: list[float] = []

        def callback(episode_return, length, *args, **kwargs):
            new.append(float(episode_return))
            self.steps_trained += int(length)
            return True

        with self.lock:
            self.agent.train(episodes=episodes, steps=steps, seed=seed, callback=callback)
            self.returns.extend(new)
            self.returns = self.returns[-1000:]
            self.episodes_trained += len(new)
        return {"episodes": len(new), "mean_return": sum(new) / len(new) if new else None}

    def stats(self, window: int = 20) -> dict:
        recent = self.returns[-window:]
        return {
            "name": self.name,
            "pid": os.getpid(),
            "episodes_trained": self.episodes_trained,
            "steps_trained": self.steps_trained,
            "recent_return": sum(recent) / len(recent) if recent else None,
            "settings": self.get_settings(),
        }

    def get_settings(self) -> dict:
        trainer = self.agent.trainer
        return {k: getattr(trainer, k) for k in TUNABLE if isinstance(getattr(trainer, k, None), (int, float))}

    def set_settings(self, settings: dict) -> dict:
        with self.lock:
            for key, value in settings.items():
                if key not in TUNABLE or not hasattr(self.agent.trainer, key):
                    raise ValueError(f"the trainer has no tunable setting {key!r}")
                setattr(self.agent.trainer, key, float(value))
        return self.get_settings()

    def get_weights(self) -> bytes:
        """The policy's checkpoint file, as bytes (any policy that can save and load)."""
        with self.lock, tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "policy")
            self.agent.policy.save(path)
            with open(path, "rb") as f:
                return f.read()

    def set_weights(self, weights: bytes) -> None:
        if not isinstance(weights, bytes | bytearray):
            raise TypeError("weights must be the bytes that get_weights returned")
        with self.lock, tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "policy")
            with open(path, "wb") as f:
                f.write(weights)
            self.agent.policy.load(path)

    def checkpoint(self) -> dict:
        """Record the policy as a finished run of the agent folder (``agentos runs`` lists it)."""
        from agentos.plugin_api import RunRecord

        with self.lock:
            rec = RunRecord.create(self.context, self.path, "train", request={"service": True})
            if rec is None:
                return {"run": None, "checkpoint": None}
            path = rec.save_checkpoint(self.agent.policy)
            recent = self.returns[-100:]
            rec.finish({
                "status": "finished",
                "episodes": self.episodes_trained,
                "steps": self.steps_trained,
                "mean_return": sum(recent) / len(recent) if recent else None,
            })
        return {"run": rec.id, "run_dir": rec.directory, "checkpoint": path}

    def close(self) -> None:
        self.context.close()
