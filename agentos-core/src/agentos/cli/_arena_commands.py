"""``agentos arena A B [C ...]``: nothing heavy is imported until the handler runs."""

from __future__ import annotations


def add_commands(sub) -> None:
    p = sub.add_parser("arena", help="round robin between agents of one multi-agent environment: results and Elo")
    p.add_argument("players", nargs="+", metavar="AGENT",
                   help="agent folders (each plays its newest training run), or served agents' names with --exchange")
    p.add_argument("--games", "-n", type=int, default=100, help="games per pair, half in each seat order (default 100)")
    p.add_argument("--seed", type=int, default=0, help="game k of the arena is seeded SEED+k (default 0)")
    p.add_argument("--json", action="store_true", help="print the record (arena.json) instead of the tables")
    p.add_argument("--out", metavar="DIR", help="the record's folder (default: ./arenas/<id>)")
    p.add_argument("--exchange", metavar="URL", help="players are agents served there (agentos serve ... --exchange)")
    p.add_argument("--environment", metavar="AGENT",
                   help="with --exchange: the agent folder whose environment is played")
    p.add_argument("--force", action="store_true",
                   help="play a training run made with other installed versions of its components")
    p.add_argument("--insecure", action="store_true", help="with --exchange: allow an unauthenticated exchange")
    p.add_argument("--max-failures", type=int, default=3, metavar="K",
                   help="withdraw a player after K failed games in a row (a decide that raised, timed out or "
                        "gave an illegal action: each a loss); default 3")
    p.set_defaults(handler=_arena)


def _arena(args) -> int:
    import os
    import sys

    from ..api import arena
    from ._output import dump_json

    def progress(done: int, total: int, game: dict) -> None:  # on a terminal: a counter on stderr
        if done == total or done % max(1, total // 100) == 0:
            print(f"\rgames {done:,}/{total:,}", end="\n" if done == total else "", file=sys.stderr, flush=True)

    from ..arena._record import record_folder
    from ..experiments._lifetime import Stopped, stop_signals_interrupt

    folder = record_folder(args.out)
    try:
        with stop_signals_interrupt():  # SIGTERM/SIGHUP: as Ctrl-C (the games played are kept)
            record = arena(args.players, games=args.games, seed=args.seed, out=folder, exchange=args.exchange,
                           environment=args.environment, insecure=args.insecure, force=args.force,
                           on_game=progress if sys.stderr.isatty() else None, max_failures=args.max_failures)
    except KeyboardInterrupt as exc:
        how = f"stopped by signal {exc.signum}" if isinstance(exc, Stopped) else "interrupted"
        kept = os.path.join(folder, "arena.json")
        print(f"\nagentos: {how}; " + (f"the games played are kept in {kept} (status stopped)" if os.path.exists(kept)
                                       else "no game was finished, nothing was written"), file=sys.stderr)
        return 128 + exc.signum if isinstance(exc, Stopped) else 130
    if args.json:
        dump_json(record)
        return 0
    print_standings(record)
    print(f"arena {record['id']}: {record['folder']}")
    return 0


def _wdl(entry: dict) -> str:
    return f"{entry['wins']}/{entry['draws']}/{entry['losses']}"


def print_standings(record: dict) -> None:
    """Wins/draws/losses per pair and per seat, then Elo ratings with their intervals."""
    from .._safe_text import printable, printable_row
    from ._output import table

    standings, seats = record["standings"], record["seats"]
    rows = []
    for pair in standings["pairs"]:
        row = {"pair": f"{pair['players'][0]} vs {pair['players'][1]}", "games": pair["games"], "wdl": _wdl(pair)}
        for seat in seats:
            row[seat] = _wdl(pair["by_seat"][seat])
        rows.append(printable_row(row))
    last = max(game["seed"] for game in record["games"])  # a withdrawn player's games were not played
    print(f"{record['games_per_pair']} games per pair (seeds {record['seed']} to {last}); "
          "W/D/L of the first-named player of each pair, in all games and in each seat")
    table(rows, [("pair", "PAIR"), ("games", "GAMES"), ("wdl", "W/D/L"),
                 *((seat, f"AS {seat.upper()}") for seat in seats)])
    print()
    players = sorted(standings["players"], key=lambda p: -p["elo"])
    rows = [printable_row({"player": p["player"], "elo": f"{p['elo']:.0f}",
                           "interval": "-" if p["elo_interval"] is None else
                           f"[{p['elo_interval'][0]:.0f}, {p['elo_interval'][1]:.0f}]",
                           "wdl": _wdl(p), "score": f"{100 * p['score']:.1f}%" if p["score"] is not None else "-"})
            for p in players]
    level = f"{100 * standings['elo']['confidence']:.0f}% INTERVAL"
    table(rows, [("player", "PLAYER"), ("elo", "ELO"), ("interval", level), ("wdl", "W/D/L"), ("score", "SCORE")])
    print(f"Elo: {standings['elo']['method']}")
    forfeits = [game for game in record["games"] if "forfeit" in game]
    labels = [player["label"] for player in record["players"]]
    if forfeits:
        print(f"{len(forfeits)} game(s) lost by forfeit (a decide that failed or an illegal action), the first: "
              f"{printable(labels[forfeits[0]['forfeit']['player']])}: {printable(forfeits[0]['forfeit']['reason'])}")
    for entry in record.get("withdrawn", []):
        print(f"withdrawn after game {entry['after_games']}: {printable(labels[entry['player']])} "
              f"({printable(entry['reason'])}); its later games were not played")
