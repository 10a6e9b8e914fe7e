"""``TDTrainer``: the AgentOS face of the TD(0) kernel in :mod:`agentos_trainer_td._td`."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
from agentos import AgentOSError, Trainer
from agentos_policy_ntuple import MAX_WEIGHTS
from agentos_policy_ntuple import real_number as _real
from agentos_policy_ntuple import whole_number as _whole


def _flag(name: str, value) -> bool:
    """A true/false setting; anything else (``"maybe"``, ``2``, a typo) is refused, not read as false."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on", "0", "false", "no", "off", ""):
        return text in ("1", "true", "yes", "on")
    raise ValueError(f"{name} is true or false, got {value!r}")


# moves each thread makes per chunk (a fraction of a second; the callback hears its games after)
_MOVES_PER_CHUNK = 200_000
_GAMES_PER_CHUNK = 4096  # at most this many games per thread and chunk
_NO_BUDGET = 1 << 62


#: The most accumulators a trainer state may hold: the most weights an ntuple policy may have.
MAX_ACCUMULATORS = MAX_WEIGHTS


class DivergedError(AgentOSError):
    """The value network's weights stopped being finite numbers (NaN or Inf)."""


class TDTrainer(Trainer):
    """TD(0) on afterstates (Szubert & Jaskowski 2014) for the ``ntuple`` policy on 2048.

    Settings: ``alpha`` -- the step for the whole value (0.1; each of the ``8 * tuples`` weights a
    board reads moves by ``alpha / (8 * tuples)`` of the TD error); ``coherent`` -- temporal
    coherence learning rates (Jaskowski 2018; alpha 0.1-0.5: at 1.0 it overshoots); ``seed``.
    ``td_lambda`` -- learn each game at its end, backwards, towards λ-returns (0-1; ziap/2048-tdl
    uses 0.5); ``restarts`` -- ziap's restarts from the middle of long games.  Either one, or a
    multi-stage policy (``stage_tiles``), selects the episode-end learner of
    :mod:`agentos_trainer_td._episodes`; without them training is today's online TD(0), bit for bit.
    ``threads`` -- more than 1 trains on that many cores with lock-free shared weights (and TC
    accumulators; :mod:`agentos_trainer_td._parallel`), every option available: online TD(0) when
    none is set, else the episode learner (TC with threads always learns at episode end);
    faster, NOT bit-reproducible from the seed (its trainer state in the run says
    ``reproducible: false``).  The threads run free, never waiting for each other; each learns and
    reports games in chunks of about 200,000 moves, so the last chunks may play more games than asked.
    ``coherent_after`` -- with ``coherent``, plain steps for that many games of each ``train``
    call, then TC with ``tc_alpha`` (TDL2048+'s OTD then TC).  Optimistic initial values (OTD)
    are the policy's ``initial_value``.  ``seconds`` -- also stop each ``train`` call once this much
    wall-clock time has passed (checked between calls of the kernel: about 500,000 moves a thread),
    for recipes whose budget is an hour of this machine rather than a number of games.
    ``promote`` -- multi-stage weight promotion (Jaśkowski 2018) for a multi-stage policy with TC from
    the first game: a weight of a later stage that was never learned stands for the same weight of the
    stage below, and is copied from it when first learned (:func:`agentos_trainer_td._rows.promoted_row`),
    so a game entering a new stage goes on with what was learned before instead of from zero.

    Games are played inside the compiled 2048 core of ``agentos-env-2048`` with the environment's
    rules (same moves, scores, spawn odds and end), not through ``environment.step``: that is what
    makes a million moves a second possible.  The environment must be ``agentos-env-2048``'s.
    ``callback(score, moves, info={"score", "max_tile"})`` is called after every game (the final
    ``info`` the environment would give, for its episode metrics).
    """

    #: Seeded runs give the very same curve (pure Python/numba arithmetic, one thread): ``agentos reproduce``
    #: requires an identical curve. Training on several ``threads`` is not (see ``__init__``).
    deterministic = True

    def __init__(self, alpha: float = 0.1, coherent: bool = False, seed: int | None = None,
                 td_lambda: float | None = None, restarts: bool = False, coherent_after: int = 0,
                 tc_alpha: float | None = None, threads: int = 1, seconds: float | None = None,
                 promote: bool = False):
        alpha = _real("alpha", alpha)
        if not 0.0 < alpha <= 10.0:
            raise ValueError(f"alpha must be in (0, 10], got {alpha}")
        self.alpha = alpha
        self.coherent = _flag("coherent", coherent)
        self.td_lambda = None if td_lambda in (None, "") else _real("td_lambda", td_lambda)
        if self.td_lambda is not None and not 0.0 <= self.td_lambda <= 1.0:
            raise ValueError(f"td_lambda must be in [0, 1], got {td_lambda}")
        self.restarts = _flag("restarts", restarts)
        self.threads = _whole("threads", threads)
        if not 1 <= self.threads <= 256:
            raise ValueError(f"threads must be 1-256, got {threads}")
        self.coherent_after = _whole("coherent_after", coherent_after)
        if self.coherent_after < 0:
            raise ValueError(f"coherent_after is a number of games >= 0, got {coherent_after}")
        self.tc_alpha = alpha if tc_alpha in (None, "") else _real("tc_alpha", tc_alpha)
        if not 0.0 < self.tc_alpha <= 10.0:
            raise ValueError(f"tc_alpha must be in (0, 10], got {tc_alpha}")
        self.seconds = None if seconds in (None, "") else _real("seconds", seconds)
        if self.seconds is not None and not 0.0 < self.seconds <= 1e7:
            raise ValueError(f"seconds is a wall-clock budget in (0, 1e7], got {seconds}")
        self.seed = None if seed is None else _whole("seed", seed)
        self.promote = _flag("promote", promote)
        if self.promote and (not self.coherent or self.coherent_after):
            raise ValueError("promote needs coherent = true from the first game (coherent_after = 0): "
                             "a weight counts as learned once TC's sums hold its errors")
        self._accumulators: tuple[np.ndarray, np.ndarray] | None = None

    def train(self, policy, environment, *, episodes=None, steps=None, seed=None, callback=None):
        """Train for ``episodes`` games or about ``steps`` moves; returns the number of games."""
        from agentos_env_2048 import Game2048Env
        from agentos_env_2048.kernels import move_tables, seed_states

        from agentos_trainer_td._rows import materialize_promotions, pack, unpack

        if not hasattr(policy, "layout") or not hasattr(policy, "weights"):
            raise TypeError(f"the td trainer trains the ntuple policy, not {type(policy).__name__}")
        if environment is not None and not isinstance(getattr(environment, "unwrapped", None), Game2048Env):
            raise TypeError("the td trainer learns 2048: use agentos-env-2048's environment")
        if episodes is None and steps is None:
            raise ValueError("give episodes or steps")
        seed = self.seed if seed is None else seed
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        signed, absolute = self._coherence_accumulators(policy)
        bounds = np.array(getattr(policy, "stage_bounds", ()), dtype=np.int64)
        if self.promote and not len(bounds):
            raise ValueError("promote needs a multi-stage policy: set the policy's stage_tiles (e.g. 16384)")
        # TD(λ), restarts, stages -- and TC on several threads -- learn at episode end, over rows
        episodic = self.td_lambda is not None or self.restarts or len(bounds) > 0
        rows = pack(policy.weights, signed, absolute) if episodic or (self.threads > 1 and self.coherent) else None
        run = _Run(self, policy, move_tables(), bounds, rows, signed, absolute, seed_states(int(seed), self.threads),
                   episodes if episodes is not None else float("inf"), steps if steps is not None else float("inf"),
                   self.episode_reporter(callback))
        self._check_finite(policy, "before training")
        try:
            run.threads() if self.threads > 1 else run.one_thread()
        finally:  # what was learned reaches the policy, even when a callback stops training by raising
            if rows is not None:
                if self.promote:
                    materialize_promotions(rows, policy.layout.size, len(bounds) + 1)
                unpack(rows, policy.weights, signed, absolute)
        if run.diverged:
            self._diverged(run.diverged)
        self._check_finite(policy, f"after {run.games:,} games")
        return run.games

    def _check_finite(self, policy, when: str) -> None:
        bad = int(np.count_nonzero(~np.isfinite(policy.weights)))
        if bad:
            self._diverged(f"{bad:,} weights are NaN or Inf {when}")

    def _diverged(self, what: str):
        raise DivergedError(
            f"td: the weights diverged ({what}); lower alpha (now {self.alpha:g}) and train again"
        )

    checkpoint_suffix = ".safetensors"

    def save(self, path: str) -> None:
        """With ``coherent``: TC's accumulators (safetensors), so that ``train --from-run`` goes on;
        with ``threads`` > 1 a record that the run is not bit-reproducible (``reproducible: false``)."""
        from safetensors.numpy import save_file

        note = {"format": "agentos-td-tc-1"}
        if self.threads > 1:
            note = {"format": "agentos-td-parallel-1", "reproducible": "false", "threads": str(self.threads)}
        if self.coherent and self._accumulators is not None:
            signed, absolute = self._accumulators
        elif self.threads > 1:
            signed = absolute = np.zeros(1, np.float32)
        else:
            raise NotImplementedError("td keeps state only with coherent = true")
        save_file({"signed": signed, "absolute": absolute}, path, metadata=note)

    def load(self, path: str) -> None:
        """Read accumulators written by :meth:`save` (float32 vectors of one length, finite).  The header
        is checked before any tensor is read: a run folder from someone else may hold any file."""
        from safetensors import safe_open
        from safetensors.numpy import load_file

        with safe_open(path, framework="numpy") as handle:
            names = set(handle.keys())
            if names != {"signed", "absolute"}:
                raise ValueError(f"not a td trainer state (tensors {sorted(names)[:4]}, expected signed and absolute)")
            for name in names:
                piece = handle.get_slice(name)
                shape, dtype = tuple(piece.get_shape()), piece.get_dtype()
                if dtype != "F32" or len(shape) != 1 or shape[0] > MAX_ACCUMULATORS:
                    raise ValueError(f"{name} is {dtype} {list(shape)}, expected float32 of at most "
                                     f"{MAX_ACCUMULATORS:,} values (the ntuple policy's weight limit)")
        tensors = load_file(path)
        signed, absolute = tensors.get("signed"), tensors.get("absolute")
        if signed is None or absolute is None:
            raise ValueError("not a td trainer state (no signed/absolute accumulators)")
        for name, array in (("signed", signed), ("absolute", absolute)):
            if array.dtype != np.float32 or array.ndim != 1 or array.shape != signed.shape:
                raise ValueError(f"{name} has dtype {array.dtype} shape {array.shape}, expected float32 {signed.shape}")
            if not np.isfinite(array).all():
                raise ValueError(f"{name} accumulators are not all finite numbers")
        if self.coherent:
            self._accumulators = (signed.copy(), absolute.copy())
            self._loaded = True

    def _coherence_accumulators(self, policy) -> tuple[np.ndarray, np.ndarray]:
        """TC's per-weight sums of errors and of absolute errors (kept across ``train`` calls)."""
        size = policy.weights.shape[0] if self.coherent else 1
        if getattr(self, "_loaded", False) and self._accumulators[0].shape[0] != size:
            raise ValueError(f"the trainer state has {self._accumulators[0].shape[0]:,} accumulators, "
                             f"the policy {size:,} weights")
        self._loaded = False
        if self._accumulators is None or self._accumulators[0].shape[0] != size:
            self._accumulators = (np.zeros(size, np.float32), np.zeros(size, np.float32))
        return self._accumulators


