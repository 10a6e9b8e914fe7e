"""Import rl-baselines3-zoo's tuned hyperparameters as AgentOS presets (agentos-preset-zoo).

Reads rl_zoo3's own ``hyperparams/*.yml`` (the installed rl_zoo3 package, never imported: its files are
found by ``importlib.util.find_spec``), translates each (algorithm, task) pair whose task AgentOS can
install into plain data, and writes:

* ``plugins/agentos-preset-zoo/src/agentos_preset_zoo/zoo.json``: every preset, and every pair left
  out with the reason;
and the package's one ``agentos.preset`` entry point, ``zoo``, is the family of these presets
(``zoo_sac_pendulum_v1``: see ``agentos.core`` presets, "a family").

Nothing in the files is evaluated: ``policy_kwargs`` and ``normalize`` strings such as
``dict(net_arch=[64, 64], activation_fn=nn.ReLU)`` are read by a strict parser of literals
(:func:`parse_call`); schedules must be ``lin_<number>``. A pair that needs something AgentOS cannot
express (an env wrapper other than SB3's AtariWrapper, an optimizer class...) is skipped and listed with the reason.

    python tools/import_zoo_presets.py            # rewrite the files
    python tools/import_zoo_presets.py --check    # exit 1 when they differ from what rl_zoo3 gives
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import importlib.util
import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "plugins" / "agentos-preset-zoo"
DATA = PACKAGE / "src" / "agentos_preset_zoo" / "zoo.json"

#: rl-zoo's file -> the sb3 trainer's algorithm
ALGORITHMS = {"a2c": "A2C", "ars": "ARS", "crossq": "CrossQ", "ddpg": "DDPG", "dqn": "DQN", "ppo": "PPO",
              "ppo_lstm": "RecurrentPPO", "qrdqn": "QRDQN", "sac": "SAC", "td3": "TD3", "tqc": "TQC", "trpo": "TRPO"}
#: Gymnasium entry-point module -> the task family (and the agentos-env-gymnasium extra it needs)
FAMILIES = {"gymnasium.envs.classic_control": "classic_control", "gymnasium.envs.toy_text": "toy_text",
            "gymnasium.envs.box2d": "box2d", "gymnasium.envs.mujoco": "mujoco"}
#: rl-zoo keys that are not the algorithm's keywords, handled here
OWN = {"n_timesteps", "policy", "n_envs", "normalize", "policy_kwargs", "noise_type", "noise_std"}
#: keys AgentOS has no setting for (yet): a pair using one is skipped
NOT_EXPRESSIBLE = {"env_wrapper": "an env wrapper", "frame_stack": "frame stacking",
                   "vec_env_wrapper": "a VecEnv wrapper", "callback": "a training callback",
                   "replay_buffer_class": "a replay buffer class", "replay_buffer_kwargs": "replay buffer kwargs",
                   "env_kwargs": "environment kwargs", "monitor_kwargs": "Monitor kwargs"}
SCHEDULED = ("learning_rate", "clip_range", "clip_range_vf", "delta_std")
_SCHEDULE = re.compile(r"^lin_([0-9.]+([eE][-+]?[0-9]+)?)$")
#: torch.nn activation class -> the sb3 policy's activation name
ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu", "ELU": "elu", "LeakyReLU": "leaky_relu", "GELU": "gelu",
               "SiLU": "silu", "SELU": "selu", "Sigmoid": "sigmoid"}


class Refused(ValueError):
    """A pair AgentOS cannot express; the message is the reason listed in zoo.json."""


def _literal(node):
    """The value of ``node`` if it is a literal, a list of literals, ``dict(k=v...)`` or ``nn.<Activation>``."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, str, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) in (int, float):
        return -node.operand.value
    if isinstance(node, ast.List):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Call):
        return _call(node)
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
        return {k.value: _literal(v) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "nn" \
            and node.attr in ACTIVATIONS:
        return ACTIVATIONS[node.attr]
    raise Refused(f"{ast.unparse(node)[:60]} is code, not data")


def _call(node: ast.Call) -> dict:
    if not (isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args):
        raise Refused(f"{ast.unparse(node)[:60]} is code, not data")
    if any(k.arg is None for k in node.keywords):
        raise Refused(f"{ast.unparse(node)[:60]} unpacks a mapping")
    return {k.arg: _literal(k.value) for k in node.keywords}


def parse_call(text: str) -> dict:
    """``dict(net_arch=[64, 64], activation_fn=nn.ReLU)`` -> ``{"net_arch": [64, 64], "activation_fn": "relu"}``:
    parsed (``ast.parse``), never evaluated; anything but literals, lists, ``dict(...)`` and ``nn.<Activation>``
    is refused."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise Refused(f"{text[:60]!r} is not a dict(...) expression") from None
    if not isinstance(tree.body, ast.Call):
        raise Refused(f"{text[:60]!r} is not a dict(...) expression")
    return _call(tree.body)


def _number(key: str, value):
    if type(value) in (int, float) and math.isfinite(value):
        return value
    raise Refused(f"{key} = {str(value)[:40]!r} is not a finite number")


def translate(algo: str, task: str, hyperparams: dict) -> tuple[dict, dict]:
    """(trainer settings, notes) for one pair; :class:`Refused` when AgentOS cannot express it."""
    for key, what in NOT_EXPRESSIBLE.items():
        if key in hyperparams:
            raise Refused(f"needs {what} ({key} = {str(hyperparams[key])[:80]}), which AgentOS has no setting for")
    algorithm = ALGORITHMS[algo]
    settings: dict = {"algorithm": algorithm}
    network = hyperparams.get("policy", "MlpPolicy")
    if not isinstance(network, str) or not re.fullmatch(r"[A-Za-z]+Policy", network):
        raise Refused(f"policy {str(network)[:40]!r} is not one of the algorithm's policy names")
    settings["network"] = network
    n_envs = int(_number("n_envs", hyperparams.get("n_envs", 1)))
    if algorithm == "ARS":  # rl-zoo trains ARS on one environment and evaluates candidates on n_envs workers
        n_envs = 1
    if n_envs != 1:
        settings["n_envs"] = n_envs
    normalize = hyperparams.get("normalize", False)
    if isinstance(normalize, str):
        normalize = parse_call(normalize)
    if isinstance(normalize, dict):
        if not set(normalize) <= {"norm_obs", "norm_reward"} or not all(type(v) is bool for v in normalize.values()):
            raise Refused(f"normalize {normalize} has keys other than norm_obs and norm_reward")
        settings["normalize"] = json.dumps(normalize, sort_keys=True)
    elif normalize is True:
        settings["normalize"] = True
    elif normalize is not False:
        raise Refused(f"normalize = {str(normalize)[:40]!r} is neither a bool nor dict(norm_obs=..., norm_reward=...)")
    if "noise_type" in hyperparams:
        noise = str(hyperparams["noise_type"]).strip()
        kind = {"normal": "normal", "ornstein-uhlenbeck": "ornstein_uhlenbeck"}.get(noise)
        sigma = _number("noise_std", hyperparams.get("noise_std"))
        if kind is None:
            raise Refused(f"noise_type {hyperparams['noise_type']!r} is not normal or ornstein-uhlenbeck")
        settings["action_noise"] = f"{kind}_{sigma}"
    if "policy_kwargs" in hyperparams:
        kwargs = hyperparams["policy_kwargs"]
        kwargs = parse_call(kwargs) if isinstance(kwargs, str) else kwargs
        if not isinstance(kwargs, dict):
            raise Refused(f"policy_kwargs {str(kwargs)[:40]!r} is not a dict")
        try:
            from agentos_policy_sb3 import check_policy_kwargs

            check_policy_kwargs(kwargs)
        except ValueError as error:
            raise Refused(str(error)) from None
        settings["policy_kwargs"] = json.dumps(kwargs, sort_keys=True)
    for key, value in hyperparams.items():
        if key in OWN:
            continue
        if key in SCHEDULED and isinstance(value, str):
            if not _SCHEDULE.match(value):
                raise Refused(f"{key} = {value!r} is not a lin_<number> schedule")
            settings[key] = value
        elif isinstance(value, list):
            if not all(type(v) in (int, str) for v in value):
                raise Refused(f"{key} = {value!r} is not a list of numbers and names")
            settings[key] = value
        elif type(value) in (bool, str) or (type(value) in (int, float) and math.isfinite(value)):
            settings[key] = value
        else:
            raise Refused(f"{key} = {str(value)[:40]!r} is not plain data")
    return settings, {"n_timesteps": int(_number("n_timesteps", hyperparams["n_timesteps"]))}


def family(task: str) -> str:
    """The task family of a Gymnasium id; :class:`Refused` for ids AgentOS cannot install."""
    import gymnasium

    try:
        spec = gymnasium.spec(task)
    except gymnasium.error.Error:
        raise Refused("not a Gymnasium task AgentOS can install (its package is not a task family of "
                      "agentos-env-gymnasium)") from None
    entry = spec.entry_point
    if not isinstance(entry, str):  # Gymnasium 1.x registers mujoco-py's v2/v3 ids with a function that raises
        raise Refused(f"{task} is a mujoco-py task (MuJoCo v2/v3), which Gymnasium 1.x cannot run")
    module, _, _ = entry.partition(":")
    if module.startswith("gymnasium.envs.mujoco") and not re.search(r"_v[45]$", module):
        raise Refused(f"{task} is a mujoco-py task (MuJoCo v2/v3), which Gymnasium 1.x cannot run")
    for prefix, name in FAMILIES.items():
        if module.startswith(prefix):
            return name
    raise Refused(f"{task}'s entry point {entry} is not in a task family AgentOS installs")


#: The game an Atari preset plays unless agent.ini's ``id`` names another (rl-zoo's ``atari`` entry is for any game)
ATARI_ID = "PongNoFrameskip-v4"
ATARI_WRAPPER = "stable_baselines3.common.atari_wrappers.AtariWrapper"
#: AtariWrapper's keywords that agentos-env-gymnasium's Atari settings take (with the same meaning)
ATARI_KEYWORDS = {"noop_max", "frame_skip", "screen_size", "terminal_on_life_loss", "clip_reward"}


def atari_environment(hyperparams: dict) -> dict:
    """rl-zoo's ``env_wrapper: [AtariWrapper]`` and ``frame_stack`` (taken out of ``hyperparams``) as the
    gymnasium environment's settings: ``atari_wrappers = true``, the wrapper's keywords, ``frame_stack``."""
    wrappers = hyperparams.pop("env_wrapper", None)
    stack = hyperparams.pop("frame_stack", None)
    (wrapper,) = wrappers if isinstance(wrappers, list) and len(wrappers) == 1 else (None,)
    name, kwargs = (wrapper, {}) if isinstance(wrapper, str) else (
        next(iter(wrapper.items())) if isinstance(wrapper, dict) and len(wrapper) == 1 else (None, None))
    if name != ATARI_WRAPPER or not isinstance(kwargs, dict) or not set(kwargs) <= ATARI_KEYWORDS:
        raise Refused(f"env_wrapper {str(wrappers)[:80]} is not SB3's AtariWrapper with settings AgentOS has")
    environment = {"id": ATARI_ID, "atari_wrappers": True, **kwargs}
    if stack is not None:
        environment["frame_stack"] = int(_number("frame_stack", stack))
    return environment


def variant_name(algo: str, task: str) -> str:
    """``sac``, ``Pendulum-v1`` -> ``sac_pendulum_v1`` (the preset ``zoo_sac_pendulum_v1``)."""
    return re.sub(r"[^a-z0-9]+", "_", f"{algo}_{task}".lower()).strip("_")


def zoo_files() -> tuple[str, Path]:
    spec = importlib.util.find_spec("rl_zoo3")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("rl_zoo3 is not installed (pip install --no-deps rl_zoo3==2.9.2)")
    return importlib.metadata.version("rl_zoo3"), Path(next(iter(spec.submodule_search_locations))) / "hyperparams"


def build() -> dict:
    import yaml

    version, folder = zoo_files()
    presets, skipped = {}, []
    for path in sorted(folder.glob("*.yml")):
        algo = path.stem
        table = yaml.safe_load(path.read_text())
        for task, hyperparams in table.items():
            if task == "default":
                continue
            try:
                if algo not in ALGORITHMS:
                    raise Refused(f"{algo} is not offered by the sb3 trainer (HER needs goal-conditioned tasks)")
                hyperparams = dict(hyperparams)
                if task == "atari":  # any Atari game: the wrappers are the environment's settings
                    task_family, environment = "atari", atari_environment(hyperparams)
                else:
                    task_family, environment = family(task), {"id": task}
                settings, notes = translate(algo, task, hyperparams)
            except Refused as reason:
                skipped.append({"algorithm": algo, "task": task, "reason": str(reason)})
                continue
            name = variant_name(algo, task)
            what = "Atari games" if task == "atari" else task
            steps = notes["n_timesteps"]
            presets[name] = {
                "zoo": {"algorithm": algo, "task": task, "family": task_family, "n_timesteps": steps},
                "summary": f"rl-zoo's {ALGORITHMS[algo]} on {what} (rl_zoo3 {version}; "
                           f"agentos train agent.ini {steps} --steps)"
                           + (f"; {ATARI_ID} unless id names another game" if task == "atari" else ""),
                "components": {"policy": ["sb3", {"device": "cpu"}], "trainer": ["sb3", settings]},
                "environment": "gymnasium",
                "environments": {"gymnasium": {"environment": environment}},
            }
    return {"source": {"package": "rl_zoo3", "version": version, "files": "rl_zoo3/hyperparams/*.yml"},
            "presets": presets, "skipped": skipped}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the files differ from rl_zoo3's")
    args = parser.parse_args(argv)
    data = build()
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.check:
        same = DATA.read_text() == text
        print("zoo presets match rl_zoo3" if same else f"out of date: {DATA.relative_to(ROOT)}")
        return 0 if same else 1
    DATA.write_text(text)
    print(f"{len(data['presets'])} presets, {len(data['skipped'])} pairs skipped (see {DATA.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
