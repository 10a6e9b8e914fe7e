"""Multi-stage n-tuple networks: one weight set per game stage, chosen by the largest tile.

``bounds`` is an ascending int64 array of tile exponents (e.g. ``[14]`` for 16384).  The stage of
a board is how many bounds its largest tile reaches, so a game enters stage ``k`` at the first
afterstate holding a tile of ``2 ** bounds[k - 1]`` or more, and never leaves it (the largest tile
of a game never shrinks).  Stage ``k``'s weights are ``weights[k * size : (k + 1) * size]`` of one
flat array; with no bounds there is one stage and the network is the plain one.
"""

from __future__ import annotations

import numpy as np
from agentos_env_2048.kernels import max_exponent, njit

from agentos_policy_ntuple._network import add_at, value_at


def parse_stage_tiles(text) -> tuple[int, ...]:
    """``"8192 16384"`` (spaces or commas) -> exponents ``(13, 14)``; tiles are powers of 2, 4-32768, rising."""
    parts = str(text or "").replace(",", " ").split()
    exponents = []
    for part in parts:
        try:
            tile = int(part)
        except ValueError:
            raise ValueError(f"stage_tiles are tile values such as 16384, got {part!r}") from None
        if tile < 4 or tile > 32768 or tile & (tile - 1):
            raise ValueError(f"a stage tile is a power of 2 from 4 to 32768, got {tile}")
        exponents.append(tile.bit_length() - 1)
    if exponents != sorted(set(exponents)):
        raise ValueError(f"stage_tiles must rise strictly, got {text!r}")
    if len(exponents) > 7:
        raise ValueError("at most 7 stage tiles (8 stages)")
    return tuple(exponents)


@njit(inline=True)
def stage_of(board, bounds):
    """How many of ``bounds`` (tile exponents) the largest tile of ``board`` reaches."""
    if bounds.shape[0] == 0:
        return 0
    top = max_exponent(board)
    stage = 0
    for k in range(bounds.shape[0]):  # (by index: iterating an array counts its references, atomically)
        if top >= bounds[k]:
            stage += 1
    return stage


@njit(inline=True)
def stage_base(board, bounds, size):
    """Where the weights of ``board``'s stage start: ``stage_of(board, bounds) * size``."""
    return stage_of(board, bounds) * size


@njit(inline=True)
def stage_network(net, size, stage):
    """The network of one stage: the same layout over that stage's slice of the weights (a new array
    view per call: hot loops use :func:`stage_base` and the ``_at`` kernels, which make none)."""
    default, weights, segments, counts, offsets = net
    return (default, weights[stage * size : (stage + 1) * size], segments, counts, offsets)


@njit(inline=True)
def staged_value(board, net, size, bounds):
    """The value of ``board`` under the weights of its own stage."""
    return value_at(board, net, stage_of(board, bounds) * size)


@njit(inline=True)
def staged_add(board, delta, net, size, bounds):
    """Add ``delta`` to the weights ``board`` reads in its own stage."""
    add_at(board, delta, net, stage_of(board, bounds) * size)


def bounds_array(exponents) -> np.ndarray:
    """The int64 array the kernels take."""
    return np.array(exponents, dtype=np.int64)
