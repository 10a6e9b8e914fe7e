"""Leaderboards per task, and what a board trusts: statuses, flags that outlive a version bump, and
records of an environment release the index does not serve.

Real wheels published with the registry's own publish path into a temporary index; verdicts are the
catalogue entries ``agentos index verify`` stores (written here as it writes them), then the boards are
rebuilt and read back as a client reads them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentos.errors import PublishError
from agentos.registry import check_index, publish, rebuild_index
from registry.results_maker import policy_wheel, record
from registry.wheelmaker import env_wheel

STEADY = [4.0, 5.0, 6.0, 5.0] * 10  # IQM 5
HIGH = [s + 10 for s in STEADY]  # IQM 15


@pytest.fixture
def index(tmp_path) -> Path:
    root = tmp_path / "index"
    publish([str(env_wheel(tmp_path / "w", "gymnasium", "1.0"))], str(root))
    publish([str(env_wheel(tmp_path / "w", "corridor", "1.0"))], str(root))
    return root


def _record(returns, policy, *, task=None, environment="corridor", **env):
    """A record of ``policy`` 1.0 on ``environment`` (``env``: its package or version instead of the usual)."""
    out = record(returns, policy=policy, environment=environment)
    out["environment"].update(env)
    if task is not None:
        out["environment"]["task"] = task
    return out


def _publish(index: Path, name: str, version: str, results, **kw) -> list[dict]:
    wheel = policy_wheel(index.parent / f"w-{name}-{version}", name, version, results, **kw)
    return publish([str(wheel)], str(index))


def _board(index: Path, stem: str) -> dict:
    return json.loads((index / "leaderboards" / f"{stem}.json").read_text())


def _ranked(index: Path, stem: str = "corridor") -> list[tuple[str, str, str]]:
    return [(e["component"], e["version"], e["status"]) for e in _board(index, stem)["entries"]]


def _verdict(index: Path, project: str, version: str, status: str, **extra) -> None:
    """The verdict ``agentos index verify`` stores in the catalogue (status, verification), then a rebuild."""
    path = index / "catalogue.json"
    catalogue = json.loads(path.read_text())
    results = catalogue["projects"][project]["releases"][version]["results"]
    results["status"] = status
    results["verification"] = {"status": status, "reason": f"{status} by the test", **extra}
    path.write_text(json.dumps(catalogue))
    rebuild_index(str(index))


def test_each_gymnasium_task_has_its_own_board(index):
    _publish(index, "cartpole", "1.0", _record(HIGH, "cartpole", task="CartPole-v1", environment="gymnasium"))
    _publish(index, "acrobot", "1.0", _record(STEADY, "acrobot", task="Acrobot-v1", environment="gymnasium"))
    cartpole, acrobot = _board(index, "gymnasium--cartpole-v1"), _board(index, "gymnasium--acrobot-v1")
    assert [e["component"] for e in cartpole["entries"]] == ["cartpole"]  # never ranked against each other
    assert [e["component"] for e in acrobot["entries"]] == ["acrobot"]
    assert cartpole["environment"] == "gymnasium" and cartpole["task"] == "CartPole-v1"
    assert cartpole["entries"][0]["environment"]["task"] == "CartPole-v1"
    assert _board(index, "gymnasium")["entries"] == []  # the environment's own board: records without a task
    listing = json.loads((index / "leaderboards" / "index.json").read_text())["leaderboards"]
    pages = {row["page"]: row.get("task") for row in listing}
    assert pages["gymnasium--cartpole-v1.html"] == "CartPole-v1" and pages["gymnasium--acrobot-v1.html"] == "Acrobot-v1"
    html = (index / "leaderboards" / "gymnasium--cartpole-v1.html").read_text()
    assert "gymnasium CartPole-v1" in html and "1.0.0, task CartPole-v1" in html
    env_page = (index / "components" / "environment" / "gymnasium.html").read_text()
    assert 'href="../../leaderboards/index.html"' in env_page  # which lists every task's board
    assert "gymnasium--acrobot-v1.html" in (index / "leaderboards" / "index.html").read_text()
    rebuild_index(str(index))
    assert _board(index, "gymnasium--cartpole-v1") == cartpole and check_index(str(index)) == []


def test_a_record_without_a_task_takes_the_one_its_shipped_agent_ini_sets(index):
    """Records made before tasks existed (the embedded index's cartpole_ppo): the id its agent.ini sets."""
    ini = b"[environment]\ndefault = gymnasium\n\n[environment.gymnasium]\nid = Acrobot-v1\n"
    _publish(index, "old", "1.0", _record(STEADY, "old", environment="gymnasium"), members={"agent.ini": ini})
    (entry,) = _board(index, "gymnasium--acrobot-v1")["entries"]
    assert entry["environment"]["task"] == "Acrobot-v1"
    hostile = b"[environment.gymnasium]\nid = os:system-v0\n"  # not a task id: read as no task
    _publish(index, "odd", "1.0", _record(STEADY, "odd", environment="gymnasium"), members={"agent.ini": hostile})
    assert [e["component"] for e in _board(index, "gymnasium")["entries"]] == ["odd"]


@pytest.mark.parametrize(
    "task",
    ["os:system-v0", "gymnasium.envs:Evil-v0", "A" * 81 + "-v0", "../../etc-v0", "ALE/../Pong-v5", "Cart Pole-v1",
     "CartPole", "a/b/c-v0"],
    ids=["module-import", "dotted-module", "overlong", "dotdot", "slash-dotdot", "space", "no-version", "two-slashes"],
)
def test_a_hostile_task_id_is_refused_beside_a_valid_twin(index, task):
    with pytest.raises(PublishError, match=r"environment\.task .*(not a task id|longer than 80)") as info:
        _publish(index, "evil", "1.0", _record(STEADY, "evil", task=task, environment="gymnasium"))
    assert "\n" not in str(info.value)
    assert not list((index / "leaderboards").glob("*etc*")) and not (index / "etc-v0.json").exists()
    _publish(index, "twin", "1.0", _record(STEADY, "twin", task="ALE/Pong-v5", environment="gymnasium"))
    assert [e["component"] for e in _board(index, "gymnasium--ale--pong-v5")["entries"]] == ["twin"]


def test_a_record_of_an_environment_published_later_by_another_package_is_on_no_board(index, tmp_path):
    """Finding 1: a record names agentos-env-fakechess 7.0.0 for 'chess' before chess exists; once the
    real agentos-env-chess is published, the fake entry is not on its board, after a rebuild either, and
    ``index check`` names it."""
    fake = _record(HIGH, "fake", environment="chess", package="agentos-env-fakechess", version="7.0.0")
    _publish(index, "fake", "1.0", fake)
    publish([str(env_wheel(tmp_path / "chess", "chess", "1.0"))], str(index))
    _publish(index, "honest", "1.0", _record(STEADY, "honest", environment="chess"))
    assert _ranked(index, "chess") == [("honest", "1.0", "claimed")]
    rebuild_index(str(index))
    assert _ranked(index, "chess") == [("honest", "1.0", "claimed")]
    problems = check_index(str(index))
    assert len(problems) == 1 and problems[0].startswith("agentos-policy-fake 1.0: its record names")
    assert "agentos-env-fakechess 7.0.0" in problems[0] and "agentos-env-chess" in problems[0]
    with pytest.raises(PublishError, match="serves it from agentos-env-chess"):  # and at publish, as before
        _publish(index, "late", "1.0", _record(HIGH, "late", environment="chess", package="agentos-env-fakechess"))
    with pytest.raises(PublishError, match="a version this index does not have"):
        _publish(index, "later", "1.0", _record(HIGH, "later", environment="chess", version="9.0"))


def test_verified_above_claimed_above_unverifiable_and_flagged(index):
    """Finding 2 and the ranking: a claim verify could not re-run ranks last, with the flagged ones."""
    for name, returns in (("top", HIGH), ("mid", STEADY), ("low", [r - 2 for r in STEADY]), ("bad", HIGH)):
        _publish(index, name, "1.0", _record(returns, name))
    _publish(index, "queued", "1.0", _record([r - 1 for r in STEADY], "queued"))
    assert [c for c, _, _ in _ranked(index)] == ["bad", "top", "mid", "queued", "low"]  # all claimed: by score
    _verdict(index, "agentos-policy-top", "1.0", "unverifiable", reason="the package did not install")
    _verdict(index, "agentos-policy-bad", "1.0", "flagged", iqm=1.0, interval=[0.5, 1.5], episodes=30)
    _verdict(index, "agentos-policy-low", "1.0", "verified", iqm=3.0, interval=[2.5, 3.5], episodes=30,
             sandboxed=True, environment={"name": "corridor", "version": "1.0.0"})
    _verdict(index, "agentos-policy-queued", "1.0", "pending")
    assert _ranked(index) == [
        ("low", "1.0", "verified"),
        ("mid", "1.0", "claimed"),
        ("queued", "1.0", "pending"),
        ("bad", "1.0", "flagged"),  # unverifiable and flagged: one group, by score
        ("top", "1.0", "unverifiable"),
    ]
    html = (index / "leaderboards" / "corridor.html").read_text()
    assert '<span class="unverifiable">unverifiable</span>' in html and "the package did not install" in html
    assert "on corridor 1.0.0" in html  # the environment release it was verified on
    _verdict(index, "agentos-policy-low", "1.0", "verified", iqm=3.0, interval=[2.5, 3.5], episodes=30,
             sandboxed=False)
    html = (index / "leaderboards" / "corridor.html").read_text()
    assert '<span class="unsandboxed">verified (unsandboxed)</span>' in html
    assert _ranked(index)[0] == ("low", "1.0", "verified")


def test_a_flag_stays_on_later_releases_until_one_is_verified(index):
    """Finding 3: the same weights and record republished as 1.0.1 do not shed 1.0.0's flag."""
    claim = record(HIGH, policy="walker")
    _publish(index, "walker", "1.0.0", {**claim, "policy": {**claim["policy"], "version": "1.0.0"}})
    _publish(index, "steady", "1.0", _record(STEADY, "steady"))
    _verdict(index, "agentos-policy-walker", "1.0.0", "flagged", iqm=1.0, interval=[0.5, 1.5], episodes=30)
    _publish(index, "walker", "1.0.1", {**claim, "policy": {**claim["policy"], "version": "1.0.1"}})
    board = _board(index, "corridor")["entries"]
    assert [(e["component"], e["version"], e["flagged_earlier"]) for e in board] == [
        ("steady", "1.0", None),
        ("walker", "1.0.1", "1.0.0"),
    ]
    html = (index / "leaderboards" / "corridor.html").read_text()
    assert "claimed; flagged earlier (1.0.0)" in html
    assert "flagged earlier (1.0.0)" in (index / "components" / "policy" / "walker.html").read_text()
    _verdict(index, "agentos-policy-walker", "1.0.1", "verified", iqm=15.0, interval=[14.5, 15.5], episodes=30)
    board = _board(index, "corridor")["entries"]
    assert [(e["component"], e["flagged_earlier"]) for e in board] == [("walker", None), ("steady", None)]
