"""``agentos arena``: a round robin between agents of one multi-agent environment, recorded and rated."""

from __future__ import annotations

import contextlib
import datetime as _dt
import os

from .._safe_text import printable
from ..errors import UsageError
from ._forfeits import MAX_FAILURES, check_max_failures
from ._record import record_folder, write_record
from ._tournament import check_request, play_games, schedule, standings

#: Elo's bootstrap: resamples of the games, and the interval's confidence.
ELO_REPS = 1000
CONFIDENCE = 0.95
#: While an arena plays, arena.json is rewritten after a game when this many seconds have passed since
#: the last write (and after every forfeit): a killed arena loses at most this much play.
SAVE_SECONDS = 1.0


def folder_players(folders: list[str], labels: list[str] | None = None, *, force: bool = False) -> list:
    """A :class:`FolderPlayer` per agent folder (labelled by folder name unless ``labels`` are given)."""
    from ._players import FolderPlayer, player_labels

    real = [os.path.realpath(f) for f in folders]
    for folder in folders:
        if not os.path.isdir(folder):
            raise UsageError(printable(f"no such agent folder: {folder}"))
    if len(set(real)) != len(real):
        raise UsageError("the same agent folder is named twice")
    players = []
    try:
        for folder, label in zip(folders, labels or player_labels(folders), strict=True):
            players.append(FolderPlayer(folder, label, force=force))
    except BaseException:
        for player in players:
            player.close()
        raise
    return players


def two_seat_environment(environment, where: str) -> list[str]:
    """The two seats (agent ids) of a multi-agent ``environment``; anything else is one line."""
    from ..core._multiagent import as_aec, is_multiagent_env

    if not is_multiagent_env(as_aec(environment)):
        raise UsageError(f"{where} is a single-agent environment; an arena needs a multi-agent (PettingZoo) one")
    seats = [str(agent) for agent in as_aec(environment).possible_agents]
    if len(seats) != 2:
        raise UsageError(f"{where} has {len(seats)} seats; an arena plays two-seat games")
    return seats


def _environment_of(players: list, where: str | None):
    """(environment, where it comes from, the player that made it): the arena's environment, after
    checking that every player's is the same one."""
    from ._players import FolderPlayer

    folders = [p for p in players if isinstance(p, FolderPlayer)]
    if folders:
        first = folders[0]
        for other in folders[1:]:
            if other.environment_identity() != first.environment_identity():
                raise UsageError(
                    f"{first.label} and {other.label} play different environments "
                    f"({first.environment} and {other.environment}, or other versions or settings); "
                    "an arena needs one environment")
        return first.make_environment(), f"environment {first.environment} of {first.label}", first
    if where is None:
        raise UsageError("with --exchange, name the environment: --environment AGENT_FOLDER")
    if not os.path.isdir(where):
        raise UsageError(printable(f"--environment: no such agent folder: {where}"))
    host = FolderPlayer(where, os.path.basename(os.path.normpath(where)))
    return host.make_environment(), f"environment {host.environment} of {where}", host


def round_robin(roster: list, games: int, seed: int, *, environment: str | None = None, anchor=None,
                on_game=None, max_failures: int = MAX_FAILURES, save=None) -> dict:
    """Play every pair of ``roster`` (players of :mod:`._players`) ``games`` times; returns the record's
    body: ``environment``, ``seats``, ``games_per_pair``, ``seed``, ``players``, ``status``,
    ``max_failures``, ``withdrawn``, ``games``, ``standings`` (and ``host``: the player whose
    environment and lock are the record's). ``save(body, host)``, when given, is called with the body
    so far (``status`` "playing", no standings) as the games are played, at most every
    :data:`SAVE_SECONDS` and after every forfeit, and (``status`` "stopped", with standings) when the
    arena stops early (Ctrl-C, a signal, an error), if a game was played."""
    import time

    from ..core._multiagent import as_aec
    from ..learning._commands import episode_step_limit

    env, where, host = _environment_of(roster, environment)
    labels = [p.label for p in roster]
    descriptions = [p.description() for p in roster]
    played: list[dict] = []
    withdrawn: list[dict] = []
    state = {"seats": None, "saved": 0.0}

    def body(status: str) -> dict:
        return {"environment": descriptions[0]["components"].get("environment")
                or host.description()["components"]["environment"], "seats": state["seats"],
                "games_per_pair": games, "seed": seed, "players": descriptions, "status": status,
                "max_failures": max_failures, "withdrawn": list(withdrawn), "games": list(played),
                "standings": None if status == "playing" else standings(
                    labels, state["seats"], played, seed=seed, confidence=CONFIDENCE, reps=ELO_REPS, anchor=anchor)}

    def after(done: int, total: int, row: dict) -> None:
        if save is not None and ("forfeit" in row or time.monotonic() - state["saved"] >= SAVE_SECONDS):
            save(body("playing"), host)
            state["saved"] = time.monotonic()
        if on_game is not None:
            on_game(done, total, row)

    try:
        state["seats"] = two_seat_environment(env, where)
        env = as_aec(env)
        plan = schedule(len(roster), games, seed)
        try:
            play_games(env, state["seats"], roster, plan, max_steps=episode_step_limit(env), on_game=after,
                       max_failures=max_failures, games=played, withdrawn=withdrawn)
        except BaseException:
            if save is not None and played:
                save(body("stopped"), host)
            raise
    finally:
        close = getattr(env, "close", None)
        if callable(close):
            close()
        if host not in roster:
            host.close()
    return {**body("complete"), "host": host}


