"""The arena record ``arena.json`` (format ``agentos-arena/1``): written atomically, read as data.

A record may come from someone else, so reading it is bounded (size, counts), allowlisted (keys and
types) and checked for consistency: each game's winner must follow from its returns, and the standings
(tallies and Elo) are recomputed from the games and must equal the stored ones.
"""

from __future__ import annotations

import json
import math
import os

from ..errors import UsageError
from ._tournament import MAX_RECORD_GAMES, standings

FORMAT = "agentos-arena/1"
RECORD_FILE = "arena.json"
#: The largest arena.json read (bytes).
MAX_RECORD_BYTES = 64 * 1024 * 1024
TOP_KEYS = {"format", "id", "created", "agentos", "environment", "seats", "games_per_pair", "seed", "players",
            "games", "standings", "status", "max_failures", "withdrawn"}
GAME_KEYS = {"pair", "seats", "seed", "returns", "length", "cut", "winner"}
#: ``status`` of a record: still being played (no standings yet), stopped early, or complete (also
#: a record without ``status``, written before it existed).
STATUSES = ("playing", "stopped", "complete")
PLAYER_KEYS = {"label", "agent", "served", "exchange", "run", "checkpoint", "components"}


class MalformedArenaRecord(UsageError):
    """An arena.json that is not a well-formed, consistent record."""


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value, limit: int = 4096) -> bool:
    return isinstance(value, str) and len(value) <= limit


def _fail(message: str):
    raise MalformedArenaRecord(f"arena record: {message}")


def _check_game(game, index: int, players: int) -> None:
    where = f"game {index}"
    if not isinstance(game, dict) or set(game) - {"forfeit"} != GAME_KEYS:
        _fail(f"{where}: expected the keys {', '.join(sorted(GAME_KEYS))} (and forfeit)")
    pair, seats = game["pair"], game["seats"]
    if not (isinstance(pair, list) and len(pair) == 2 and all(_int(p) and 0 <= p < players for p in pair)
            and pair[0] < pair[1]):
        _fail(f"{where}: pair must be two player indices, the first listed first")
    if not (isinstance(seats, list) and len(seats) == 2 and sorted(seats) == pair):
        _fail(f"{where}: seats must hold the pair's two players")
    if not _int(game["seed"]) or not _int(game["length"]) or game["length"] < 0 or not isinstance(game["cut"], bool):
        _fail(f"{where}: seed and length must be integers, cut a boolean")
    returns = game["returns"]
    if not (isinstance(returns, list) and len(returns) == 2
            and all(isinstance(r, (int, float)) and not isinstance(r, bool) and math.isfinite(r) for r in returns)):
        _fail(f"{where}: returns must be two finite numbers")
    if "forfeit" in game:
        forfeit = game["forfeit"]
        if not (isinstance(forfeit, dict) and set(forfeit) == {"player", "reason"} and forfeit["player"] in pair
                and _int(forfeit["player"]) and _text(forfeit["reason"], 500)):
            _fail(f"{where}: forfeit must name a player of the pair and a reason")
        if game["winner"] != pair[1 - pair.index(forfeit["player"])]:
            _fail(f"{where}: the winner of a forfeit must be the other player")
        return
    expected = None if returns[0] == returns[1] else seats[0] if returns[0] > returns[1] else seats[1]
    if game["winner"] != expected:
        _fail(f"{where}: winner {game['winner']!r} does not follow from the returns {returns}")


def _check_progress(data: dict, players: int) -> None:
    """``status``, ``max_failures`` and ``withdrawn`` (absent in records written before them)."""
    if data.get("status", "complete") not in STATUSES:
        _fail(f"status must be one of {', '.join(STATUSES)}")
    if "max_failures" in data and not (_int(data["max_failures"]) and 1 <= data["max_failures"] <= 1000):
        _fail("max_failures must be an integer from 1 to 1000")
    withdrawn = data.get("withdrawn", [])
    if not isinstance(withdrawn, list) or len(withdrawn) > players:
        _fail("withdrawn must be a list of at most one entry per player")
    for entry in withdrawn:
        if not (isinstance(entry, dict) and set(entry) == {"player", "after_games", "reason"}
                and _int(entry["player"]) and 0 <= entry["player"] < players and _int(entry["after_games"])
                and entry["after_games"] >= 1 and _text(entry["reason"], 500)):
            _fail("each withdrawn entry needs player (an index), after_games and reason")
    if len({entry["player"] for entry in withdrawn}) != len(withdrawn):
        _fail("a player is withdrawn twice")


