"""torch's CPU threads (issue 32, item 5): one per process unless ``[agentos] threads``, ``--threads``,
``$OMP_NUM_THREADS`` or ``torch.set_num_threads`` say otherwise, observed inside the training process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentos.devices import THREAD_VARIABLES, check_threads

PROBE = '''\
import pathlib

import torch
from agentos import Trainer


class Probe(Trainer):
    """Writes the torch threads of the training process, then ends one episode."""

    def train(self, policy, environment, *, episodes=None, steps=None, seed=None, callback=None):
        pathlib.Path(__file__).with_name("threads.txt").write_text(str(torch.get_num_threads()))
        callback(0.0, 1)
        return 1
'''

AGENT = """\
[agentos]
{meta}
[environment]
default = corridor

[policy]
default = random

[trainer]
default = probe

[trainer.probe]
source = probe.py:Probe
"""


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    env.update(extra)
    return env


def train(folder: Path, *args, meta: str = "", **env) -> tuple[subprocess.CompletedProcess, str | None]:
    (folder / "agent.ini").write_text(AGENT.format(meta=meta))
    (folder / "probe.py").write_text(PROBE)
    (folder / "threads.txt").unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-m", "agentos", "train", "agent.ini", "1", "--seed", "0", *args],
                          cwd=folder, capture_output=True, text=True, timeout=240, env=clean_env(**env))
    seen = folder / "threads.txt"
    return proc, seen.read_text() if seen.exists() else None


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: torch's default is already one thread")
def test_torch_defaults_to_a_thread_per_core_here():
    """The control: without the helper, torch would run more than one thread on this machine."""
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
                         capture_output=True, text=True, env=clean_env(), check=True).stdout
    assert int(out) > 1


def test_train_runs_one_torch_thread_by_default(tmp_path):
    proc, seen = train(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert seen == "1"


@pytest.mark.parametrize(
    ("args", "meta", "env"),
    [((), "", {"OMP_NUM_THREADS": "2"}), ((), "threads = 2", {}), (("--threads", "2"), "", {}),
     (("--threads", "2"), "threads = 3", {"OMP_NUM_THREADS": "3"})],
    ids=["OMP_NUM_THREADS", "agent.ini", "--threads", "--threads wins"],
)
def test_train_runs_the_threads_asked_for(tmp_path, args, meta, env):
    proc, seen = train(tmp_path, *args, meta=meta, **env)
    assert proc.returncode == 0, proc.stderr
    assert seen == "2"


@pytest.mark.parametrize(("args", "meta"), [(("--threads", "0"), ""), ((), "threads = many"), ((), "threads = -1")])
def test_a_bad_thread_count_is_one_line(tmp_path, args, meta):
    proc, seen = train(tmp_path, *args, meta=meta)
    assert proc.returncode == 2 and seen is None
    assert "threads must be an integer from 1 to 1024" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize(("value", "expected"), [(None, None), (1, 1), (8, 8), (1024, 1024)])
def test_check_threads_accepts(value, expected):
    assert check_threads(value) == expected


@pytest.mark.parametrize("value", [0, -1, 1025, "2", 1.5, True])
def test_check_threads_refuses(value):
    with pytest.raises(ValueError, match="threads must be an integer"):
        check_threads(value)


HELPER = """
import sys
from agentos.plugin_api import use_torch_threads
print(use_torch_threads(), "torch" in sys.modules)
import torch
print(torch.get_num_threads())
"""


def test_the_helper_does_not_import_torch():
    out = subprocess.run([sys.executable, "-c", HELPER], capture_output=True, text=True, env=clean_env(),
                         check=True).stdout.split()
    assert out == ["1", "False", "1"]


def test_the_helper_keeps_a_count_the_user_set():
    code = "import torch; torch.set_num_threads(3)\n" + HELPER
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=clean_env(),
                         check=True).stdout.split()
    assert out == ["None", "True", "3"]


def test_the_dqn_policy_lowers_an_imported_torch_to_one_thread():
    """A script that imported torch first (one thread per core) and builds the dqn policy itself."""
    code = ("import torch, gymnasium\nfrom agentos_policy_dqn import DQNPolicy\n"
            "DQNPolicy(gymnasium.spaces.Box(0, 1, (4,)), gymnasium.spaces.Discrete(2))\n"
            "print(torch.get_num_threads())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=clean_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1"]
