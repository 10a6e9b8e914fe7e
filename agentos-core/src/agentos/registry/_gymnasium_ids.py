"""Gymnasium task ids as install names: ``agentos install environment LunarLander-v3``.

A standard Gymnasium id is the ``gymnasium`` environment (agentos-env-gymnasium) with the extra that
its family needs and ``id`` set to it. The families are known here as a table (no import of gymnasium
or of the environment package: the install decides before anything is installed); an id outside it
is not a name the registry knows, said in one line.
"""

from __future__ import annotations

import re

COMPONENT = "gymnasium"  # the environment component that plays every Gymnasium id
SETTING = "id"  # its setting naming the task (its ``make.task_setting``)

#: family -> (the extra of agentos-env-gymnasium it needs, or None; the environments' names)
FAMILIES = {
    "classic control": (None, ("CartPole", "MountainCar", "MountainCarContinuous", "Pendulum", "Acrobot")),
    "toy text": (None, ("FrozenLake", "FrozenLake8x8", "CliffWalking", "CliffWalkingSlippery", "Blackjack",
                        "Taxi")),
    "Box2D": ("box2d", ("LunarLander", "LunarLanderContinuous", "BipedalWalker", "BipedalWalkerHardcore",
                        "CarRacing")),
    "MuJoCo": ("mujoco", ("Ant", "HalfCheetah", "Hopper", "Humanoid", "HumanoidStandup",
                          "InvertedDoublePendulum", "InvertedPendulum", "Pusher", "Reacher", "Swimmer",
                          "Walker2d")),
}
_ID = re.compile(r"([A-Za-z][A-Za-z0-9]{0,63})-v([0-9]{1,3})")
#: Atari games (which exist, ale-py knows): ALE/Pong-v5 (and -ram), or rl-zoo's spelling PongNoFrameskip-v4
_ATARI = re.compile(r"ALE/[A-Z][A-Za-z0-9]{0,63}(-ram)?-v5|[A-Z][A-Za-z0-9]{0,63}NoFrameskip-v4")
_NAMES = {name: (family, extra) for family, (extra, names) in FAMILIES.items() for name in names}


def family(task: str) -> tuple[str, str | None] | None:
    """(family, the extra it needs or None) of a standard Gymnasium id, else None."""
    match = _ID.fullmatch(task)
    if match and match.group(1) in _NAMES:
        return _NAMES[match.group(1)]
    if _ATARI.fullmatch(task):
        return "Atari", "atari"
    return None


def looks_like_an_id(name: str) -> bool:
    """Whether ``name`` is spelled as a Gymnasium id (for the hint of an unknown one)."""
    return bool(_ID.fullmatch(name) or name.startswith("ALE/"))


KNOWN = "classic control, toy text, Box2D, MuJoCo and Atari (ALE/<Game>-v5)"


def preset_extra(preset: str) -> str | None:
    """The family extra that a preset named after a Gymnasium task needs, by its name's end
    (``zoo_ppo_lunarlander_v3`` -> ``box2d``, ``zoo_sac_halfcheetah_v5`` -> ``mujoco``,
    ``zoo_dqn_pongnoframeskip_v4`` and ``zoo_dqn_atari`` -> ``atari``), else None. The preset's package
    declares that extra."""
    low = preset.lower()
    if re.search(r"[a-z0-9]noframeskip_v4$|_atari$", low):  # rl-zoo's presets for any Atari game end in _atari
        return "atari"
    found = re.search(r"_([a-z0-9]+)_v[0-9]{1,3}$", low)
    lowered = {name.lower(): extra for name, (_, extra) in _NAMES.items()}
    return lowered.get(found.group(1)) if found else None