def _share(left: float, threads: int, most: int) -> int:
    """A thread's share of what is ``left`` (games or moves; infinite without a budget): at least 1,
    at most ``most``.  (``inf // 2`` is NaN, and ``max(1, nan)`` is 1: trainer-td 1.3 gave each
    thread one game per call so, and the threads met after every game.)"""
    if left == float("inf"):
        return most
    return int(min(most, max(1, -(-left // threads))))


def _results(out, played: int) -> list[tuple[int, int, int]]:
    """(score, moves, largest exponent) of the first ``played`` games a kernel wrote into ``out``
    (its scores, largest exponents and lengths); copies, so that the kernel may write ``out`` again."""
    scores, tops, lengths = out
    return list(zip(scores[:played].tolist(), lengths[:played].tolist(), tops[:played].tolist(), strict=True))


class _Run:
    """One ``train`` call: its budgets, its counters, and the kernels that play its games."""

    def __init__(self, trainer, policy, tables, bounds, rows, signed, absolute, states, max_games, max_moves, report):
        from agentos_trainer_td._rows import learner_layout

        self.trainer, self.tables, self.bounds, self.rows = trainer, tables, bounds, rows
        self.net, self.size = policy.network, policy.layout.size
        self.layout, self.features = learner_layout(policy), 8 * len(policy.tuples)
        self.signed, self.absolute, self.states = signed, absolute, states
        self.max_games, self.max_moves, self.report = max_games, max_moves, report
        self.lam = trainer.td_lambda or 0.0
        self.games = self.moves = 0
        self.claimed = 0  # games started or done: threads claim theirs, so that exactly max_games are played
        self.claims = threading.Lock()
        self.diverged = ""
        self.stopped = False
        seconds = trainer.seconds
        self.deadline = None if seconds is None else time.monotonic() + seconds

    def keep_going(self) -> bool:
        """Whether another game (or chunk of games) may start."""
        if self.stopped or self.diverged or self.claimed >= self.max_games or self.moves >= self.max_moves:
            return False
        return self.deadline is None or time.monotonic() < self.deadline

    def step_size(self) -> tuple[float, bool]:
        """(alpha, TC on) for the next game: ``coherent_after`` games of plain steps, then TC."""
        trainer = self.trainer
        coherent = trainer.coherent and self.games >= trainer.coherent_after
        return (trainer.tc_alpha if coherent else trainer.alpha), coherent

    def claim(self, most: int) -> int:
        """Claim up to ``most`` of the games still to play (0 when none are left); a negative ``most``
        gives back games claimed but not played (a chunk that ran out of moves first)."""
        with self.claims:
            games = int(min(most, self.max_games - self.claimed))
            self.claimed += games
            return games

    def play(self, rng, games, budget, out) -> tuple[int, int]:
        """Play up to ``games`` games or about ``budget`` moves on ``rng``: (moves, games played)."""
        from agentos_trainer_td._episodes import train_episodes
        from agentos_trainer_td._td import train_games

        alpha, coherent = self.step_size()
        if self.rows is not None:
            return train_episodes(rng, games, budget, alpha, self.lam, self.trainer.restarts, coherent, self.rows,
                                  self.layout, self.features, self.size, self.bounds, self.tables, *out,
                                  self.trainer.promote)
        return train_games(rng, games, budget, alpha, coherent, self.net, self.signed, self.absolute, self.tables, *out)

    def heard(self, made: int, results) -> None:
        """Count a chunk's moves and report its games (score, moves, largest exponent) to the callback."""
        if made < 0:
            self.diverged = f"a TD error became NaN or Inf in game {self.games + 1:,}, after {self.moves:,} moves"
            return
        self.moves += made
        for score, length, top in results:
            self.games += 1
            info = {"score": int(score), "max_tile": 1 << int(top)}
            self.stopped = self.report(float(score), int(length), info) is False or self.stopped

    def one_thread(self) -> None:
        """Game after game on one rng, reported as each ends: bit-reproducible from the seed."""
        out = tuple(np.zeros(1, np.int64) for _ in range(3))
        while self.keep_going():
            made, played = self.play(self.states, self.claim(1), _NO_BUDGET, out)
            self.heard(made, _results(out, played))

    def threads(self) -> None:
        """Free-running threads on shared weights (:mod:`agentos_trainer_td._parallel`)."""
        from agentos_trainer_td._parallel import free_running, thread_rng

        threads = self.trainer.threads
        rngs = [thread_rng(self.states, t) for t in range(threads)]
        outs = [tuple(np.zeros(_GAMES_PER_CHUNK, np.int64) for _ in range(3)) for _ in range(threads)]

        sizes = [1] * threads  # games a chunk may play: 1, 2, 4, ... so that a callback's stop is heard early

        def chunk(thread: int):
            budget = _share(self.max_moves - self.moves, threads, _MOVES_PER_CHUNK)
            games = self.claim(_share(self.max_games - self.claimed, threads, sizes[thread]))
            sizes[thread] = min(2 * sizes[thread], _GAMES_PER_CHUNK)
            made, played = self.play(rngs[thread], games, budget, outs[thread])
            self.claim(played - games)
            return made, _results(outs[thread], played)

        for _, (made, results) in free_running(threads, chunk, self.keep_going):
            self.heard(made, results)
            if self.diverged:
                break
