"""Train the ``sb3`` policy with stable-baselines3 or sb3-contrib, hyperparameters from agent.ini.

Every setting other than the ones below goes to the algorithm's constructor (``learning_rate``,
``n_steps``, ``batch_size``, ``gamma``, ``gae_lambda``, ``n_epochs``, ``ent_coef``, ``clip_range``...;
unknown names are a clear error naming the accepted ones). As in rl-baselines3-zoo, ``lin_0.001``
means a schedule falling linearly from 0.001 to 0 over the ``--steps`` budget.

* ``algorithm``: PPO (default), A2C, DQN, SAC, TD3, DDPG, or sb3-contrib's QRDQN, TQC, TRPO,
  RecurrentPPO, MaskablePPO, ARS, CrossQ (HER is not offered: it needs goal-conditioned environments).
* ``network``: the SB3 policy class (MlpPolicy, CnnPolicy, MultiInputPolicy...; default: chosen
  from the observation space by the policy).
* ``action_noise`` (TD3, DDPG, SAC...): ``normal_0.1`` or ``ornstein_uhlenbeck_0.1`` (the sigma).
* ``policy_kwargs``: a JSON object of allowlisted plain data (``agentos_policy_sb3.check_policy_kwargs``).
* ``n_envs``: environments stepped together (default 1). Copies are made with ``gymnasium.make``
  from the agent's environment's ``spec`` (else with ``copy.deepcopy``).
* ``vec_env``: ``dummy`` (one process, default) or ``subproc`` (one process per environment).
* ``normalize``: wrap the environments in SB3's ``VecNormalize``: ``false`` (default), ``true``, or a JSON
  object of ``norm_obs``, ``norm_reward``, ``clip_obs``, ``clip_reward`` (rl-zoo's ``normalize``; its discount
  is the algorithm's ``gamma`` when set, as in rl-zoo). The statistics are handed to the policy, which saves
  them with its network and normalizes what it sees when it acts; training on continues from them.

SB3's training metrics (``train/loss``, ``train/entropy_loss``, ``train/learning_rate``, ``time/fps``,
``rollout/ep_rew_mean``...) go to AgentOS's trackers as SB3 logs them (:mod:`._metrics`).
"""

from __future__ import annotations

import copy
import inspect
import re

from agentos import Trainer
from agentos_policy_sb3 import (
    Normalization,
    algorithm_class,
    canonical_algorithm,
    check_policy_kwargs,
    normalize_options,
)

from ._ars import heed_callbacks
from ._masks import masked
from ._metrics import reporting_logger

__all__ = ["SB3Trainer", "linear_schedule"]

OWN = {"algorithm", "n_envs", "vec_env", "seed", "verbose", "normalize"}
#: keywords that take live objects (classes, callables): never from settings (action_noise has its own form)
RESERVED = {"policy", "env", "device", "policy_kwargs", "_init_setup_model", "tensorboard_log", "replay_buffer_class",
            "replay_buffer_kwargs", "rollout_buffer_class", "rollout_buffer_kwargs"}


class linear_schedule:  # noqa: N801 - used like a function, picklable like a class
    """``progress_remaining * initial``: SB3 calls it with 1.0 at the start and 0.0 at the end."""

    def __init__(self, initial: float):
        self.initial = float(initial)

    def __call__(self, progress_remaining: float) -> float:
        return progress_remaining * self.initial

    def __repr__(self) -> str:
        return f"lin_{self.initial}"


_NOISE = re.compile(r"^(normal|ornstein_uhlenbeck)_(\d+(\.\d*)?|\.\d+)$")


def _action_noise(text: str, action_space):
    """``normal_0.1`` / ``ornstein_uhlenbeck_0.1``: SB3's action noise with that sigma on every action."""
    import numpy as np
    from stable_baselines3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise

    kind, sigma = _NOISE.match(text).group(1, 2)
    shape = action_space.shape
    noise = NormalActionNoise if kind == "normal" else OrnsteinUhlenbeckActionNoise
    return noise(mean=np.zeros(shape), sigma=float(sigma) * np.ones(shape))


