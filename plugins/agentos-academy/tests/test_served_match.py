"""Two ``agentos serve`` processes play tic-tac-toe (PettingZoo's classic game) through their handles,
each deciding for its own seat, coordinated by ``play_aec_episode`` on this side: over a real
redis-server with a password on the hybrid and Redis exchanges, and on the local exchange in-process.
The players come from the ``agentos.exchanges`` entry points, as ``agentos arena --exchange`` finds them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points

import numpy as np
import pytest
from academy_servers import REDIS_PASSWORD, REDIS_USER, start_redis, stop
from agentos.plugin_api import play_aec_episode
from agentos_academy import AgentActionError

SEAT_CODE = '''\
import numpy as np
from agentos import Policy


def tictactoe():
    from pettingzoo.classic import tictactoe_v3

    return tictactoe_v3.env()


class FirstLegal(Policy):
    def decide(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


class LastLegal(Policy):
    def decide(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[-1])


class Cheater(Policy):
    def decide(self, observation):
        return int(np.flatnonzero(observation["action_mask"] == 0)[0]) if not observation["action_mask"].all() else 0
'''

AGENT_INI = """\
[environment]
default = tictactoe

[policy]
default = seat

[environment.tictactoe]
source = seat.py:tictactoe

[policy.seat]
source = seat.py:{policy}
"""


def seat_agent(root, name: str, policy: str):
    folder = root / name
    folder.mkdir()
    (folder / "seat.py").write_text(SEAT_CODE)
    (folder / "agent.ini").write_text(textwrap.dedent(AGENT_INI.format(policy=policy)))
    return folder


def tictactoe():
    from pettingzoo.classic import tictactoe_v3

    return tictactoe_v3.env()


def local_policy(name: str):
    """The same policy, in this process (what the served agent must answer)."""
    namespace: dict = {}
    exec(compile(SEAT_CODE, "seat.py", "exec"), namespace)  # noqa: S102 -- our own test code
    return namespace[name]()


@pytest.fixture(scope="module")
def agents(tmp_path_factory):
    root = tmp_path_factory.mktemp("seats")
    return {name: seat_agent(root, name, policy)
            for name, policy in (("first", "FirstLegal"), ("last", "LastLegal"), ("cheater", "Cheater"))}


@pytest.fixture(scope="module")
def redis_port(tmp_path_factory):
    proc, port = start_redis(tmp_path_factory.mktemp("redis"))
    yield port
    stop(proc)


def serve(agent, exchange: str):
    """``agentos serve AGENT`` in a process of its own; the exchange (with its password) goes through
    $AGENTOS_EXCHANGE, out of the process list. Returns (process, the id it printed)."""
    env = {**os.environ, "AGENTOS_EXCHANGE": exchange}
    proc = subprocess.Popen([sys.executable, "-m", "agentos", "serve", str(agent)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    agent_id = proc.stdout.readline().strip()
    assert agent_id, proc.communicate(timeout=30)[1]
    return proc, agent_id


def connect_players(scheme: str):
    """The entry point that ``agentos arena --exchange URL`` looks up by the URL's scheme."""
    (point,) = entry_points(group="agentos.exchanges", name=scheme)
    return point.load()


def expected_game(x: str, o: str):
    env = tictactoe()
    return play_aec_episode(env, {"player_1": local_policy(x), "player_2": local_policy(o)}, seed=0)


def play(players: dict, x: str, o: str):
    return play_aec_episode(tictactoe(), {"player_1": players[x], "player_2": players[o]}, seed=0)


@pytest.mark.parametrize("scheme", ["hybrid", "redis"])
def test_two_served_agents_play_their_own_seats_over_a_real_redis_server(agents, redis_port, scheme):
    url = f"{scheme}://{REDIS_USER}:{REDIS_PASSWORD}@127.0.0.1:{redis_port}"
    served = [serve(agents["first"], url), serve(agents["last"], url)]
    try:
        with connect_players(scheme)(url, ["first", "last"]) as players:
            assert set(players) == {"first", "last"}
            for x, o in (("first", "last"), ("last", "first")):  # seats swapped
                game = play(players, x, o)
                twin = expected_game({"first": "FirstLegal", "last": "LastLegal"}[x],
                                     {"first": "FirstLegal", "last": "LastLegal"}[o])
                assert (game.returns, game.length) == (twin.returns, twin.length)
                assert game.winner() == "player_1" and game.length == 5  # the first to move wins this line
        # by id, as agentos serve printed it, too
        with connect_players(scheme)(url, [served[0][1]]) as players:
            mask = np.array([0, 0, 0, 1, 1, 0, 0, 0, 0], dtype=np.int8)
            assert players[served[0][1]].decide({"observation": np.zeros((3, 3, 2), np.int8),
                                                 "action_mask": mask}) == 3
    finally:
        for proc, _ in served:
            proc.terminate()
            proc.communicate(timeout=30)


