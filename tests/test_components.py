"""The host, acr and the CLI, with the first-party plugins installed as real packages in a real venv."""

from __future__ import annotations

import json
import textwrap

import pytest
from conftest import plugin_version

HEAVY = (
    "torch",
    "gymnasium",
    "numpy",
    "numba",
    "dask",
    "distributed",
    "dask_jobqueue",
    "optuna",
    "sqlalchemy",
    "agentos_env_2048",
    "agentos_env_corridor",
    "agentos_policy_random",
    "agentos_policy_ntuple",
    "agentos_trainer_td",
    "agentos_preset_sarsa_table",
)


@pytest.fixture(scope="module")
def venv(first_party_venv):
    return first_party_venv


def py(venv, code: str, cwd, **kwargs):
    return venv.run("python", "-c", textwrap.dedent(code), cwd=cwd, **kwargs)


def test_list_shows_installed_components(venv, tmp_path):
    result = venv.agentos("list", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = {(r["kind"], r["name"]): r for r in json.loads(result.stdout)}
    assert rows[("environment", "2048")]["package"] == "agentos-env-2048"
    assert rows[("environment", "corridor")]["version"] == plugin_version("agentos-env-corridor")
    assert rows[("policy", "random")]["status"] == "ok"
    text = venv.agentos("list", "--kind", "policy", cwd=tmp_path).stdout
    assert "random" in text and "corridor" not in text


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["list", "--json"], ["experiment", "run", "--help"],
                                  ["experiment", "compare", "--help"]])
def test_startup_imports_no_heavy_or_plugin_module(venv, tmp_path, argv):
    code = f"""
        import sys, io, contextlib
        from agentos.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                main({argv!r})
            except SystemExit:
                pass
        print(" ".join(sorted(sys.modules)))
    """
    result = py(venv, code, tmp_path)
    assert result.returncode == 0, result.stderr
    modules = {m.split(".")[0] for m in result.stdout.split()}
    assert "agentos" in modules
    assert not modules & set(HEAVY), modules & set(HEAVY)


