"""``agentos index verify``: a real trained package re-run in a fresh venv on new seeds.

A q_table policy is trained with sarsa on corridor (a real run), published with ``agentos publish
--run`` into an index that also holds agentos-core and the plugins it needs; ``agentos index
verify`` builds a fresh venv from that index, installs the claim's exact versions and re-plays
them. Its doctored twin (the same weights, a record claiming more than it plays) is flagged.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from agentos.registry import publish, rebuild_index
from conftest import wheel_for
from packaging.version import Version
from registry.results_maker import iqm, policy_wheel, record

PLUGINS = ["agentos-env-corridor", "agentos-policy-q-table", "agentos-trainer-sarsa", "agentos-policy-random"]
INI = "[environment]\ndefault = corridor\n\n[policy]\ndefault = q_table\n\n[trainer]\ndefault = sarsa\n"


def _agentos(*args, cwd, home: Path, timeout=600) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "AGENTOS_INDEX_URL": ""}
    env.pop("AGENTOS_AGENT_INI", None)
    cmd = [sys.executable, "-m", "agentos", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, wheelhouse):
    """(index, home, the published walker wheel): a trained q_table published with publish --run."""
    work = tmp_path_factory.mktemp("verify")
    index = work / "index"
    publish([str(wheel_for(wheelhouse, d)) for d in ["agentos-core", *PLUGINS]], str(index), library=True)
    agent = work / "agent"
    agent.mkdir()
    (agent / "agent.ini").write_text(INI)
    train = _agentos("train", "agent.ini", 300, "--seed", 0, cwd=agent, home=work)
    assert train.returncode == 0, train.stderr
    (run,) = [p.name for p in (agent / "runs").iterdir() if p.is_dir()]
    done = _agentos(
        "publish",
        "--run",
        run,
        "--name",
        "walker",
        "--index",
        index,
        "--episodes",
        30,
        "--keep",
        work / "kept",
        cwd=agent,
        home=work,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = (work / "kept").glob("*.whl")
    return index, work, wheel


def _board(index: Path) -> list[dict]:
    return json.loads((index / "leaderboards" / "corridor.json").read_text())["entries"]


def _doctored(wheel: Path, folder: Path, version: str, shift: float) -> Path:
    """The same package (same weights, same code) as ``version``, whose record claims ``shift`` more per episode."""
    old = wheel.name.split("-")[1]
    members = {}
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            members[name.replace(f"-{old}.dist-info", f"-{version}.dist-info")] = zf.read(name)
    info = next(n.split("/")[0] for n in members if n.endswith(".dist-info/METADATA"))
    members[f"{info}/METADATA"] = members[f"{info}/METADATA"].replace(
        f"Version: {old}".encode(), f"Version: {version}".encode()
    )
    claim = json.loads(members["agentos_policy_walker/results.json"])
    returns = [r + shift for r in claim["returns"]]
    claim.update(returns=returns, mean=sum(returns) / len(returns), iqm=iqm(returns))
    claim["interval"] = [x + shift for x in claim["interval"]]
    claim["policy"]["version"] = version
    members["agentos_policy_walker/results.json"] = json.dumps(claim).encode()
    lines = []
    for name, data in members.items():
        if not name.endswith("/RECORD"):
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            lines.append(f"{name},sha256={digest},{len(data)}")
    members[f"{info}/RECORD"] = ("\n".join([*lines, f"{info}/RECORD,,"]) + "\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"agentos_policy_walker-{version}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)
    return out


def test_verify_marks_an_honest_claim_verified_on_new_seeds(trained):
    index, home, _ = trained
    (entry,) = _board(index)
    assert entry["status"] == "claimed" and entry["seeds"] == {"first": 0, "last": 29, "consecutive": True}
    replay = (index / entry["replay"]).read_bytes()  # publish --run ships a replay; the index serves it
    assert replay[:6] in (b"GIF87a", b"GIF89a") and entry["replay"].endswith("/1.0.0/replay.gif")

    overlap = _agentos("index", "verify", "walker", "--index", index, "--seed", 10, cwd=home, home=home)
    assert overlap.returncode == 2 and "reuses seeds of the claim (0..29)" in overlap.stderr
    assert len(overlap.stderr.strip().splitlines()) == 1 and "Traceback" not in overlap.stderr
    too_few = _agentos("index", "verify", "walker", "--index", index, "--episodes", 3, cwd=home, home=home)
    assert too_few.returncode == 2 and "--episodes must be at least 5" in too_few.stderr
    unknown = _agentos("index", "verify", "nobody", "--index", index, cwd=home, home=home)
    assert unknown.returncode == 2 and "agentos-policy-nobody is not published" in unknown.stderr
    for args, message in [  # each refused in one line before any venv is made (none would run)
        (("--seed", 2**32), "outside agentos evaluate's range"),
        (("--seed", -5), "outside agentos evaluate's range"),
        (("--episodes", 10**11), "--episodes must be at most 100,000"),
        (("--timeout", "nan"), "--timeout must be a positive number"),
        (("--timeout", -1), "--timeout must be a positive number"),
    ]:
        refused = _agentos("index", "verify", "walker", "--index", index, *args, cwd=home, home=home)
        assert refused.returncode == 2 and message in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1 and "fresh venv" not in refused.stderr
    assert _board(index)[0]["status"] == "claimed"  # refusals store nothing

    done = _agentos("index", "verify", "walker", "--index", index, cwd=home, home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("verified: agentos-policy-walker 1.0.0: the intervals agree")
    assert "policy in the sandbox (bwrap)" in done.stderr and "UNSANDBOXED" not in done.stdout
    (entry,) = _board(index)
    check = entry["verification"]
    assert entry["status"] == "verified" and check["status"] == "verified" and check["sandboxed"] is True
    assert check["environment"]["name"] == "corridor" and check["environment"]["version"]
    first = check["seeds"]["first"]  # the verifier's secret seeds: none of the claim's 0..29
    assert first >= 30 and check["seeds"] == {"first": first, "last": first + 29, "consecutive": True}
    assert f"new seeds {first}..{first + 29}" in done.stderr and check["episodes"] == 30
    assert check["iqm"] == entry["iqm"]  # a greedy tabular policy on corridor plays the same on any seed
    rerun = json.loads((index / check["record"]).read_text())
    assert rerun["seeds"] == list(range(first, first + 30)) and rerun["policy"]["version"] == "1.0.0"
    page = (index / "leaderboards" / "corridor.html").read_text()
    assert '<span class="verified">verified</span>' in page and "re-run: IQM" in page
    assert "verified" in (index / "components" / "policy" / "walker.html").read_text()

    rebuild_index(str(index))  # the verdict is the index's state: a rebuild keeps it
    assert _board(index)[0]["status"] == "verified"


def test_verify_flags_a_doctored_claim_and_it_ranks_last(trained, tmp_path):
    index, home, wheel = trained
    with zipfile.ZipFile(wheel) as zf:  # steady's claim is of the very environment release the index serves
        environment = json.loads(zf.read("agentos_policy_walker/results.json"))["environment"]
    steady = policy_wheel(
        tmp_path / "s", "steady", "1.0", {**record([-20.0] * 10, policy="steady"), "environment": environment}
    )
    before = json.loads((index / "catalogue.json").read_text())["projects"]["agentos-policy-walker"]["releases"]
    publish([str(steady), str(_doctored(wheel, tmp_path / "d", "1.0.1", 8.0))], str(index))
    ranked = [(e["component"], e["version"], e["status"]) for e in _board(index)]
    assert ranked == [("walker", "1.0.1", "claimed"), ("steady", "1.0", "claimed")]  # the claim leads, for now
    assert _board(index)[0]["iqm"] == -1.0

    done = _agentos("index", "verify", "walker==1.0.1", "--index", index, cwd=home, home=home)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("flagged: agentos-policy-walker 1.0.1: the claim is above what the package plays")
    assert "claimed IQM -1 [-1, -1]" in done.stdout and "re-run IQM -9 [-9, -9]" in done.stdout
    ranked = [(e["component"], e["version"], e["status"]) for e in _board(index)]
    assert ranked == [("steady", "1.0", "claimed"), ("walker", "1.0.1", "flagged")]
    flagged = _board(index)[1]
    assert flagged["iqm"] == -1.0 and flagged["verification"]["iqm"] == -9.0  # both numbers shown
    assert '<span class="flagged">flagged</span>' in (index / "leaderboards" / "corridor.html").read_text()
    catalogue = json.loads((index / "catalogue.json").read_text())
    releases = catalogue["projects"]["agentos-policy-walker"]["releases"]
    assert releases["1.0.1"]["results"]["status"] == "flagged"
    assert releases["1.0.0"]["results"] == before["1.0.0"]["results"]  # the other release's entry is untouched


def _numbers(iqm_value, interval, episodes=30):
    seeds = list(range(100, 100 + episodes))
    return {"iqm": iqm_value, "interval": interval, "episodes": episodes, "seeds": seeds, "mean": iqm_value,
            "std": 1.0, "confidence": 0.95, "agentos": "0.4.1"}  # fmt: skip


@pytest.mark.parametrize(
    ("claim", "rerun", "tolerance", "status", "why"),
    [
        ((10.0, [9.0, 11.0]), (10.5, [9.5, 11.5]), 0.0, "verified", "the intervals agree"),
        ((10.0, [9.0, 11.0]), (12.0, [11.0, 13.0]), 0.0, "verified", "the intervals agree"),  # touching
        ((20.0, [19.0, 21.0]), (10.0, [9.0, 11.0]), 0.0, "flagged", "the claim is above what the package plays"),
        ((20.0, [19.0, 21.0]), (10.0, [9.0, 11.0]), 0.5, "verified", "the intervals agree"),  # 0.5 x 20 = 10 of slack
        ((20.0, [19.0, 21.0]), (10.0, [9.0, 11.0]), 0.35, "flagged", "the claim is above"),  # 7 of slack: 19 > 18
        ((1.0, [0.5, 1.5]), (10.0, [9.0, 11.0]), 0.05, "flagged", "the package plays better than it claims"),
        ((10.0, None), (10.2, [9.9, 10.4]), 0.0, "verified", "the intervals agree"),  # a claim without interval
        ((10.0, None), (10.6, [10.4, 10.8]), 0.0, "flagged", "plays better"),
        ((-9.0, [-9.0, -9.0]), (-9.0, [-9.0, -9.0]), 0.0, "verified", "agree"),  # deterministic: equal
    ],
)
def test_agreement_rule(claim, rerun, tolerance, status, why):
    from agentos.registry._verify import verdict

    result = verdict(_numbers(*claim), _numbers(*rerun), tolerance)
    assert result["status"] == status and why in result["reason"]
    assert result["seeds"] == {"first": 100, "last": 129, "consecutive": True} and result["tolerance"] == tolerance


PATCHING_POLICY = """
import gymnasium
from agentos import Policy

