"""Hooks: hook-only plugins (``agentos.plugins``) and component modules are called during a run."""

from __future__ import annotations

import json

import pytest

TRACKER = """
import json, os
from agentos import hookimpl

def _log(event, **data):
    with open(os.environ["TRACKER_LOG"], "a") as f:
        f.write(json.dumps({"event": event, **data}) + "\\n")

@hookimpl
def agentos_run_start(run):
    _log("run_start", mode=run.mode, seed=run.seed)

@hookimpl
def agentos_episode_end(run, episode, episode_return, length, info):
    _log("episode_end", episode=episode, episode_return=episode_return, length=length)

@hookimpl
def agentos_run_end(run, summary):
    _log("run_end", status=summary["status"], episodes=summary["episodes"], steps=summary["steps"])
"""

STEP_COUNTING_POLICY = """
import json, os
from agentos import Policy, hookimpl

STEPS = []

class Right(Policy):
    def decide(self, observation):
        return 1

@hookimpl
def agentos_step(run, reward, done, info):
    STEPS.append(reward)

@hookimpl
def agentos_run_end(run, summary):
    with open(os.environ["TRACKER_LOG"], "a") as f:
        f.write(json.dumps({"event": "policy_steps", "count": len(STEPS), "total": sum(STEPS)}) + "\\n")
"""


@pytest.fixture(scope="module")
def hook_venv(tmp_path_factory, base_site, wheelhouse):
    from conftest import Venv, build_wheel, write_package

    root, out = tmp_path_factory.mktemp("hook-src"), tmp_path_factory.mktemp("hook-wheels")
    wheels = [
        build_wheel(
            write_package(
                root,
                "agentos-tracker-log",
                entry_points={"agentos.plugins": {"log": "tracker_log"}},
                modules={"tracker_log/__init__.py": TRACKER},
            ),
            out,
        ),
        build_wheel(
            write_package(
                root,
                "agentos-tracker-broken",
                entry_points={"agentos.plugins": {"broken": "tracker_broken"}},
                modules={"tracker_broken/__init__.py": "raise ImportError('nope')\n"},
            ),
            out,
        ),
        build_wheel(
            write_package(
                root,
                "agentos-policy-right",
                entry_points={"agentos.policy": {"right": "right:Right"}},
                modules={"right/__init__.py": STEP_COUNTING_POLICY},
            ),
            out,
        ),
    ]
    venv = Venv(tmp_path_factory.mktemp("hook-venv"), base_site, tmp_path_factory.mktemp("hook-cache"))
    venv.pip_install("--no-deps", *sorted(wheelhouse.glob("*.whl")), *wheels)
    return venv


def events(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_hook_plugins_see_the_run_and_a_broken_one_is_skipped(hook_venv, tmp_path):
    hook_venv.agentos("init", "a", cwd=tmp_path)
    log = tmp_path / "log.jsonl"
    result = hook_venv.agentos("run", "-n", "3", "--seed", "5", cwd=tmp_path / "a", env={"TRACKER_LOG": str(log)})
    assert result.returncode == 0, result.stderr
    seen = events(log)
    assert seen[0] == {"event": "run_start", "mode": "run", "seed": 5}
    ends = [e for e in seen if e["event"] == "episode_end"]
    assert [e["episode"] for e in ends] == [0, 1, 2]
    assert all(e["episode_return"] == -e["length"] for e in ends)  # -1 per step in the corridor
    last = seen[-1]
    assert last["event"] == "run_end" and last["status"] == "finished" and last["episodes"] == 3
    assert last["steps"] == sum(e["length"] for e in ends)


def test_a_components_module_joins_the_hooks_when_it_is_loaded(hook_venv, tmp_path):
    hook_venv.agentos("init", "a", cwd=tmp_path)
    ini = tmp_path / "a" / "agent.ini"
    ini.write_text(ini.read_text().replace("default = random", "default = right"))
    log = tmp_path / "log.jsonl"
    result = hook_venv.agentos("run", "-n", "2", cwd=tmp_path / "a", env={"TRACKER_LOG": str(log)})
    assert result.returncode == 0, result.stderr
    steps = [e for e in events(log) if e["event"] == "policy_steps"]
    assert steps == [{"event": "policy_steps", "count": 18, "total": -18.0}]  # 2 optimal episodes of 9 steps