def test_init_and_run_a_new_agent(venv, tmp_path):
    assert venv.agentos("init", "my_agent", cwd=tmp_path).returncode == 0
    agent_dir = tmp_path / "my_agent"
    assert {"agent.ini", "agent.py", "requirements.txt", "README.md"} <= {p.name for p in agent_dir.iterdir()}
    assert "agentos-env-corridor==1.2.0" in (agent_dir / "requirements.txt").read_text()
    result = venv.agentos("run", "--episodes", "3", "--seed", "7", cwd=agent_dir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("episode ") == 3
    assert "finished: 3 episodes" in result.stdout
    again = venv.agentos("run", "agent.ini", "-n", "3", "--seed", "7", cwd=agent_dir)
    assert again.stdout.splitlines()[:3] == result.stdout.splitlines()[:3]  # seeded: same episodes
    assert venv.run("python", "-m", "agentos", "run", "-n", "1", cwd=agent_dir).returncode == 0
    refused = venv.agentos("init", "my_agent", cwd=tmp_path)
    assert refused.returncode == 2 and "already exists" in refused.stderr


def test_acr_reaches_components_by_kind_and_name(venv, tmp_path):
    venv.agentos("init", "a", cwd=tmp_path)
    code = """
        import sys
        import acr
        assert "gymnasium" not in sys.modules and "numba" not in sys.modules
        env = acr.environment["2048"]
        observation, info = env.reset(seed=0)
        assert observation.shape == (4, 4) and info["score"] == 0
        assert env.step(0)[0].shape == (4, 4)            # a step runs in the compiled kernel,
        assert "numba" in sys.modules                    # imported with the first 2048 env, not before
        assert acr.environment["2048"] is env            # one shared instance per process
        assert acr.policy.random.decide(0) in (0, 1)     # sized to the default env: the corridor
        assert {"2048", "corridor"} <= set(acr.environment)  # other first-party plugins may join
        assert "2048" in acr.environment and "nope" not in acr.environment
        assert "random" in acr.policy and len(acr.policy) == len(list(acr.policy)) >= 1
        assert repr(acr.environment).startswith("<acr.environment: 2048, ") and ", corridor*" in repr(acr.environment)
        try:
            acr.environment["coridor"]
        except LookupError as exc:
            assert "did you mean 'corridor'" in str(exc), exc
        else:
            raise AssertionError("no error for an unknown name")
        try:
            acr.policy.randm
        except AttributeError as exc:
            assert "did you mean 'random'" in str(exc)
        print("ok")
    """
    result = py(venv, code, tmp_path / "a")
    assert result.stdout.strip() == "ok", result.stderr


def test_settings_come_from_agent_ini_and_local_components_work(venv, tmp_path):
    venv.agentos("init", "a", cwd=tmp_path)
    agent_dir = tmp_path / "a"
    (agent_dir / "my_policy.py").write_text(
        textwrap.dedent("""
        from agentos import Policy

        class AlwaysRight(Policy):
            def __init__(self, action_space=None, action=1):
                super().__init__(action_space=action_space)
                self.action = action

            def decide(self, observation):
                return self.action
    """)
    )
    ini = (agent_dir / "agent.ini").read_text()
    ini = ini.replace("[policy]\ndefault = random", "[policy]\ndefault = right")
    ini += "\n[policy.right]\nsource = my_policy.py:AlwaysRight\naction = 1\n"
    ini = ini.replace("package = agentos-env-corridor\n", "package = agentos-env-corridor\nlength = 6\n")
    (agent_dir / "agent.ini").write_text(ini)
    result = venv.agentos("run", "-n", "2", cwd=agent_dir)
    assert result.returncode == 0, result.stderr
    assert "mean return -5.00" in result.stdout  # optimal in a corridor of 6
    code = """
        import acr
        from agentos import Policy

        class Left(Policy):
            def decide(self, observation):
                return 0

        acr.register("policy", "left", Left)
        assert acr.policy.left.decide(3) == 0 and "left" in acr.policy
        assert acr.policy.right.action == 1
        assert acr.environment.corridor.length == 6
        print("ok")
    """
    assert py(venv, code, agent_dir).stdout.strip() == "ok"


@pytest.mark.parametrize(
    ("ini_extra", "message"),
    [
        (
            "[environment.corridor]\nlenght = 5\n",
            "unknown setting 'lenght' for environment.corridor; did you mean 'length'?",
        ),
        ("[environment.corridor]\nlength = [5\n", "malformed value for 'length'"),
        ("[policy.random]\nseed = 1\nfoo = 2\n", "unknown setting 'foo' for policy.random"),
    ],
)
def test_bad_settings_are_one_line_errors(venv, tmp_path, ini_extra, message):
    agent_dir = tmp_path / "a"
    venv.agentos("init", str(agent_dir), cwd=tmp_path)
    ini_path = agent_dir / "agent.ini"
    text = ini_path.read_text()
    section = ini_extra.split("\n", 1)[0]
    text = text.replace(section + "\n", ini_extra) if section in text else text + ini_extra
    ini_path.write_text(text)
    result = venv.agentos("run", "-n", "1", cwd=agent_dir)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert f"{ini_path}:" in result.stderr


def test_user_errors_exit_2_with_one_line(venv, tmp_path):
    for argv in (["run"], ["run", "missing.ini"], ["list", "--kind", "nope"], ["frobnicate"]):
        result = venv.agentos(*argv, cwd=tmp_path)
        assert result.returncode == 2, (argv, result)
        assert "Traceback" not in result.stderr
    assert venv.agentos("--version").stdout.startswith("agentos ")


def test_agent_ini_seed_makes_runs_repeatable(venv, tmp_path):
    venv.agentos("init", "a", cwd=tmp_path)
    ini = tmp_path / "a" / "agent.ini"
    ini.write_text(ini.read_text().replace("[agentos]\n", "[agentos]\nseed = 11\n"))
    first, second = (venv.agentos("run", "-n", "4", cwd=tmp_path / "a") for _ in range(2))
    assert first.returncode == 0, first.stderr
    episodes = [line for line in first.stdout.splitlines() if line.startswith("episode")]
    assert len(episodes) == 4 and episodes == [ln for ln in second.stdout.splitlines() if ln.startswith("episode")]
    ini.write_text(ini.read_text().replace("seed = 11", "seed = eleven"))
    bad = venv.agentos("run", "-n", "1", cwd=tmp_path / "a")
    assert bad.returncode == 2 and "[agentos] seed must be an integer" in bad.stderr


def test_list_shows_the_agents_local_components(venv, tmp_path):
    venv.agentos("init", "a", cwd=tmp_path)  # the agent is named after its folder
    rows = {r["name"]: r for r in json.loads(venv.agentos("list", "--json", cwd=tmp_path / "a").stdout)}
    assert rows["a"]["package"] == "(local)" and rows["a"]["status"] == "ok"
    assert rows["a"]["default"] and rows["corridor"]["default"]
    (tmp_path / "a" / "agent.py").unlink()
    rows = {r["name"]: r for r in json.loads(venv.agentos("list", "--json", cwd=tmp_path / "a").stdout)}
    assert "file 'agent.py' not found" in rows["a"]["status"]
