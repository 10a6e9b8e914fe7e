"""Arenas survive their players: a player whose decide fails (raises, or gives an action outside the
action space or one the mask forbids) loses that game, recorded with the reason; after --max-failures
failed games in a row it is withdrawn and the others play on. arena.json is written as the games are
played and kept, with standings, when the arena is stopped (SIGTERM, Ctrl-C)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from agentos.arena import MalformedArenaRecord, parse_arena_record, read_arena_record
from agentos.cli import main
from arena._folders import agent_folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("faulty")
    return {name: agent_folder(root, name, policy) for name, policy in (
        ("minimax", "minimax"), ("coin", "random_masked"), ("raises", "raises"), ("out_of_range", "out_of_range"),
        ("illegal", "illegal"), ("slow", "slow"))}


def play(capsys, tmp_path, *players, games: int = 4, more=()) -> dict:
    code = main(["arena", *map(str, players), "--games", str(games), "--json", "--out", str(tmp_path / "rec"),
                 *more])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    record = json.loads(captured.out)
    assert read_arena_record(str(tmp_path / "rec")) == {k: v for k, v in record.items() if k != "folder"}
    return record


@pytest.mark.parametrize(("faulty", "reason"), [
    ("raises", "decide failed: RuntimeError: this player is broken"),
    ("out_of_range", "action 9 is outside the action space Discrete(9)"),
    ("illegal", "is not a legal move here (its action_mask is 0)"),
])
def test_a_failing_player_loses_is_withdrawn_and_the_others_play_on(folders, capsys, tmp_path, faulty, reason):
    record = play(capsys, tmp_path, folders["minimax"], folders["coin"], folders[faulty])
    games = record["games"]
    # (minimax, coin) x4 in full, then the faulty player forfeits 3 in a row against minimax and is withdrawn:
    # its last game with minimax and its 4 with coin are not played
    assert [g["pair"] for g in games] == [[0, 1]] * 4 + [[0, 2]] * 3
    assert all("forfeit" not in g for g in games[:4])
    for game in games[4:]:
        assert game["forfeit"]["player"] == 2 and reason in game["forfeit"]["reason"] and game["winner"] == 0
    assert record["status"] == "complete" and record["max_failures"] == 3
    (entry,) = record["withdrawn"]
    assert entry["player"] == 2 and entry["after_games"] == 7 and entry["reason"].startswith("3 failed games in a row")
    standings = {p["player"]: p for p in record["standings"]["players"]}
    assert standings[faulty]["losses"] == 3 and standings[faulty]["games"] == 3
    assert standings["coin"]["games"] == 4  # only its games with minimax


def test_the_valid_twin_plays_every_game(folders, capsys, tmp_path):
    record = play(capsys, tmp_path, folders["minimax"], folders["coin"], folders["slow"], games=2)
    assert len(record["games"]) == 6 and record["withdrawn"] == []
    assert not any("forfeit" in g for g in record["games"])


def test_max_failures_is_a_setting_and_bad_values_are_one_line(folders, capsys, tmp_path):
    record = play(capsys, tmp_path, folders["minimax"], folders["raises"], games=4, more=["--max-failures", "1"])
    assert len(record["games"]) == 1 and record["withdrawn"][0]["after_games"] == 1
    assert main(["arena", str(folders["minimax"]), str(folders["coin"]), "--max-failures", "0", "--out",
                 str(tmp_path / "never")]) == 2
    assert "--max-failures must be an integer from 1 to 1000, not 0" in capsys.readouterr().err


def test_the_text_output_names_forfeits_and_withdrawals(folders, capsys, tmp_path):
    assert main(["arena", str(folders["minimax"]), str(folders["out_of_range"]), "--games", "4", "--out",
                 str(tmp_path / "rec")]) == 0
    out = capsys.readouterr().out
    assert "3 game(s) lost by forfeit" in out and "withdrawn after game 3: out_of_range" in out


def test_a_forfeit_record_that_lies_is_refused(folders, capsys, tmp_path):
    record = play(capsys, tmp_path, folders["minimax"], folders["raises"], games=4)
    record.pop("folder")
    parse_arena_record(json.loads(json.dumps(record)))  # the twin
    bad = json.loads(json.dumps(record))
    bad["games"][0]["winner"] = 1  # the forfeiting player cannot win
    with pytest.raises(MalformedArenaRecord, match="winner of a forfeit must be the other player"):
        parse_arena_record(bad)
    bad = json.loads(json.dumps(record))
    bad["withdrawn"][0]["player"] = 7
    with pytest.raises(MalformedArenaRecord, match="withdrawn entry"):
        parse_arena_record(bad)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_arena_keeps_every_game_it_played(folders, tmp_path, signum):
    out = tmp_path / "rec"
    proc = subprocess.Popen([sys.executable, "-m", "agentos", "arena", str(folders["slow"]), str(folders["coin"]),
                             "--games", "400", "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path)
    record = out / "arena.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # written as the arena plays, status "playing", no standings yet
        if record.exists() and len(json.loads(record.read_text())["games"]) >= 3:
            break
        time.sleep(0.1)
    playing = read_arena_record(str(out))
    assert playing["status"] == "playing" and playing["standings"] is None
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == (130 if signum == signal.SIGINT else 128 + signum), err
    assert "the games played are kept in" in err and "Traceback" not in err
    stopped = read_arena_record(str(out))  # checked: standings recomputed from the games
    assert stopped["status"] == "stopped" and len(stopped["games"]) >= len(playing["games"])
    assert stopped["games"][:len(playing["games"])] == playing["games"]
    assert stopped["standings"]["players"][0]["games"] == len(stopped["games"]) < 400
    assert os.path.exists(out / "lock.json")
