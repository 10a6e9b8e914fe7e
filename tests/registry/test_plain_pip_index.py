"""Plain pip against the committed index (``pip install --index-url <index>/simple ...``) never lands
on an old release that runs without today's agentos-core: such releases are yanked (PEP 592)."""

from __future__ import annotations

import json
import os

from packaging.requirements import Requirement
from packaging.version import Version

from ..conftest import ROOT


def _catalogue() -> dict:
    return json.loads((ROOT / "index" / "catalogue.json").read_text())


def _core_requirement(release: dict) -> Requirement | None:
    reqs = [Requirement(line) for line in release["requires"]]
    return next((r for r in reqs if r.name == "agentos-core" and not r.marker), None)


def offered_releases_that_miss_todays_core(catalogue: dict) -> list[str]:
    """Non-yanked releases that pip could choose although they would run on another core (or none)."""
    cores = catalogue["projects"]["agentos-core"]["releases"]
    today = max((Version(v) for v, r in cores.items() if not r.get("yanked")), default=None)
    older = [Version(v) for v in cores if today is not None and Version(v) < today]
    bad = [f"agentos-core {v}: older than {today}" for v in older if not cores[str(v)].get("yanked")]
    for project, info in catalogue["projects"].items():
        if project == "agentos-core":
            continue
        for version, release in info["releases"].items():
            if release.get("yanked"):
                continue
            core = _core_requirement(release)
            if core is None:
                bad.append(f"{project} {version}: does not require agentos-core")
            elif today not in core.specifier:  # (older cores are yanked, checked above: pip skips them)
                bad.append(f"{project} {version}: agentos-core{core.specifier} is not today's {today}")
    return bad


def test_rule_catches_a_release_without_core_and_accepts_its_valid_twin():
    rel = {"requires": ["gymnasium>=1.0"], "yanked": False}
    ok = {"requires": ["agentos-core>=0.3", "gymnasium>=1.0"], "yanked": False}
    core = {"0.2.0": {"requires": [], "yanked": "superseded"}, "0.3.0": {"requires": [], "yanked": False}}
    catalogue = {"projects": {"agentos-core": {"releases": core}, "agentos-env-x": {"releases": {"1.0.0": rel}}}}
    assert offered_releases_that_miss_todays_core(catalogue) == ["agentos-env-x 1.0.0: does not require agentos-core"]
    catalogue["projects"]["agentos-env-x"]["releases"] = {"1.0.0": {**rel, "yanked": "old"}, "1.1.0": ok}
    assert offered_releases_that_miss_todays_core(catalogue) == []
    loose = {"requires": ["agentos-core>=0.1"], "yanked": False}  # admits only yanked older cores: fine
    catalogue["projects"]["agentos-env-x"]["releases"]["1.2.0"] = loose
    assert offered_releases_that_miss_todays_core(catalogue) == []
    stale = {"requires": ["agentos-core<0.3,>=0.1"], "yanked": False}
    catalogue["projects"]["agentos-env-x"]["releases"]["1.3.0"] = stale
    assert offered_releases_that_miss_todays_core(catalogue) == [
        "agentos-env-x 1.3.0: agentos-core<0.3,>=0.1 is not today's 0.3.0"
    ]
    core["0.2.0"]["yanked"] = False  # an older core pip could still pick
    assert "agentos-core 0.2.0: older than 0.3.0" in offered_releases_that_miss_todays_core(catalogue)


def test_committed_index_offers_only_releases_for_todays_core():
    assert offered_releases_that_miss_todays_core(_catalogue()) == []


def _plan(venv, *args) -> tuple[int, dict[str, str], str]:
    """Real pip's plan with the index as its only source (the machine's pip configuration ignored)."""
    cmd = ["python", "-m", "pip", "--isolated", "install", "--dry-run", "-q", "--report", "-"]
    cmd += ["--index-url", (ROOT / "index" / "simple").as_uri(), *args]
    done = venv.run(*cmd, env={"PIP_CONFIG_FILE": os.devnull})
    report = json.loads(done.stdout) if done.returncode == 0 else {"install": []}
    return done.returncode, {i["metadata"]["name"]: i["metadata"]["version"] for i in report["install"]}, done.stderr


def test_plain_pip_against_the_index_gets_todays_release_with_core_or_nothing(make_venv, make_package, tmp_path):
    latest = max(_catalogue()["projects"]["agentos-env-2048"]["releases"], key=Version)
    venv = make_venv("plain-pip")  # gymnasium and numpy are there, agentos-core's `build` is not
    code, plan, err = _plan(venv, "agentos-env-2048")
    assert code != 0 and plan == {}, plan  # pip stops (agentos-core's `build` is unreachable): never 1.0.0
    assert "ResolutionImpossible" in err or "No matching distribution found for build" in err, err

    build = make_package("build", version="1.2.2", modules={"build_fake/__init__.py": ""}, entry_points={})
    code, plan, err = _plan(venv, "--find-links", build.parent, "agentos-env-2048")  # everything reachable
    assert code == 0, err
    core = max(_catalogue()["projects"]["agentos-core"]["releases"], key=Version)
    assert plan["agentos-env-2048"] == latest and plan["agentos-core"] == core
