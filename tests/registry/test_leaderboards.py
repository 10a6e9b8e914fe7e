"""Leaderboards written at publish time from the results records inside uploaded wheels.

Real wheels (written by the test), published with the registry's own publish path into a temporary
index; the leaderboard files are read back as a client would. Hostile packages beside valid twins.
"""

from __future__ import annotations

import json
import os
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from agentos.errors import PublishError
from agentos.registry import publish, rebuild_index, yank
from registry.results_maker import TINY_GIF, policy_wheel, record
from registry.wheelmaker import env_wheel

STEADY = [4.0, 5.0, 6.0, 5.0] * 10  # 40 episodes, IQM 5, a narrow interval
LUCKY = [0.0, 30.0, 1.0, 29.0, 0.5, 28.0]  # 6 episodes: mean 14.75, but a wide interval reaching 0.5


def _board(index: Path, env: str = "corridor") -> dict:
    return json.loads((index / "leaderboards" / f"{env}.json").read_text())


def _ranked(index: Path, env: str = "corridor") -> list[tuple[str, int]]:
    return [(e["component"], e["rank"]) for e in _board(index, env)["entries"]]


@pytest.fixture
def index(tmp_path) -> Path:
    root = tmp_path / "index"
    publish([str(env_wheel(tmp_path / "w", "corridor", "1.0"))], str(root))
    return root


def _publish(index: Path, name: str, version: str, results, **kw) -> list[dict]:
    wheel = policy_wheel(index.parent / f"w-{name}-{version}", name, version, results, **kw)
    return publish([str(wheel)], str(index))


def test_entries_ranked_by_the_lower_end_of_the_interval(index):
    assert _board(index)["entries"] == []  # every environment has a leaderboard, even an empty one
    _publish(index, "steady", "1.0", record(STEADY, policy="steady"))
    _publish(index, "lucky", "1.0", record(LUCKY, policy="lucky"))
    _publish(index, "few", "1.0", record([50.0, 60.0], policy="few"))  # too few episodes: no interval
    board = _board(index)
    lucky = next(e for e in board["entries"] if e["component"] == "lucky")
    steady = next(e for e in board["entries"] if e["component"] == "steady")
    assert lucky["mean"] > steady["mean"] and lucky["iqm"] > steady["iqm"]  # higher scores...
    assert lucky["interval"][0] < steady["interval"][0]  # ...but a lower floor
    assert _ranked(index) == [("steady", 1), ("lucky", 2), ("few", 3)]  # the lucky sample does not lead
    _publish(index, "narrow", "1.0", record(LUCKY, policy="narrow", interval=[14.0, 15.0]))  # claims a tight interval
    narrow = next(e for e in _board(index)["entries"] if e["component"] == "narrow")
    assert narrow["interval"] == lucky["interval"]  # the index bootstraps the returns itself...
    assert _board(index)["entries"][0]["component"] == "steady"  # ...so a claimed narrow interval does not lead
    assert narrow["confidence"] == 0.95 and narrow["claimed_interval"] == [14.0, 15.0]
    assert board["format"] == "agentos-leaderboard/1" and "lower end" in board["ranking"]
    assert steady["episodes"] == 40 and steady["seeds"] == {"first": 0, "last": 39, "consecutive": True}
    assert steady["status"] == "claimed" and steady["verification"] is None
    assert steady["version"] == "1.0" and steady["package"] == "agentos-policy-steady"
    assert steady["environment"] == {"name": "corridor", "package": "agentos-env-corridor", "version": "1.0.0"}
    assert steady["page"] == "components/policy/steady.html" and (index / steady["page"]).is_file()
    served = json.loads((index / steady["record"]).read_text())  # the full record, per-episode returns too
    assert served["returns"] == STEADY and served["format"] == "agentos-results/1"
    from agentos import stats

    assert steady["interval"] == stats.summarize(STEADY)["interval"]  # the index's own 95% bootstrap of the IQM
    few = next(e for e in board["entries"] if e["component"] == "few")
    assert few["interval"] is None and few["replay"] is None

    listing = json.loads((index / "leaderboards" / "index.json").read_text())["leaderboards"]
    assert listing == [
        {"environment": "corridor", "entries": 4, "leader": "agentos-policy-steady", "page": "corridor.html"}
    ]
    assert 'href="leaderboards/index.html"' in (index / "index.html").read_text()  # from the main page
    env_page = (index / "components" / "environment" / "corridor.html").read_text()
    assert 'href="../../leaderboards/corridor.html"' in env_page
    policy_page = (index / "components" / "policy" / "steady.html").read_text()
    assert 'id="results"' in policy_page and 'href="../../leaderboards/corridor.html"' in policy_page