def _schedule(value):
    if isinstance(value, str) and value.startswith("lin_"):
        return linear_schedule(float(value[4:]))
    return value


class SB3Trainer(Trainer):
    """A stable-baselines3 or sb3-contrib algorithm on the agent's environment, into the ``sb3`` policy."""

    def __init__(
        self,
        algorithm: str = "PPO",
        n_envs: int = 1,
        vec_env: str = "dummy",
        seed: int | None = None,
        verbose: int = 0,
        network: str = "auto",
        policy_kwargs=None,
        normalize=False,
        **hyperparameters,
    ):
        algorithm = canonical_algorithm(algorithm)
        self.normalize = normalize_options(normalize)
        self.network = None if str(network).lower() == "auto" else str(network)
        self.policy_kwargs = check_policy_kwargs(policy_kwargs)
        if int(n_envs) < 1:
            raise ValueError(f"n_envs must be at least 1, got {n_envs}")
        if vec_env not in ("dummy", "subproc"):
            raise ValueError(f"vec_env must be dummy or subproc, not {vec_env!r}")
        self.algorithm, self.n_envs, self.vec_env = algorithm, int(n_envs), vec_env
        self.seed, self.verbose = seed, int(verbose)
        self.hyperparameters = {k: _schedule(v) for k, v in hyperparameters.items()}
        self._check_hyperparameters()
        noise = self.hyperparameters.get("action_noise")
        if noise is not None and not (isinstance(noise, str) and _NOISE.match(noise)):
            raise ValueError(f"action_noise must be normal_SIGMA or ornstein_uhlenbeck_SIGMA, not {str(noise)[:40]!r}")
        self.model = None
        self._model_net = None
        self.steps_taken = 0

    def _check_hyperparameters(self) -> None:
        cls = algorithm_class(self.algorithm)
        accepted = [n for n in inspect.signature(cls.__init__).parameters if n not in RESERVED | {"self", "kwargs"}]
        for key in self.hyperparameters:
            if key in RESERVED or key not in accepted:
                raise ValueError(f"{self.algorithm} has no hyperparameter {key!r} (accepted: {', '.join(accepted)})")

    def _noise(self, environment) -> dict:
        noise = self.hyperparameters.get("action_noise")
        return {} if noise is None else {"action_noise": _action_noise(noise, environment.action_space)}

    def _copies(self, environment) -> list:
        envs = [environment]
        for _ in range(self.n_envs - 1):
            spec = getattr(environment, "spec", None)
            if spec is not None:
                import gymnasium

                envs.append(gymnasium.make(spec))
            else:
                envs.append(copy.deepcopy(environment))
        return envs

    def _vec_env(self, environment):
        from stable_baselines3.common.monitor import Monitor
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        if self.vec_env == "subproc" and self.n_envs > 1:
            spec = getattr(environment, "spec", None)
            if spec is None:
                raise ValueError("vec_env = subproc needs an environment made by gymnasium.make (with a spec)")
            return SubprocVecEnv([_MakeMonitored(spec, self.algorithm == "MaskablePPO") for _ in range(self.n_envs)])
        mask = self.algorithm == "MaskablePPO"
        return DummyVecEnv([(lambda e=e: Monitor(masked(e) if mask else e)) for e in self._copies(environment)])

    def train(self, policy, environment, *, episodes=None, steps=None, seed=None, callback=None):
        """Train for ``steps`` steps, or until ``episodes`` episodes have ended; returns the model.

        ``steps`` is exact: SB3 is stopped at the first environment step at which ``steps`` steps have been
        taken (all environments together: rounded up to a multiple of ``n_envs``), in the middle of a
        rollout if need be (PPO and A2C learn from whole rollouts only, so the steps of an unfinished
        last rollout are taken but not learned from). ``steps_taken`` says how many were taken. ARS is
        the exception: it scores whole episodes of each candidate, so it stops at the end of that update."""
        from stable_baselines3.common.callbacks import BaseCallback

        if not hasattr(policy, "adopt_algorithm"):
            raise TypeError(f"the sb3 trainer trains the sb3 policy, not {type(policy).__name__}")
        if episodes is None and steps is None:
            raise ValueError("give episodes or steps")
        seed = self.seed if seed is None else seed
        policy.adopt_algorithm(self.algorithm, self.network, self.policy_kwargs)
        vec = self._training_vec = self._normalized(self._vec_env(environment), policy)
        if self.model is None or policy.net is not self._model_net:
            cls = algorithm_class(self.algorithm)
            model = cls(
                policy.network,
                vec,
                policy_kwargs=policy.policy_kwargs(),
                device=policy.device,
                seed=seed,
                verbose=self.verbose,
                **{**self.hyperparameters, **self._noise(environment)},
            )
            if getattr(model, "use_sde", False):  # on-policy algorithms hand use_sde to the network themselves
                policy.adopt_extras({"use_sde": True})
            if policy.net is not None:
                model.policy.load_state_dict(policy.net.state_dict())
            self.model = model
            reset = True
        else:
            self.model.set_env(vec)
            reset = False
        policy.net = self._model_net = self.model.policy
        limit = episodes if episodes is not None else float("inf")

        budget = steps
        trainer = self

        class Episodes(BaseCallback):
            count, stopped, start = 0, False, 0

            def _on_training_start(self) -> None:
                self.start = self.num_timesteps

            def _on_step(self) -> bool:
                trainer.steps_taken = self.num_timesteps - self.start
                self.stopped = self.stopped or self._stop()
                return not self.stopped

            def _stop(self) -> bool:
                for info in self.locals["infos"]:
                    episode = info.get("episode")
                    if episode is not None:
                        self.count += 1
                        if callback is not None and callback(float(episode["r"]), int(episode["l"])) is False:
                            return True
                        if self.count >= limit:
                            return True
                # exactly the budget (rounded up to a multiple of n_envs), not whole rollouts
                return budget is not None and trainer.steps_taken >= budget

        total = steps if steps is not None else 10**12
        self.steps_taken = 0
        if self.algorithm == "ARS":
            heed_callbacks(self.model)
        episodes_callback = Episodes()
        self.model.set_logger(reporting_logger(self.verbose, lambda: episodes_callback.start))
        try:
            self.model.learn(total_timesteps=total, callback=episodes_callback, reset_num_timesteps=reset)
            self.model.num_timesteps = self.model.__dict__.pop("_agentos_steps", self.model.num_timesteps)
        finally:
            self.model.policy.set_training_mode(False)
            if self.normalize is not None:
                policy.adopt_normalization(Normalization.from_vec_normalize(vec))
        return self.model

    def sync_policy(self, policy) -> None:
        """Mid-training (before an evaluation): the policy gets the current ``VecNormalize`` statistics."""
        vec = getattr(self, "_training_vec", None)
        if self.normalize is not None and vec is not None:
            policy.adopt_normalization(Normalization.from_vec_normalize(vec))

    def _normalized(self, vec, policy):
        """``vec`` in ``VecNormalize`` when ``normalize`` says so, continuing from the policy's statistics."""
        if self.normalize is None:
            if getattr(policy, "normalization", None) is not None:
                raise ValueError("the sb3 policy was trained on normalized observations: set normalize = true "
                                 "(or the options it was trained with) to train it on")
            return vec
        from stable_baselines3.common.vec_env import VecNormalize

        options = {"gamma": self.hyperparameters["gamma"]} if "gamma" in self.hyperparameters else {}
        vec = VecNormalize(vec, **options, **self.normalize)
        if isinstance(vec.obs_rms, dict):
            raise ValueError("normalize needs a Box observation space "
                             "(the sb3 policy cannot normalize Dict observations)")
        if policy.normalization is not None:
            policy.normalization.restore_into(vec)
        return vec


class _MakeMonitored:
    """A picklable factory for SubprocVecEnv: ``Monitor(gymnasium.make(spec))``."""

    def __init__(self, spec, mask: bool = False):
        self.spec, self.mask = spec, mask

    def __call__(self):
        import gymnasium
        from stable_baselines3.common.monitor import Monitor

        env = gymnasium.make(self.spec)
        return Monitor(masked(env) if self.mask else env)