def test_an_illegal_move_or_an_oversized_observation_is_one_clear_error_beside_a_legal_twin(agents, redis_port):
    url = f"hybrid://{REDIS_USER}:{REDIS_PASSWORD}@127.0.0.1:{redis_port}"
    proc, _ = serve(agents["cheater"], url)
    try:
        with connect_players("hybrid")(url, ["cheater"]) as players:
            cheater = players["cheater"]
            board = np.zeros((3, 3, 2), np.int8)
            assert cheater.decide({"observation": board, "action_mask": np.ones(9, np.int8)}) == 0  # the twin
            with pytest.raises(AgentActionError, match="chose action 0, which the action mask forbids"):
                cheater.decide({"observation": board, "action_mask": np.array([0] + [1] * 8, np.int8)})
            with pytest.raises(AgentActionError, match="more than decide takes"):
                cheater.decide({"observation": np.zeros(5_000_000, np.int8), "action_mask": np.ones(9, np.int8)})
            with pytest.raises(AgentActionError, match="must be numbers"):
                cheater.decide({"observation": [[1, 2], [3]], "action_mask": np.ones(9, np.int8)})
            assert cheater.decide({"observation": board, "action_mask": np.ones(9, np.int8)}) == 0  # still serving
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_a_name_nobody_serves_is_one_clear_error(redis_port):
    url = f"hybrid://{REDIS_USER}:{REDIS_PASSWORD}@127.0.0.1:{redis_port}"
    with pytest.raises(AgentActionError, match="no served agent named 'nobody' on exchange hybrid://agentos:\\*\\*\\*@"):
        with connect_players("hybrid")(url, ["nobody"]):
            pass


def test_agentos_arena_naming_nobody_served_on_hybrid_is_one_line_in_bounded_time(agents, tmp_path):
    """On an exchange where nothing was ever served, refusing to open (no agent of that name) must not wait
    on academy's hybrid listener, which may never stop: one line within seconds (it hung before), beside
    the served twin below."""
    import time

    (tmp_path / "empty-redis").mkdir()
    proc, port = start_redis(tmp_path / "empty-redis")  # a fresh server: no registration at all
    url = f"hybrid://{REDIS_USER}:{REDIS_PASSWORD}@127.0.0.1:{port}"
    started = time.monotonic()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "agentos", "arena", "ghost_a", "ghost_b", "--exchange", url, "--environment",
             str(agents["first"]), "--games", "2"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    finally:
        stop(proc)
    assert time.monotonic() - started < 60
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "no served agent named 'ghost_a'" in result.stderr and REDIS_PASSWORD not in result.stderr


def test_two_agents_on_the_local_exchange_play_in_this_process(agents):
    with connect_players("local")("local", [str(agents["first"]), str(agents["last"])]) as players:
        game = play_aec_episode(tictactoe(), {"player_1": players[str(agents["last"])],
                                              "player_2": players[str(agents["first"])]}, seed=0)
    twin = expected_game("LastLegal", "FirstLegal")
    assert (game.returns, game.length) == (twin.returns, twin.length) and game.winner() == "player_1"


def test_agentos_arena_plays_two_served_agents_on_the_hybrid_exchange(agents, redis_port, tmp_path):
    """The whole path: ``agentos arena first last --exchange hybrid://...`` finds this plugin's entry point,
    which finds the two ``agentos serve`` processes by name; seats swapped, each agent decides for its own."""
    import json

    url = f"hybrid://{REDIS_USER}:{REDIS_PASSWORD}@127.0.0.1:{redis_port}"
    served = [serve(agents["first"], url), serve(agents["last"], url)]
    try:
        result = subprocess.run(
            [sys.executable, "-m", "agentos", "arena", "first", "last", "--exchange", url, "--environment",
             str(agents["first"]), "--games", "4", "--seed", "0", "--json", "--out", str(tmp_path / "arena")],
            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    finally:
        for proc, _ in served:
            proc.terminate()
            proc.communicate(timeout=30)
    assert result.returncode == 0, result.stderr
    assert REDIS_PASSWORD not in result.stdout and REDIS_PASSWORD not in (tmp_path / "arena" / "arena.json").read_text()
    (pair,) = json.loads(result.stdout)["standings"]["pairs"]
    assert pair["players"] == ["first", "last"] and pair["games"] == 4
    # the one to move first wins this line of play: each agent won its two games as player_1
    assert (pair["wins"], pair["draws"], pair["losses"]) == (2, 0, 2)
    assert pair["by_seat"]["player_1"]["wins"] == 2 and pair["by_seat"]["player_2"]["losses"] == 2


def test_a_served_cheater_loses_by_forfeit_is_withdrawn_and_the_arena_goes_on(agents, redis_port, tmp_path):
    """Over a real redis-server (hybrid exchange): the served cheater's decide fails on every game (the
    service refuses its masked move), so it loses each by forfeit with the reason, is withdrawn after
    --max-failures 2, and the other two agents' games are all played and kept in arena.json."""
    import json

    url = f"hybrid://{REDIS_USER}:{REDIS_PASSWORD}@127.0.0.1:{redis_port}"
    served = [serve(agents[name], url) for name in ("first", "last", "cheater")]
    try:
        result = subprocess.run(
            [sys.executable, "-m", "agentos", "arena", "first", "cheater", "last", "--exchange", url,
             "--environment", str(agents["first"]), "--games", "4", "--max-failures", "2", "--json", "--out",
             str(tmp_path / "arena")], capture_output=True, text=True, timeout=180, cwd=tmp_path)
    finally:
        for proc, _ in served:
            proc.terminate()
            proc.communicate(timeout=30)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert json.loads((tmp_path / "arena" / "arena.json").read_text())["games"] == record["games"]
    assert [g["pair"] for g in record["games"]] == [[0, 1], [0, 1], [0, 2], [0, 2], [0, 2], [0, 2]]
    for game in record["games"][:2]:
        assert game["forfeit"]["player"] == 1 and game["winner"] == 0
        assert "which the action mask forbids" in game["forfeit"]["reason"]
    (entry,) = record["withdrawn"]
    assert entry["player"] == 1 and entry["after_games"] == 2
    assert not any("forfeit" in g for g in record["games"][2:])  # first and last play all their games
    assert REDIS_PASSWORD not in result.stdout