def test_newest_release_is_the_entry_and_a_yanked_release_drops_out(index):
    _publish(index, "steady", "1.0", record(STEADY, policy="steady"))
    better = [s + 10 for s in STEADY]
    _publish(index, "steady", "2.0", record(better, policy="steady", version="2.0"))
    (entry,) = _board(index)["entries"]
    assert entry["version"] == "2.0" and entry["iqm"] == 15.0
    yank("agentos-policy-steady", "2.0", "a bad upload", str(index))
    (entry,) = _board(index)["entries"]
    assert entry["version"] == "1.0" and entry["iqm"] == 5.0  # the older, non-yanked record is the entry
    yank("agentos-policy-steady", "1.0", "also bad", str(index))
    assert _board(index)["entries"] == []
    assert (index / "results" / "agentos-policy-steady" / "2.0" / "results.json").is_file()  # still served
    yank("agentos-policy-steady", "2.0", index=str(index), undo=True)
    assert [e["version"] for e in _board(index)["entries"]] == ["2.0"]


def test_replay_served_as_a_file_and_rebuild_writes_everything_again(index):
    _publish(index, "steady", "1.0", record(STEADY, policy="steady", replay="game.gif"), members={"game.gif": TINY_GIF})
    (entry,) = _board(index)["entries"]
    assert entry["replay"] == "results/agentos-policy-steady/1.0/replay.gif"
    assert (index / entry["replay"]).read_bytes() == TINY_GIF
    assert (
        'src="../results/agentos-policy-steady/1.0/replay.gif"'
        in (index / "leaderboards" / "corridor.html").read_text()
    )
    before = (index / "leaderboards" / "corridor.json").read_text()
    for path in [index / "leaderboards" / "corridor.json", index / entry["replay"]]:
        path.unlink()
    rebuild_index(str(index))
    assert (index / "leaderboards" / "corridor.json").read_text() == before
    assert (index / entry["replay"]).read_bytes() == TINY_GIF


def test_publishing_the_same_wheel_again_repairs_missing_record_files(index):
    _publish(index, "steady", "1.0", record(STEADY, policy="steady", replay="game.gif"), members={"game.gif": TINY_GIF})
    served = index / "results" / "agentos-policy-steady" / "1.0"
    wheel = next((index.parent / "w-steady-1.0").glob("*.whl"))
    assert publish([str(wheel)], str(index))[0]["status"] == "unchanged"
    (served / "replay.gif").unlink()  # what a publish killed half-way may leave
    assert publish([str(wheel)], str(index))[0]["status"] == "repaired"
    assert (served / "replay.gif").read_bytes() == TINY_GIF


def test_same_version_with_another_record_is_refused(index):
    _publish(index, "steady", "1.0", record(STEADY, policy="steady"))
    with pytest.raises(PublishError, match="already published with another results record"):
        _publish(index, "steady", "1.0", record([9.0] * 40, policy="steady"), tag="py312-none-any")
    assert _board(index)["entries"][0]["iqm"] == 5.0


def _bomb(member_size: int) -> bytes:
    """A record padded with spaces to ``member_size`` bytes: tiny once deflated (a zip bomb past 1 MiB)."""
    text = json.dumps(record(STEADY, policy="bomb")).encode()
    return text[:-1] + b" " * (member_size - len(text)) + b"}"


