"""The public n-tuple value network: what the TD trainer and third-party learners build on.

This module is a stable API of ``agentos-policy-ntuple`` (its names change only with a major
version). Importing it imports numpy and numba; boards and moves are those of
:mod:`agentos_env_2048.kernels`.

Tuples and layout
    A tuple is a sequence of 1-8 distinct cells (0-15, row-major); :data:`DEFAULT_TUPLES` are the
    four 6-tuples of Szubert & Jaśkowski / Yeh et al. :func:`parse_tuples` reads ``"0 1 2; 4 5 6"``,
    :func:`validate_tuples` checks a sequence (``ValueError`` when invalid), and :func:`make_layout`
    compiles tuples into a :class:`Layout` whose ``size`` is the number of weights
    (``16 ** len(tuple)`` per tuple).
The network
    ``net = network(weights, layout)`` is the plain tuple the kernels take; ``weights`` is a flat
    float array of ``layout.size`` (``NTuplePolicy`` uses float32) that the kernels read and update
    in place. A board's value sums, over the 8 symmetries of the square and all tuples, the weight
    at the index of the transformed board.

Kernels compiled by ``numba.njit(cache=True)`` (callable from your own ``njit`` functions and from plain
Python): :func:`value` → float, the value of a board (an afterstate); :func:`add` adds a delta to every
weight a board reads; :func:`weight_indices` fills ``out`` (length ``8 * tuples``) with those weights'
indices (:func:`weight_indices_row`, added in 1.3, fills row ``row`` of a 2-D ``out``: no view of it is
made, see :func:`agentos_env_2048.kernels.njit`); :func:`best_action` → the move maximising points plus
the searched afterstate value (``depth`` move layers: 1 is greedy, more is expectimax over the spawned
tile; the search of the policy's ``search_depth`` with a table of one slot, since 1.2.2), -1 when no
move is legal; :func:`default_indices` (added in 1.2.3) → the four weight indices of
:data:`DEFAULT_TUPLES` in one symmetry of a board (offsets included), written out; :func:`value_at` and
:func:`add_at` (added in 1.2) read and update with every index shifted by ``base`` (a stage's weights,
without making a slice); :func:`best_actions` → that move for each of N boards (0 when none is legal);
:func:`play_games` plays one greedy game per rng slot, fills ``scores`` and ``max_exponents`` and
returns the number of moves made.
Search with a transposition table (public since 1.2.4)
    :func:`new_table` makes a :class:`Table` of ``2 ** bits`` slots and :func:`new_generation` empties
    it in O(1) (after the weights changed); :func:`search_action` is the policy's own move choice:
    expectimax of ``depth`` move layers over a (multi-stage) network of ``size`` weights a stage with
    ``bounds``, memoised in ``table``, on the board with tiles downgraded from exponent ``threshold``
    (0: never), -1 when no move is legal.
Multi-stage networks (added in 1.1)
    :func:`parse_stage_tiles` reads ``"16384"`` into exponents; :func:`bounds_array` makes the int64
    array the kernels take; :func:`stage_of` is how many bounds a board's largest tile reaches;
    :func:`stage_network` is one stage's network over ``weights[stage * size:(stage + 1) * size]``;
    :func:`staged_value` and :func:`staged_add` value and update a board in its own stage;
    :func:`stage_base` (1.2) is where a board's stage starts in the flat weights.
"""

from __future__ import annotations

from agentos_policy_ntuple._network import (
    DEFAULT_TUPLES,
    Layout,
    add,
    add_at,
    default_indices,
    make_layout,
    network,
    parse_tuples,
    validate_tuples,
    value,
    value_at,
    weight_indices,
    weight_indices_row,
)
from agentos_policy_ntuple._search import (
    Table,
    best_action,
    best_actions,
    new_generation,
    new_table,
    play_games,
    search_action,
)
from agentos_policy_ntuple._stages import (
    bounds_array,
    parse_stage_tiles,
    stage_base,
    stage_network,
    stage_of,
    staged_add,
    staged_value,
)

__all__ = [
    "DEFAULT_TUPLES",
    "Layout",
    "Table",
    "add",
    "add_at",
    "best_action",
    "best_actions",
    "bounds_array",
    "default_indices",
    "make_layout",
    "network",
    "new_generation",
    "new_table",
    "parse_stage_tiles",
    "parse_tuples",
    "play_games",
    "search_action",
    "stage_base",
    "stage_network",
    "stage_of",
    "staged_add",
    "staged_value",
    "validate_tuples",
    "value",
    "value_at",
    "weight_indices",
    "weight_indices_row",
]
