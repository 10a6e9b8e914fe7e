"""Round robins: every pair of players meets ``games`` times, half in each seat order, one seed per game.

Game ``k`` of the whole arena (counted over all pairs) is seeded ``seed + k``: the environment's reset
gets it, and the policy in seat ``i`` (0 or 1) is seeded ``2 * (seed + k) + i``, so that two players of
the same random policy never draw the same numbers (served agents keep their own randomness).
Even games of a pair put the first-listed player in the first seat, odd games swap the seats.
"""

from __future__ import annotations

import itertools

from ..errors import UsageError
from ._elo import PRIOR_DRAWS, elo_ratings
from ._forfeits import MAX_FAILURES, Forfeit, Withdrawals, checked_decider

#: The most games one pair may play in one arena (a record stays small and readable).
MAX_GAMES = 100_000
#: The most players in one arena.
MAX_PLAYERS = 64
#: The most games one arena (its record) may hold.
MAX_RECORD_GAMES = 200_000


def check_request(players: list, games) -> None:
    """One line for an arena that cannot be played (too few players, a bad number of games)."""
    if isinstance(games, bool) or not isinstance(games, int) or not 1 <= games <= MAX_GAMES:
        raise UsageError(f"--games must be an integer from 1 to {MAX_GAMES:,}, not {games!r}")
    if len(players) < 2:
        raise UsageError("an arena needs at least two players (agent folders, or served agents with --exchange)")
    if len(players) > MAX_PLAYERS:
        raise UsageError(f"an arena takes at most {MAX_PLAYERS} players, not {len(players)}")
    total = len(players) * (len(players) - 1) // 2 * games
    if total > MAX_RECORD_GAMES:
        raise UsageError(f"{total:,} games in all ({games:,} per pair): an arena record holds at most "
                         f"{MAX_RECORD_GAMES:,}; give fewer --games or players")


def schedule(players: int, games: int, seed: int) -> list[dict]:
    """Every game of the round robin: ``pair``, ``seats`` (player index per seat), ``seed``."""
    plan, k = [], 0
    for first, second in itertools.combinations(range(players), 2):
        for g in range(games):
            seats = [first, second] if g % 2 == 0 else [second, first]
            plan.append({"pair": [first, second], "seats": seats, "seed": seed + k})
            k += 1
    return plan


def play_games(environment, seat_ids: list[str], players: list, plan: list[dict], *, max_steps: int,
               on_game=None, max_failures: int = MAX_FAILURES, games: list | None = None,
               withdrawn: list | None = None) -> list[dict]:
    """Play the ``plan`` on ``environment``; each game gets its seats' returns, length and winner (and
    ``forfeit`` when a player failed it, see :mod:`._forfeits`). ``games`` and ``withdrawn`` (lists,
    filled as the games are played) hold what was played even when this is stopped; a withdrawn
    player's later games are not played."""
    games = [] if games is None else games
    withdrawals = Withdrawals(len(players), max_failures, [] if withdrawn is None else withdrawn)
    for game in plan:
        if withdrawals.out(game["seats"]):
            continue
        policies = {}
        for place, (seat, index) in enumerate(zip(seat_ids, game["seats"], strict=True)):
            policy = players[index].policy_for(seat, environment)
            policy.seed(2 * game["seed"] + place)  # two random players never share a stream
            policies[seat] = policy
        row = _play(environment, seat_ids, policies, game, max_steps)
        games.append(row)
        withdrawals.count(row, len(games))
        if on_game is not None:
            on_game(len(games), len(plan), row)
    return games


def _play(environment, seat_ids: list[str], policies: dict, game: dict, max_steps: int) -> dict:
    """One game: its row, a forfeit (a loss for the failing player) if a player's decide failed."""
    from ..core._multiagent import play_from_start, start_episode

    returns = start_episode(environment, policies, game["seed"])
    taken = [0]
    deciders = {seat: checked_decider(policies[seat].decide, environment.action_space(seat), place, taken)
                for place, seat in enumerate(seat_ids)}
    try:
        length, done = play_from_start(environment, deciders, returns, max_steps)
    except Forfeit as foul:
        values = [float(returns[seat]) for seat in seat_ids]
        return {**game, "returns": values, "length": taken[0], "cut": False,
                "winner": game["seats"][1 - foul.place],
                "forfeit": {"player": game["seats"][foul.place], "reason": foul.reason}}
    values = [float(returns[seat]) for seat in seat_ids]
    best = max(values)
    winners = [i for i, value in enumerate(values) if value == best]
    winner = game["seats"][winners[0]] if len(winners) == 1 else None
    return {**game, "returns": values, "length": int(length), "cut": not done, "winner": winner}


def _tally() -> dict:
    return {"wins": 0, "draws": 0, "losses": 0}


def _count(tally: dict, winner, me: int) -> None:
    tally["draws" if winner is None else "wins" if winner == me else "losses"] += 1


def standings(labels: list[str], seat_ids: list[str], games: list[dict], *, seed: int = 0,
              confidence: float = 0.95, reps: int = 1000, anchor=None) -> dict:
    """What the games say: per pair (and per seat of its first player), per player, and Elo ratings."""
    pairs: dict[tuple, dict] = {}
    for game in games:
        first, second = game["pair"]
        entry = pairs.setdefault((first, second), {
            "players": [labels[first], labels[second]], "games": 0, **_tally(),
            "by_seat": {seat: {"games": 0, **_tally()} for seat in seat_ids}})
        entry["games"] += 1
        _count(entry, game["winner"], first)
        seat = seat_ids[game["seats"].index(first)]
        entry["by_seat"][seat]["games"] += 1
        _count(entry["by_seat"][seat], game["winner"], first)
    players = []
    for index, label in enumerate(labels):
        total = {"player": label, "games": 0, **_tally(), "by_seat": {seat: {"games": 0, **_tally()}
                                                                      for seat in seat_ids}}
        for game in games:
            if index in game["seats"]:
                total["games"] += 1
                _count(total, game["winner"], index)
                seat = total["by_seat"][seat_ids[game["seats"].index(index)]]
                seat["games"] += 1
                _count(seat, game["winner"], index)
        total["score"] = (total["wins"] + 0.5 * total["draws"]) / total["games"] if total["games"] else None
        players.append(total)
    scored = [(g["seats"][0], g["seats"][1], 0.5 if g["winner"] is None else float(g["winner"] == g["seats"][0]))
              for g in games]
    ratings = elo_ratings(scored, len(labels), confidence=confidence, reps=reps, seed=seed, anchor=anchor)
    for player, rating in zip(players, ratings, strict=True):
        player["elo"], player["elo_interval"] = rating["rating"], rating["interval"]
    return {"pairs": list(pairs.values()), "players": players,
            "elo": {"method": "Bradley-Terry maximum likelihood on Elo's scale (draw = 1/2), mean 1500"
                              + (f" over {', '.join(labels[i] for i in anchor)}" if anchor else "") + ", "
                              f"prior of {PRIOR_DRAWS:g} virtual draws per pair that met; interval: percentile "
                              f"bootstrap over games ({reps} resamples)",
                    "confidence": confidence, "reps": reps, "prior_draws": PRIOR_DRAWS,
                    "anchor": list(anchor) if anchor else None}}