HOSTILE = [
    ("oversized", lambda: {**record(STEADY, policy="bomb"), "pad": os.urandom(600_000).hex()}, {}, "at most 1 MiB"),
    ("zip bomb", lambda: _bomb(50 << 20), {}, "a zip bomb"),
    ("wrong type", lambda: {**record(STEADY, policy="bomb"), "episodes": "40"}, {}, "episodes must be an integer"),
    (
        "NaN",
        lambda: json.dumps(record(STEADY, policy="bomb")).replace('"std": ', '"std": NaN, "_": ').encode(),
        {},
        "finite",
    ),
    (
        "HTML name",
        lambda: record(STEADY, policy="bomb", environment="<img src=x onerror=alert(1)>"),
        {},
        "environment.name must be a component name",
    ),
    ("replay path", lambda: {**record(STEADY, policy="bomb"), "replay": "../../../index.html"}, {}, "replay must be"),
    ("replay missing", lambda: record(STEADY, policy="bomb", replay="game.gif"), {}, "does not hold"),
    (
        "replay not a GIF",
        lambda: record(STEADY, policy="bomb", replay="game.gif"),
        {"game.gif": b"<script>alert(1)</script>"},
        "is not a GIF",
    ),
    (
        "replay too large",
        lambda: record(STEADY, policy="bomb", replay="game.gif"),
        {"game.gif": TINY_GIF + os.urandom(16 << 20)},
        "at most 16 MiB",
    ),
    (
        "replay pixel flood",  # 60000x60000: tens of GB in every visitor's browser, from a few bytes
        lambda: record(STEADY, policy="bomb", replay="game.gif"),
        {"game.gif": TINY_GIF[:6] + (60000).to_bytes(2, "little") * 2 + TINY_GIF[10:]},
        "at most 2048 a side",
    ),
    (
        "replay frame outside its screen",
        lambda: record(STEADY, policy="bomb", replay="game.gif"),
        {"game.gif": TINY_GIF[:27] + b",\x00\x00\x00\x00\xff\x7f\xff\x7f" + TINY_GIF[36:]},
        "outside its 1x1 screen",
    ),
    (
        "replay of too many frames",
        lambda: record(STEADY, policy="bomb", replay="game.gif"),
        {"game.gif": TINY_GIF[:27] + TINY_GIF[27:42] * 3001 + b";"},
        "more than 3000 frames",
    ),
    (
        "replay truncated",
        lambda: record(STEADY, policy="bomb", replay="game.gif"),
        {"game.gif": TINY_GIF[:-1]},
        "no trailer",
    ),
    (
        "one lucky seed repeated",  # 40 replays of seed 0 are one sample, not 40: its interval would be a lie
        lambda: {**record(STEADY, policy="bomb"), "seeds": [0] * 40},
        {},
        "seeds must be distinct",
    ),
    (
        "played on another environment package",  # a place on corridor's board, evaluated elsewhere
        lambda: {
            **record(STEADY, policy="bomb"),
            "environment": {"name": "corridor", "package": "agentos-env-easy", "version": "1.0"},
        },
        {},
        "but this index serves it from agentos-env-corridor",
    ),
    (
        "an environment version the index never had",
        lambda: {
            **record(STEADY, policy="bomb"),
            "environment": {"name": "corridor", "package": "agentos-env-corridor", "version": "9.9"},
        },
        {},
        "a version this index does not have",
    ),
    ("another package", lambda: record(STEADY, policy="steady"), {}, "not this package"),
    ("another version", lambda: record(STEADY, policy="bomb", version="9.9"), {}, "not this package"),
    ("claims more than it is", lambda: {**record(STEADY, policy="bomb"), "mean": 99.0}, {}, "is not the mean"),
]