def record_lock(host, roster: list) -> dict:
    """lock.json of an arena: the interpreter's packages, and each agent folder's components."""
    from ..learning._records import component_names, make_lock

    lock = make_lock(host.context, component_names(host.context))
    lock["players"] = {p.label: make_lock(p.context, component_names(p.context))["components"]
                       for p in roster if getattr(p, "context", None) is not None}
    return lock


def check_seed(seed) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31:
        raise UsageError(f"--seed must be an integer from 0 to 2**31-1, not {seed!r}")


def arena(players: list[str], *, games: int, seed: int = 0, out: str | None = None, exchange: str | None = None,
          environment: str | None = None, insecure: bool = False, force: bool = False, on_game=None,
          max_failures: int = MAX_FAILURES) -> dict:
    """Play a round robin between ``players`` and write its record; returns the record (with ``folder``).

    ``players`` are agent folders (each plays its newest training run's policy), or with ``exchange``
    (a URL) the names of agents served there, resolved by the plugin of the ``agentos.exchanges``
    entry point named after the URL's scheme; ``environment`` (an agent folder) then says which
    environment to play. Every pair plays ``games`` games, half in each seat order; game ``k`` is
    seeded ``seed + k``. The record (``arena.json`` and ``lock.json``) goes to ``out``, else to
    ``arenas/<id>/`` here. ``force`` plays a training run made with other installed versions of its
    components (as ``agentos run --from-run --force``; never other local code). A player whose
    ``decide`` fails loses that game; after ``max_failures`` failed games in a row it is withdrawn
    (:mod:`._forfeits`). ``arena.json`` is written as the games are played, and kept (``status``
    "stopped") when the arena is interrupted.
    """
    check_request(players, games)
    check_seed(seed)
    check_max_failures(max_failures)
    if len(set(players)) != len(players):
        raise UsageError("a player is named twice")
    if environment is not None and exchange is None:
        raise UsageError("--environment goes with --exchange (agent folders play their own environment)")
    folder = record_folder(out)  # checked before the games, made at the first game
    with contextlib.ExitStack() as stack:
        if exchange is not None:
            from ._exchange import exchange_players, public_address
            from ._players import ServedPlayer

            served = stack.enter_context(exchange_players(exchange, list(players), insecure=insecure))
            roster = [ServedPlayer(name, served[name], public_address(exchange)) for name in players]
        else:
            roster = folder_players(players, force=force)
            for player in roster:
                stack.callback(player.close)
        head = {"format": "agentos-arena/1", "id": os.path.basename(folder),
                "created": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "agentos": _version()}
        locked = []

        def save(body: dict, host) -> None:
            write_record(folder, head | body, None if locked else record_lock(host, roster))
            locked.append(True)

        body = round_robin(roster, games, seed, environment=environment, on_game=on_game,
                           max_failures=max_failures, save=save)
        host = body.pop("host")
        record = head | body
        write_record(folder, record, None if locked else record_lock(host, roster))
        return record | {"folder": folder}


def _version() -> str:
    from .._version import __version__

    return __version__