_step = gymnasium.Env.step
gymnasium.Env.step = lambda self, a: (lambda o, r, t, u, i: (o, r + 1000.0, t, u, i))(*_step(self, a))

class Thing(Policy):
    def decide(self, observation):
        return 1
"""
ENDLESS_POLICY = PATCHING_POLICY.replace("return 1", "while True:\n            pass")


PLUGIN_PROOF = """
import os
try:  # outside the sandbox this would reach the maintainer's files and environment
    with open({proof!r}, "w") as f:
        f.write(os.environ.get("AGENTOS_TEST_SECRET", "ran"))
except OSError:
    pass
"""


def _with_pth(wheel: Path, proof: Path) -> Path:
    """``wheel`` with a top-level ``.pth`` file that imports its module (so patches) at every interpreter start,
    and an ``agentos.plugins`` entry point whose module writes ``proof`` wherever it is loaded."""
    with zipfile.ZipFile(wheel) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    info = next(n.split("/")[0] for n in members if n.endswith(".dist-info/METADATA"))
    members["agentos_policy_patcher_hook.pth"] = b"import agentos_policy_patcher\n"
    members["agentos_policy_patcher/plugin.py"] = PLUGIN_PROOF.format(proof=str(proof)).encode()
    members[f"{info}/entry_points.txt"] += b"\n[agentos.plugins]\npwn = agentos_policy_patcher.plugin\n"
    lines = []
    for name, data in members.items():
        if not name.endswith("/RECORD"):
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            lines.append(f"{name},sha256={digest},{len(data)}")
    members[f"{info}/RECORD"] = ("\n".join([*lines, f"{info}/RECORD,,"]) + "\n").encode()
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)
    return wheel


def test_a_package_that_patches_the_environment_is_flagged_and_one_that_hangs_is_unverifiable(trained, tmp_path):
    """The patch (at import, and from a .pth file at every interpreter start) lives only in the sandboxed
    policy's venv and process: the verifier's corridor pays honestly (re-run IQM < 100); a policy
    that never answers ends at the whole verification's deadline (set-up included), stored as unverifiable.
    The package's ``agentos.plugins`` entry point is never loaded outside the sandbox (the fresh venvs'
    installs import nothing they installed)."""
    index, home, wheel = trained
    with zipfile.ZipFile(wheel) as zf:
        environment = json.loads(zf.read("agentos_policy_walker/results.json"))["environment"]
    claim = {**record([500.0] * 10, policy="patcher"), "environment": environment}
    proof = tmp_path / "plugin-ran.txt"
    patcher = _with_pth(policy_wheel(tmp_path / "p", "patcher", "1.0", claim, code=PATCHING_POLICY), proof)
    publish([str(patcher),
             str(policy_wheel(tmp_path / "e", "endless", "1.0", {**claim, "policy": {**claim["policy"],
                 "name": "endless", "package": "agentos-policy-endless"}}, code=ENDLESS_POLICY))], str(index))

    patched = _agentos("index", "verify", "patcher", "--index", index, cwd=home, home=home)
    assert patched.returncode == 1, patched.stderr
    assert patched.stdout.startswith("flagged: agentos-policy-patcher 1.0: the claim is above what the package plays")
    releases = json.loads((index / "catalogue.json").read_text())["projects"]
    check = releases["agentos-policy-patcher"]["releases"]["1.0"]["results"]["verification"]
    assert check["status"] == "flagged" and check["sandboxed"] is True and check["iqm"] < 100
    assert not proof.exists()  # the package's plugin module ran nowhere outside the sandbox (set-up included)

    started = time.monotonic()
    hung = _agentos("index", "verify", "endless", "--index", index, "--timeout", 60, cwd=home, home=home)
    assert time.monotonic() - started < 60 + 60  # the deadline covers set-up too; slack for a loaded machine
    assert hung.returncode == 3, hung.stderr
    assert hung.stdout.startswith("unverifiable: agentos-policy-endless 1.0: ")
    assert "wall time" in hung.stdout or "longer than 60 s" in hung.stdout, hung.stdout
    releases = json.loads((index / "catalogue.json").read_text())["projects"]
    results = releases["agentos-policy-endless"]["releases"]["1.0"]["results"]
    assert results["status"] == "unverifiable" and results["verification"]["status"] == "unverifiable"
    assert results["verification"]["environment"]["name"] == "corridor" and "record" not in results["verification"]


def test_evaluate_isolated_plays_the_policy_in_the_sandbox(trained):
    index, home, _ = trained
    out = home / "isolated.json"
    done = _agentos("evaluate", "walker", "--environment", "corridor", "--isolated", "--index-url", index.as_uri(),
                    "--episodes", 6, "--seed", 7, "--out", out, cwd=home, home=home)
    assert done.returncode == 0, done.stderr
    assert "policy in the sandbox (bwrap)" in done.stderr
    made = json.loads(out.read_text())
    # the newest walker the index serves (a doctored 1.0.1 is published by the flagging test when it runs first)
    releases = json.loads((index / "catalogue.json").read_text())["projects"]["agentos-policy-walker"]["releases"]
    newest = max((v for v, r in releases.items() if not r.get("yanked")), key=Version)
    assert made["seeds"] == list(range(7, 13)) and made["policy"] == {
        "name": "walker", "package": "agentos-policy-walker", "version": newest}
    assert made["environment"]["name"] == "corridor" and made["iqm"] == -9.0  # what the walker plays on any seed
