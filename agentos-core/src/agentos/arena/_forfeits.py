"""A player's failures: a game it cannot finish is lost, and a player that keeps failing is withdrawn.

A player fails a game when its ``decide`` raises (a served agent's error, or its 30 s timeout on the
exchange, comes back as an exception) or returns an action outside the seat's action space or masked
out by the observation's ``action_mask``. The game then ends at once: a loss for that player, recorded
with the reason (``forfeit``). After ``max_failures`` failed games in a row a player is withdrawn: its
games still to come are not played (the record lists it under ``withdrawn``), and the others play on.
"""

from __future__ import annotations

from .._safe_text import printable

#: Failed games in a row after which a player is withdrawn (``agentos arena --max-failures``).
MAX_FAILURES = 3
#: The largest ``--max-failures``.
MAX_FAILURES_LIMIT = 1000
#: The longest reason a record keeps.
MAX_REASON = 300


class Forfeit(Exception):  # noqa: N818 -- what it is, not an error of ours
    """The player in seat ``place`` (0 or 1) failed this game, for ``reason``."""

    def __init__(self, place: int, reason: str):
        super().__init__(reason)
        self.place, self.reason = place, reason


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return printable(type(exc).__name__ + (f": {text[0]}" if text else ""))


def _contains(space, action) -> bool:
    """Whether ``space`` holds ``action``, also as an array of the space's dtype (a float64 array for a
    float32 box is the same move)."""
    try:
        if space.contains(action):
            return True
        dtype = getattr(space, "dtype", None)
        if dtype is None or getattr(dtype, "kind", "") in "iub":  # integers are not rounded into range
            return False
        import numpy as np

        return bool(space.contains(np.asarray(action, dtype=dtype)))
    except Exception:  # an action of a type the space cannot even compare
        return False


def refusal(action, space, observation) -> str | None:
    """Why ``action`` is not a legal move for this seat (its action space, the observation's
    ``action_mask``), or None when it is."""
    inside = _contains(space, action)
    shown = printable(repr(action))[:60]
    if not inside:
        return f"action {shown} is outside the action space {printable(str(space))[:60]}"
    mask = observation.get("action_mask") if isinstance(observation, dict) else None
    if mask is not None:
        try:
            allowed = bool(mask[int(action) - int(getattr(space, "start", 0))])
        except (TypeError, ValueError, IndexError):
            allowed = False
        if not allowed:
            return f"action {shown} is not a legal move here (its action_mask is 0)"
    return None


def checked_decider(decide, space, place: int, taken: list[int]):
    """``decide`` that raises :class:`Forfeit` for a failure of seat ``place``; ``taken[0]`` counts
    the actions it returned."""

    def decide_checked(observation):
        try:
            action = decide(observation)
        except Exception as exc:  # any failure of the player's own decide, its timeout included
            raise Forfeit(place, f"decide failed: {_first_line(exc)}"[:MAX_REASON]) from None
        why = refusal(action, space, observation)
        if why is not None:
            raise Forfeit(place, why[:MAX_REASON])
        taken[0] += 1
        return action

    return decide_checked


def check_max_failures(value) -> None:
    from ..errors import UsageError

    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_FAILURES_LIMIT:
        raise UsageError(f"--max-failures must be an integer from 1 to {MAX_FAILURES_LIMIT}, not {value!r}")


class Withdrawals:
    """Failed games in a row per player; who is withdrawn, after which game and why."""

    def __init__(self, players: int, max_failures: int, withdrawn: list[dict]):
        self.streak = [0] * players
        self.max_failures, self.withdrawn = max_failures, withdrawn

    def out(self, seats: list[int]) -> bool:
        """Whether a player of ``seats`` has been withdrawn (the game is not played)."""
        return any(entry["player"] in seats for entry in self.withdrawn)

    def count(self, row: dict, played: int) -> None:
        """Count game ``row`` (the ``played``-th): its forfeit, if any, extends its player's streak."""
        failed = row["forfeit"]["player"] if "forfeit" in row else None
        for index in row["seats"]:
            self.streak[index] = self.streak[index] + 1 if index == failed else 0
        if failed is not None and self.streak[failed] >= self.max_failures:
            self.withdrawn.append({"player": failed, "after_games": played,
                                   "reason": f"{self.max_failures} failed games in a row; the last: "
                                             f"{row['forfeit']['reason']}"[:MAX_REASON]})
