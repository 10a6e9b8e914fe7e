"""``agentos arena --exchange URL``: players resolved through the ``agentos.exchanges`` entry points.

The plugin is a real distribution (a ``.dist-info`` with ``entry_points.txt`` on the child's path, found
by importlib.metadata as any installed one): scheme ``arenatest`` serves a minimax player ``perfect``
and a random one ``coin``; ``broken`` names a module that does not exist.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from arena._folders import AGENTS, agent_folder

PLUGIN = '''
import contextlib, os, sys

with open(os.environ["ARENA_TEST_MARKER"], "a") as f:
    f.write("imported\\n")
sys.path.insert(0, os.environ["ARENA_TEST_AGENTS"])
from minimax import Minimax
from random_masked import RandomMasked
from faulty import OutOfRange, Raises


@contextlib.contextmanager
def connect_players(address, names, *, insecure=False):
    served = {"perfect": Minimax(), "coin": RandomMasked(), "column9": OutOfRange(), "crash": Raises()}
    with open(os.environ["ARENA_TEST_MARKER"], "a") as f:
        f.write(f"connect {names} insecure={insecure}\\n")
    yield {name: served[name] for name in names if name in served}
'''


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    (site / "arena_test_exchange.py").write_text(PLUGIN)
    info = site / "arena_test_exchange-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: arena-test-exchange\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[agentos.exchanges]\narenatest = arena_test_exchange:connect_players\n"
        "broken = arena_test_exchange_missing:connect_players\n")
    return site


@pytest.fixture(scope="module")
def game_folder(tmp_path_factory) -> Path:
    return agent_folder(tmp_path_factory.mktemp("env"), "tictactoe")


def agentos(plugin_path, tmp_path, *args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_path), os.environ.get("PYTHONPATH", "")]),
           "ARENA_TEST_AGENTS": str(AGENTS), "ARENA_TEST_MARKER": str(tmp_path / "marker")}
    return subprocess.run([sys.executable, "-m", "agentos", "arena", *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)


def test_served_players_play_a_recorded_round_robin(plugin_path, game_folder, tmp_path):
    done = agentos(plugin_path, tmp_path, "perfect", "coin", "--exchange", "arenatest://user:s3cret@127.0.0.1:9",
                   "--environment", game_folder, "--games", "10", "--seed", "5", "--json", "--out", tmp_path / "rec")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert [p["served"] for p in record["players"]] == ["perfect", "coin"]
    assert record["players"][0]["exchange"] == "arenatest://127.0.0.1:9"
    assert "s3cret" not in done.stdout and "s3cret" not in (tmp_path / "rec" / "arena.json").read_text()
    assert [g["seed"] for g in record["games"]] == list(range(5, 15))
    perfect = record["standings"]["players"][0]
    assert perfect["losses"] == 0 and perfect["elo"] > record["standings"]["players"][1]["elo"]
    assert (tmp_path / "marker").read_text().splitlines() == ["imported", "connect ['perfect', 'coin'] insecure=False"]


def test_the_plugin_is_imported_only_when_exchange_is_used(plugin_path, game_folder, tmp_path):
    other = agent_folder(tmp_path, "minimax", "minimax")
    done = agentos(plugin_path, tmp_path, game_folder, other, "--games", "2", "--out", tmp_path / "rec")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize("case", ["no plugin for the scheme", "not served", "broken plugin", "no environment",
                                  "unknown environment folder"])
def test_exchange_problems_are_one_line(plugin_path, game_folder, tmp_path, case):
    args = {
        "no plugin for the scheme": ["perfect", "coin", "--exchange", "gopher://127.0.0.1:70"],
        "not served": ["perfect", "ghost", "--exchange", "arenatest://127.0.0.1:9"],
        "broken plugin": ["perfect", "coin", "--exchange", "broken://127.0.0.1:9"],
        "no environment": ["perfect", "coin", "--exchange", "arenatest://127.0.0.1:9"],
        "unknown environment folder": ["perfect", "coin", "--exchange", "arenatest://127.0.0.1:9",
                                       "--environment", str(tmp_path / "nope")],
    }[case]
    if case not in ("no environment", "unknown environment folder"):
        args += ["--environment", str(game_folder)]
    done = agentos(plugin_path, tmp_path, *args, "--games", "2", "--out", tmp_path / "rec")
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("agentos: error: "), done.stderr
    expected = {"no plugin for the scheme": "no installed plugin serves gopher:// exchanges (installed plugins "
                                            "serve: arenatest, broken",  # (and agentos-academy's, if installed)
                "not served": "has no served agent 'ghost'",
                "broken plugin": "failed to load: ModuleNotFoundError",
                "no environment": "--environment AGENT_FOLDER",
                "unknown environment folder": "--environment: no such agent folder"}[case]
    assert expected in done.stderr
    assert not (tmp_path / "rec").exists()


def test_a_failing_served_player_loses_and_is_withdrawn_and_the_tournament_goes_on(plugin_path, game_folder, tmp_path):
    """One served player whose decide fails (an action outside the board, an exception) no longer stops
    the arena: its games are forfeits, it is withdrawn after 3 in a row, and arena.json keeps them all."""
    done = agentos(plugin_path, tmp_path, "perfect", "column9", "coin", "crash", "--exchange", "arenatest://127.0.0.1:9",
                   "--environment", game_folder, "--games", "4", "--json", "--out", tmp_path / "rec")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert json.loads((tmp_path / "rec" / "arena.json").read_text())["games"] == record["games"]
    labels = [p["label"] for p in record["players"]]
    withdrawn = {labels[w["player"]]: w["reason"] for w in record["withdrawn"]}
    assert set(withdrawn) == {"column9", "crash"}
    assert "action 9 is outside the action space" in withdrawn["column9"]
    assert "decide failed: RuntimeError: this player is broken" in withdrawn["crash"]
    played = {tuple(labels[i] for i in g["pair"]) for g in record["games"]}
    assert ("perfect", "coin") in played and ("column9", "crash") not in played
    assert sum(1 for g in record["games"] if labels[g["pair"][0]] == "perfect" and labels[g["pair"][1]] == "coin") == 4
    forfeits = [g for g in record["games"] if "forfeit" in g]
    assert len(forfeits) == 6 and all(labels[g["winner"]] in ("perfect", "coin") for g in forfeits)
