"""Deep Q-learning for the ``dqn`` policy: replay buffer, target network, epsilon schedule, clipping.

Every ``train_freq`` steps (after ``learning_starts``), ``gradient_steps`` minibatches of
``batch_size`` transitions from the replay buffer (``buffer_size``, uniform) take an Adam step on
the Huber (or MSE) loss between ``Q(s, a)`` and ``r + gamma * Q_target(s', argmax_a Q(s', a))``
(double DQN; ``double = false`` uses ``max_a Q_target``), with the gradient norm clipped to
``max_grad_norm``. The target network copies the online one every ``target_update`` steps.
Epsilon falls linearly from ``epsilon_start`` to ``epsilon_end`` over ``epsilon_steps`` steps.
Rewards are multiplied by ``reward_scale`` (then ``log1p``'d, sign kept, with
``reward_transform = log1p``) before learning; episode returns reported are the raw ones.
Only termination cuts the bootstrap; truncation does not. ``threads`` > 0 sets torch's number of
CPU threads; 0 (the default) keeps the process's count (``agentos.plugin_api.use_torch_threads``: one,
unless ``[agentos] threads``, ``--threads`` or ``$OMP_NUM_THREADS`` say otherwise; one is fastest for
these small networks).
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch
from agentos import Trainer
from agentos.plugin_api import use_torch_threads

__all__ = ["DQNTrainer", "ReplayBuffer"]


class ReplayBuffer:
    """Transitions in preallocated numpy arrays (observations in their own dtype)."""

    def __init__(self, capacity: int, observation, seed=None):
        obs = np.asarray(observation)
        self.capacity = int(capacity)
        self.obs = np.zeros((self.capacity, *obs.shape), obs.dtype)
        self.next_obs = np.zeros_like(self.obs)
        self.actions = np.zeros(self.capacity, np.int64)
        self.rewards = np.zeros(self.capacity, np.float32)
        self.dones = np.zeros(self.capacity, np.float32)
        self.size = self.index = 0
        self.rng = np.random.default_rng(seed)

    def add(self, obs, action, reward, next_obs, done) -> None:
        i = self.index
        self.obs[i], self.actions[i], self.rewards[i], self.next_obs[i], self.dones[i] = (
            obs,
            action,
            reward,
            next_obs,
            done,
        )
        self.index = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, n: int):
        idx = self.rng.integers(0, self.size, n)
        return self.obs[idx], self.actions[idx], self.rewards[idx], self.next_obs[idx], self.dones[idx]


class DQNTrainer(Trainer):
    """DQN with a replay buffer and a target network; see the module docstring for the settings."""

    def __init__(
        self,
        learning_rate: float = 5e-4,
        gamma: float = 0.99,
        buffer_size: int = 50_000,
        batch_size: int = 64,
        learning_starts: int = 1_000,
        train_freq: int = 4,
        gradient_steps: int = 1,
        target_update: int = 1_000,
        epsilon_start: float = 1.0,
        epsilon_end: float = 0.05,
        epsilon_steps: int = 50_000,
        max_grad_norm: float = 10.0,
        double: bool = True,
        loss: str = "huber",
        reward_scale: float = 1.0,
        reward_transform: str = "none",
        threads: int = 0,
        seed: int | None = None,
    ):
        if loss not in ("huber", "mse"):
            raise ValueError(f"loss must be huber or mse, not {loss!r}")
        if reward_transform not in ("none", "log1p"):
            raise ValueError(f"reward_transform must be none or log1p, not {reward_transform!r}")
        for name, value in (
            ("buffer_size", buffer_size),
            ("batch_size", batch_size),
            ("train_freq", train_freq),
            ("target_update", target_update),
            ("gradient_steps", gradient_steps),
        ):
            if int(value) < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        self.learning_rate, self.gamma = float(learning_rate), float(gamma)
        self.buffer_size, self.batch_size = int(buffer_size), int(batch_size)
        self.learning_starts, self.train_freq, self.gradient_steps = (
            int(learning_starts),
            int(train_freq),
            int(gradient_steps),
        )
        self.target_update = int(target_update)
        self.epsilon_start, self.epsilon_end, self.epsilon_steps = (
            float(epsilon_start),
            float(epsilon_end),
            int(epsilon_steps),
        )
        self.max_grad_norm, self.double, self.loss = float(max_grad_norm), bool(double), loss
        self.reward_scale, self.reward_transform = float(reward_scale), reward_transform
        self.seed, self.threads = seed, int(threads)
        self.total_steps = 0  # across train() calls: the epsilon schedule continues
        self.buffer = self.target = self.optimizer = None
        self._net = None

    def epsilon(self, step: int) -> float:
        if step >= self.epsilon_steps:
            return self.epsilon_end
        return self.epsilon_start + (self.epsilon_end - self.epsilon_start) * step / self.epsilon_steps

    def _reward(self, reward: float) -> float:
        r = reward * self.reward_scale
        return math.copysign(math.log1p(abs(r)), r) if self.reward_transform == "log1p" else r

    def _update(self, policy) -> float:
        net, target = policy.net, self.target
        obs, actions, rewards, next_obs, dones = self.buffer.sample(self.batch_size)
        device = policy.device
        obs_t, next_t = policy.to_tensor(obs), policy.to_tensor(next_obs)
        actions_t = torch.as_tensor(actions, device=device)
        rewards_t, dones_t = torch.as_tensor(rewards, device=device), torch.as_tensor(dones, device=device)
        q = net(obs_t).gather(1, actions_t[:, None])[:, 0]
        with torch.no_grad():
            next_target = target(next_t)
            if self.double:
                best = net(next_t).argmax(1, keepdim=True)
                next_q = next_target.gather(1, best)[:, 0]
            else:
                next_q = next_target.max(1).values
            y = rewards_t + self.gamma * (1.0 - dones_t) * next_q
        loss_fn = torch.nn.functional.smooth_l1_loss if self.loss == "huber" else torch.nn.functional.mse_loss
        loss = loss_fn(q, y)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), self.max_grad_norm)
        self.optimizer.step()
        return loss.item()

    def train(self, policy, environment, *, episodes=None, steps=None, seed=None, callback=None):
        """Train for ``episodes`` episodes or ``steps`` steps; returns the number of steps taken."""
        if not hasattr(policy, "net") or not hasattr(policy, "act"):
            raise TypeError(f"the dqn_sgd trainer trains the dqn policy, not {type(policy).__name__}")
        if episodes is None and steps is None:
            raise ValueError("give episodes or steps")
        seed = self.seed if seed is None else seed
        use_torch_threads(self.threads or None)
        if seed is not None:
            torch.manual_seed(seed)
            policy.seed(seed)
        observation, _ = environment.reset(seed=seed)
        if self.buffer is None:
            self.buffer = ReplayBuffer(self.buffer_size, observation, seed)
        if self._net is not policy.net:
            self.target = copy.deepcopy(policy.net)
            self.target.eval()
            self.optimizer = torch.optim.Adam(policy.net.parameters(), lr=self.learning_rate)
            self._net = policy.net
        net = policy.net
        net.train()
        act, step_env, add = policy.act, environment.step, self.buffer.add
        start = policy.action_start
        max_episodes = episodes if episodes is not None else math.inf
        max_steps = steps if steps is not None else math.inf
        done_episodes = taken = 0
        policy.reset()
        episode_return, length = 0.0, 0
        report = self.episode_reporter(callback)
        try:
            while done_episodes < max_episodes and taken < max_steps:
                action = act(observation, self.epsilon(self.total_steps))
                next_observation, reward, terminated, truncated, info = step_env(start + action)
                add(observation, action, self._reward(reward), next_observation, terminated)
                observation = next_observation
                episode_return += reward
                length += 1
                taken += 1
                self.total_steps += 1
                t = self.total_steps
                if t > self.learning_starts and t % self.train_freq == 0 and self.buffer.size >= self.batch_size:
                    for _ in range(self.gradient_steps):
                        self._update(policy)
                if t % self.target_update == 0:
                    self.target.load_state_dict(net.state_dict())
                if terminated or truncated:
                    done_episodes += 1
                    if report(episode_return, length, info) is False:
                        break
                    observation, _ = environment.reset()
                    policy.reset()
                    episode_return, length = 0.0, 0
            if length and taken >= max_steps:
                # the --steps budget ends the episode in progress: it is reported (a partial return)
                # so that the run counts every step it took
                report(episode_return, length)
        finally:
            net.eval()
        return taken