@pytest.mark.parametrize(("results", "members", "match"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_hostile_records_refused_beside_a_valid_twin(index, results, members, match):
    with pytest.raises(PublishError, match=match) as info:
        _publish(index, "bomb", "1.0", results(), members=members)
    assert "\n" not in str(info.value)
    assert not (index / "files" / "agentos-policy-bomb").exists() and not (index / "results").exists()
    assert _board(index)["entries"] == []
    twin_members = {"game.gif": TINY_GIF} if members else {}
    twin = record(STEADY, policy="bomb", replay="game.gif" if members else None)
    assert _publish(index, "bomb", "1.0", twin, members=twin_members)[0]["status"] == "published"
    assert _ranked(index) == [("bomb", 1)]


def test_record_in_a_non_policy_package_or_elsewhere_is_ignored(index, tmp_path):
    """Only agentos_policy_<name>/results.json of a policy package is a record; nothing else is read."""
    wheel = policy_wheel(tmp_path / "o", "other", "1.0", None, members={"sub/results.json": b"not json"})
    assert publish([str(wheel)], str(index))[0]["status"] == "published"
    assert _board(index)["entries"] == []


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.names, self.attrs = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.names += [n for n, _ in attrs]
        self.attrs += [v or "" for _, v in attrs]


def test_pages_escape_every_string_even_from_a_hand_edited_catalogue(index):
    """Defence in depth: strings the validator would refuse are still escaped if a catalogue holds them."""
    from agentos.registry import _leaderboards

    _publish(index, "steady", "1.0", record(STEADY, policy="steady"))
    catalogue = json.loads((index / "catalogue.json").read_text())
    results = catalogue["projects"]["agentos-policy-steady"]["releases"]["1.0"]["results"]
    evil = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    results["policy"]["name"] = evil
    results["replay"] = 'javascript:alert(3)" onload="alert(4)'
    results["status"] = evil
    results["verification"] = {"iqm": 1.0, "interval": [0.0, 2.0], "episodes": 5, "reason": evil,
                               "environment": {"name": evil, "version": evil, "task": evil}}
    results["environment"]["version"] = evil  # not a release the index serves: on no board at all
    assert _leaderboards.boards(catalogue)["corridor"] == []
    results["environment"]["version"] = "1.0"
    boards = _leaderboards.boards(catalogue)
    page = _leaderboards.board_html("corridor", boards["corridor"])
    parser = _Tags()
    parser.feed(page)
    assert "script" not in parser.tags and parser.tags.count("img") == 1  # only the replay's own <img>
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not any(a.startswith("javascript:") for a in parser.attrs)
    assert not any(name.startswith("on") for name in parser.names)  # no event handler escaped its quotes
    twin = _leaderboards.board_html(
        "corridor", _leaderboards.boards(json.loads((index / "catalogue.json").read_text()))["corridor"]
    )
    assert "<td>1</td>" in twin and ">steady</a>" in twin  # the valid twin renders its entry


def test_wheel_members_are_read_never_imported(index, tmp_path):
    """The package's code would leave a mark if it ran at publish or render time; it never does."""
    mark = tmp_path / "ran"
    code = f"open({str(mark)!r}, 'w').write('imported')\nclass Thing:\n    pass\n"
    _publish(index, "steady", "1.0", record(STEADY, policy="steady"), code=code)
    rebuild_index(str(index))
    assert _ranked(index) == [("steady", 1)] and not mark.exists()
    with zipfile.ZipFile(next((index / "files" / "agentos-policy-steady").glob("*.whl"))) as zf:
        assert "agentos_policy_steady/results.json" in zf.namelist()


def test_a_publish_rewrites_only_the_leaderboards_it_concerns_and_check_sees_the_files(index, tmp_path):
    from agentos.registry import check_index

    publish([str(env_wheel(tmp_path / "e", "maze", "1.0"))], str(index))
    _publish(index, "steady", "1.0", record(STEADY, policy="steady"))
    from agentos.registry import _leaderboards

    catalogue = json.loads((index / "catalogue.json").read_text())
    rendered = {Path(p).name for p, _ in _leaderboards.pages(str(index), catalogue, {"agentos-policy-steady"})}
    assert rendered == {"corridor.json", "corridor.html", "index.json", "index.html"}  # not maze's board
    assert {"maze.json", "maze.html"} <= {Path(p).name for p, _ in _leaderboards.pages(str(index), catalogue)}
    (index / "leaderboards" / "maze.html").unlink()  # a missing board is written again by any publish
    _publish(index, "other", "1.0", record(STEADY, policy="other"))
    assert 'id="empty"' in (index / "leaderboards" / "maze.html").read_text()
    assert ">other</a>" in (index / "leaderboards" / "corridor.html").read_text()
    assert _ranked(index) == [("other", 1), ("steady", 2)]  # equal scores: by project name
    assert check_index(str(index)) == []
    (index / "results" / "agentos-policy-steady" / "1.0" / "results.json").write_text("{}")
    assert check_index(str(index)) == [
        "agentos-policy-steady 1.0: results/agentos-policy-steady/1.0/results.json missing or not the published record"
    ]
    rebuild_index(str(index))  # the record is re-read from the wheel
    assert check_index(str(index)) == []


def test_verify_plans_new_seeds_within_what_evaluate_plays(index):
    """A claim whose seeds end at the top of the record's range (2**32 - 1): verify's default new seeds
    are secret (drawn with ``secrets``), within what agentos evaluate takes and none of the claim's; a
    --seed past that range is refused at once (no fresh venv) and a --seed below the claim's seeds is
    planned as asked. Seeds past 2**32 are refused outright."""
    from agentos.errors import UsageError
    from agentos.registry._index import LocalIndex
    from agentos.registry._verify import EVALUATE_SEED_LIMIT, plan, verify

    def never(target):
        raise AssertionError("no re-run may start")

    top = 2**32 - 40
    _publish(index, "high", "1.0", record(STEADY, policy="high", seed=top))
    starts = set()
    for _ in range(5):
        planned = plan(LocalIndex(str(index)), "high")
        assert 0 <= planned["seed"] < EVALUATE_SEED_LIMIT and planned["seed"] + planned["episodes"] <= top
        starts.add(planned["seed"])
    assert len(starts) > 1  # unpredictable: not one past the claim's seeds, not a fixed start
    with pytest.raises(UsageError, match=r"new seeds would start at 4294967296, outside .*pass --seed S"):
        verify("high", never, index=str(index), seed=2**32)
    assert plan(LocalIndex(str(index)), "high", seed=0)["seed"] == 0
    with pytest.raises(PublishError, match=r"seeds\[0\] must be between 0 and 4294967295"):
        _publish(index, "higher", "1.0", record(STEADY, policy="higher", seed=2**32))