def parse_arena_record(data: bytes | str | dict) -> dict:
    """The record in ``data`` after the checks of this module (a :class:`MalformedArenaRecord` names
    the first problem)."""
    if isinstance(data, (bytes, str)):
        if len(data) > MAX_RECORD_BYTES:
            _fail(f"larger than {MAX_RECORD_BYTES // (1024 * 1024)} MiB")
        try:
            data = json.loads(data)
        except (ValueError, RecursionError) as exc:
            _fail(f"not JSON ({str(exc)[:80]})")
    if not isinstance(data, dict):
        _fail("not a JSON object")
    unknown = set(data) - TOP_KEYS
    if unknown or data.get("format") != FORMAT:
        _fail(f"unknown keys {sorted(unknown)[:5]}" if unknown else f"format must be {FORMAT!r}")
    seats, players, games = data.get("seats"), data.get("players"), data.get("games")
    if not (isinstance(seats, list) and len(seats) == 2 and all(_text(s, 100) for s in seats) and seats[0] != seats[1]):
        _fail("seats must be two distinct agent ids")
    if not (isinstance(players, list) and 2 <= len(players) <= 64):
        _fail("players must be a list of 2 to 64 players")
    for i, player in enumerate(players):
        if not isinstance(player, dict) or not set(player) <= PLAYER_KEYS or not _text(player.get("label"), 500):
            _fail(f"player {i}: a label and only the keys {', '.join(sorted(PLAYER_KEYS))}")
        if player.get("run") is not None and not _text(player["run"], 200):
            _fail(f"player {i}: run must be a run id")
    labels = [p["label"] for p in players]
    if len(set(labels)) != len(labels):
        _fail("two players have the same label")
    _check_progress(data, len(players))
    if not isinstance(games, list) or not 1 <= len(games) <= MAX_RECORD_GAMES:
        _fail(f"games must be a list of 1 to {MAX_RECORD_GAMES:,} games")
    for index, game in enumerate(games):
        _check_game(game, index, len(players))
    if not _int(data.get("seed")) or not _int(data.get("games_per_pair")):
        _fail("seed and games_per_pair must be integers")
    stored = data.get("standings")
    if data.get("status") == "playing" and stored is None:
        return data  # standings come when the arena stops or ends; anyone can compute them from the games
    if not isinstance(stored, dict) or not isinstance(stored.get("elo"), dict):
        _fail("standings missing")
    reps = stored["elo"].get("reps")
    confidence = stored["elo"].get("confidence")
    if not _int(reps) or not 1 <= reps <= 10_000 or not isinstance(confidence, float) or not 0 < confidence < 1:
        _fail("standings.elo needs reps (1 to 10,000) and a confidence between 0 and 1")
    anchor = stored["elo"].get("anchor")
    if anchor is not None and not (isinstance(anchor, list) and anchor and len(set(anchor)) == len(anchor)
                                   and all(_int(i) and 0 <= i < len(players) for i in anchor)):
        _fail("standings.elo.anchor must be distinct player indices")
    again = standings(labels, seats, games, seed=data["seed"], confidence=confidence, reps=reps, anchor=anchor)
    if _rounded(again) != _rounded(stored):
        _fail("the standings do not follow from the games (the record was altered)")
    return data


def _rounded(value):
    """``value`` with floats rounded (a JSON round trip and another machine's last bits forgiven)."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def read_arena_record(path: str) -> dict:
    """The arena record at ``path`` (a record folder or its arena.json), read bounded and checked."""
    if os.path.isdir(path):
        path = os.path.join(path, RECORD_FILE)
    try:
        if os.path.islink(path):
            _fail(f"{path} is a symbolic link")
        with open(path, "rb") as f:
            data = f.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    return parse_arena_record(data)


def record_folder(out: str | None) -> str:
    """The folder a new record goes to: ``out`` (new or empty), else ``arenas/<time>-arena-<hex>`` here.
    Checked now, made by :func:`write_record`."""
    import datetime as _dt
    import secrets

    if out is None:
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = os.path.join("arenas", f"{stamp}-arena-{secrets.token_hex(2)}")
    out = os.path.abspath(out)
    if os.path.islink(out) or (os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out))):
        raise UsageError(f"--out {out} exists and is not an empty folder (an arena record needs a new one)")
    return out


def write_record(folder: str, record: dict, lock: dict | None) -> str:
    """``lock.json`` (unless ``lock`` is None: written before) then ``arena.json``, each atomically;
    ``arena.json``'s ``status`` says whether the arena is still playing, stopped early or complete."""
    from ..config import atomic_write

    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot create {folder}: {exc.strerror or exc}") from None
    if lock is not None:
        atomic_write(os.path.join(folder, "lock.json"), json.dumps(lock, indent=1) + "\n")
    path = os.path.join(folder, RECORD_FILE)
    atomic_write(path, json.dumps(record, indent=1) + "\n")
    return path
