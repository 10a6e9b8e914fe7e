"""``agentos tune``: a study on the process pool, resumed after its driver is killed, pruning, show and export,
hostile search spaces refused (beside their valid twins), and two drivers sharing a study in PostgreSQL
(Debian's, started here on 127.0.0.1)."""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from agentos.errors import ConfigError, UsageError

EXPERIMENT = """[experiment]
agents = sarsa_table
environments = corridor
seeds = {seeds}
episodes = {episodes}
test-episodes = 2

[search]
trainer.alpha = {alpha}

[tune]
trials = {trials}
parallel = {parallel}
seed = 3
"""


def write(tmp_path, name="sweep", *, seeds=2, episodes=20, trials=4, parallel=2,
          alpha="[choice, 0.00001, 0.5]", extra="") -> str:
    path = tmp_path / f"{name}.ini"
    path.write_text(EXPERIMENT.format(seeds=seeds, episodes=episodes, trials=trials, parallel=parallel,
                                      alpha=alpha) + extra)
    return str(path)


def agentos(*args, cwd, timeout=120):
    return subprocess.run([sys.executable, "-m", "agentos", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def states(folder: str) -> dict[int, tuple[str, float | None, dict]]:
    """The study's trials (none while the driver has not made the study yet)."""
    from agentos.tuning._storage import open_study

    try:
        study = open_study(folder)
    except UsageError:
        return {}
    return {t.number: (t.state.name, t.value, dict(t.params)) for t in study.get_trials()}


def test_tune_show_export_on_the_process_pool(tmp_path):
    from agentos.tuning import tune

    path = write(tmp_path, alpha="[float, 0.01, 1.0, log]",
                 extra="pruner = none\n[search if trainer.gamma = 0.9]\ntrainer.epsilon = [float, 0.0, 0.2]\n")
    text = open(path).read().replace("[search]\n", "[search]\ntrainer.gamma = [choice, 0.9, 0.99]\n")
    open(path, "w").write(text)
    study = tune(path, workers=2, quiet=True)
    folder = str(tmp_path / "experiments" / "sweep")
    finished = [t for t in study.get_trials() if t.state.name == "COMPLETE"]
    assert len(finished) == 4
    for trial in finished:  # conditional: epsilon only where gamma is 0.9; every seed ran, as records
        assert ("trainer.epsilon" in trial.params) == (trial.params["trainer.gamma"] == 0.9)
        assert 0.01 <= trial.params["trainer.alpha"] <= 1.0 and len(trial.user_attrs["scores"]) == 2
        records = os.listdir(os.path.join(folder, trial.user_attrs["folder"], "trials"))
        assert len(records) == 2
    shown = agentos("tune", "show", folder, "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["counts"] == {"complete": 4} and report["best"][0]["value"] == study.best_value
    assert report["best"][0]["seeds"] == 2 and report["best"][0]["iqm"] is not None
    assert set(report["importances"]) <= {"trainer.alpha", "trainer.gamma", "trainer.epsilon"}
    for png in report["plots"]:
        assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.basename(report["plots"][0]) == "tune-history.png"
    out = tmp_path / "best" / "agent.ini"
    out.parent.mkdir()
    exported = agentos("tune", "export", folder, "--agent-ini", str(out), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    text = out.read_text()
    assert f"alpha = {study.best_params['trainer.alpha']}" in text and "default = corridor" in text
    run = agentos("run", str(out), "--episodes", "1", cwd=tmp_path)  # the exported agent.ini runs
    assert run.returncode == 0, run.stderr


def test_median_pruner_prunes_trials_with_a_clearly_bad_setting(tmp_path):
    from agentos.tuning import tune

    path = write(tmp_path, seeds=3, trials=10, parallel=1, alpha="[choice, 0.000001, 0.6]",
                 extra="sampler = random\npruner = median\n")
    study = tune(path, workers=2, quiet=True)
    pruned = [t for t in study.get_trials() if t.state.name == "PRUNED"]
    done = [t for t in study.get_trials() if t.state.name == "COMPLETE"]
    assert pruned and len(pruned) + len(done) == 10
    assert all(t.params["trainer.alpha"] == 0.000001 for t in pruned)  # only the bad value
    assert all(len(t.user_attrs["scores"]) < 3 for t in pruned)  # stopped before its last seed


def test_a_killed_driver_resumes_without_rerunning_a_finished_trial(tmp_path):
    path = write(tmp_path, seeds=2, episodes=300, trials=6, parallel=1, alpha="[float, 0.05, 0.9]",
                 extra="pruner = none\n")  # every trial completes
    folder = str(tmp_path / "experiments" / "sweep")
    driver = subprocess.Popen([sys.executable, "-m", "agentos", "tune", path, "-j", "1", "-q"], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    before: dict = {}
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if os.path.exists(os.path.join(folder, "study.journal")):
            before = states(folder)
            if sum(s == "COMPLETE" for s, _, _ in before.values()) >= 2 and any(
                    s == "RUNNING" and p for s, _, p in before.values()):  # a running trial with its settings
                break
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    before = states(folder)
    finished = {n: v for n, v in before.items() if v[0] == "COMPLETE"}
    assert len(finished) >= 2
    stamps = {os.path.join(root, name): os.stat(os.path.join(root, name)).st_mtime_ns
              for root, _, names in os.walk(os.path.join(folder, "points")) for name in names if name == "trial.json"}
    again = agentos("tune", path, "-j", "1", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    after = states(folder)
    for number, state in finished.items():
        assert after[number] == state  # kept, not run again
    assert sum(s == "COMPLETE" for s, _, _ in after.values()) == 6
    for number, (state, _, params) in before.items():
        if state == "RUNNING":  # the killed trial: failed, and its settings (if drawn yet) queued again
            assert after[number][0] == "FAIL"
            if params:
                assert "queued again" in again.stderr
                assert any(p == params and s == "COMPLETE" for n, (s, _, p) in after.items() if n > number)
    for record, stamp in stamps.items():  # no finished seed's record written again
        assert os.stat(record).st_mtime_ns == stamp


def test_recover_queues_a_dead_drivers_drawn_settings_and_only_fails_a_trial_killed_before_drawing():
    import optuna
    from agentos.tuning._recover import _driver_id, recover

    study = optuna.create_study(direction="maximize")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    drew, bare, alive = study.ask(), study.ask(), study.ask()
    for trial in (drew, alive):
        trial.suggest_float("trainer.alpha", 0.1, 0.9)
    for trial in (drew, bare):
        trial.set_user_attr("driver", f"{socket.gethostname()}:{dead.pid}:0")
    alive.set_user_attr("driver", _driver_id())
    assert recover(study) == [drew.number]
    by_number = {t.number: t for t in study.get_trials()}
    assert by_number[drew.number].state == by_number[bare.number].state == optuna.trial.TrialState.FAIL
    assert by_number[alive.number].state == optuna.trial.TrialState.RUNNING  # its driver lives: left alone
    queued = [t for t in study.get_trials() if t.state == optuna.trial.TrialState.WAITING]
    assert [t.user_attrs["retry_of"] for t in queued] == [drew.number]
    assert queued[0].system_attrs["fixed_params"] == {"trainer.alpha": drew.params["trainer.alpha"]}


def test_sigterm_stops_the_driver_and_its_running_trials_promptly(tmp_path):
    path = write(tmp_path, seeds=2, episodes=3000, trials=50, parallel=2, alpha="[float, 0.05, 0.9]")
    folder = str(tmp_path / "experiments" / "sweep")
    driver = subprocess.Popen([sys.executable, "-m", "agentos", "tune", path, "-j", "2", "-q"], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
            s == "RUNNING" for s, _, _ in (states(folder) if os.path.exists(os.path.join(folder, "study.journal"))
                                          else {}).values()):
        time.sleep(0.2)
    time.sleep(0.5)
    driver.send_signal(signal.SIGTERM)
    _, err = driver.communicate(timeout=20)  # each running trial stops at its next progress call (~1 s)
    assert driver.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    assert sum(s == "COMPLETE" for s, _, _ in states(folder).values()) < 50


@pytest.mark.parametrize("line, problem", [
    ("trainer.alpha = [float, nan, 1.0]", "not a finite number"),
    ("trainer.alpha = [float, 0.0, inf]", "not a finite number"),
    ("trainer.alpha = [float, 1.0, 0.1]", "is above high"),
    ("trainer.alpha = [float, 0.0, 1.0, log]", "log scale needs low > 0"),
    ("trainer.alpha = [int, 1.5, 3]", "not an integer"),
    ("trainer.alpha = [choice]", "at least one value"),
    ("trainer.alpha = [exec, 1, 2]", "give [float, low, high]"),
    ("trainer.alpha = 0.5", "give [float, low, high]"),
    ("trainer.source = [choice, os:system]", "may not set 'source'"),
])
def test_hostile_search_spaces_are_refused_with_one_line(tmp_path, line, problem):
    from agentos.tuning import read_search

    valid = write(tmp_path, "valid", alpha="[float, 0.1, 1.0, log]")
    assert read_search(valid).params[0].log  # the valid twin
    path = write(tmp_path, "hostile", alpha="[float, 0.1, 1.0]")
    text = open(path).read().replace("trainer.alpha = [float, 0.1, 1.0]", line)
    open(path, "w").write(text)
    with pytest.raises(ConfigError, match="hostile.ini") as caught:
        read_search(path)
    assert problem in str(caught.value) and line.split(" =")[0] in str(caught.value)
    result = agentos("tune", path, cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "experiments").exists()  # nothing ran


@pytest.mark.parametrize("extra, problem", [
    ("sampler = evil\n", "sampler must be one of"),
    ("budget = 3\n", "unknown key 'budget' in [tune]"),
    ("timeout = -1\n", "positive number"),
    ("reports = nan\n", "reports must be a whole number from 0 to 1000"),
    ("reports = -1\n", "reports must be a whole number from 0 to 1000"),
    ("reports = 1000000\n", "reports must be a whole number from 0 to 1000"),
    ("[search if trainer.beta = 1]\ntrainer.gamma = [float, 0.5, 0.9]\n", "condition needs trainer.beta"),
    ("pruner = None\n", "pruner must be one of"),
    ("pruner = null\n", "pruner must be one of"),
    ("pruner = MEDIAN-TIME\n", "pruner must be one of"),
    ("pruner =\n", "malformed value for 'pruner': empty value"),
])
def test_hostile_tune_options_are_refused(tmp_path, extra, problem):
    from agentos.tuning import read_search

    valid = read_search(write(tmp_path, "valid", extra="sampler = random\nreports = 3\n")).options
    assert valid["sampler"] == "random" and valid["reports"] == 3
    with pytest.raises(ConfigError, match="hostile.ini") as caught:
        read_search(write(tmp_path, "hostile", extra=extra))
    assert problem in str(caught.value)


def test_a_setting_the_agent_lacks_is_one_line_before_the_study_starts(tmp_path):
    path = write(tmp_path, alpha="[float, 0.1, 1.0]")
    text = open(path).read().replace("trainer.alpha =", "trainer.alpah =")
    open(path, "w").write(text)
    result = agentos("tune", path, cwd=tmp_path)
    assert result.returncode == 2 and "sweep.ini: unknown setting 'trainer.alpah'" in result.stderr
    assert result.stderr.count("\n") == 1 and not (tmp_path / "experiments" / "sweep" / "study.journal").exists()


def test_storage_urls_are_allowlisted(tmp_path):
    from agentos.tuning import tune

    with pytest.raises(UsageError, match="give a database URL"):
        tune(write(tmp_path), storage="file:///etc/passwd", quiet=True)
    assert not (tmp_path / "experiments").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def postgres():
    """A throwaway server under tmp_path (as ``nobody`` when the tests run as root: postgres refuses root)."""
    binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    assert binaries, "Debian's postgresql is missing (tests/system_packages.py installs it)"
    bin_dir = os.path.dirname(binaries[-1])
    home = Path(tempfile.mkdtemp(prefix="agentos-pg-"))  # (pytest's tmp_path is closed to other users)
    as_user = []
    if os.geteuid() == 0:
        shutil.chown(home, "nobody")
        as_user = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
    subprocess.run([*as_user, f"{bin_dir}/initdb", "-D", str(home / "data"), "-U", "agentos", "-A", "trust",
                    "--no-sync", "-E", "UTF8"], check=True, capture_output=True, cwd="/tmp", timeout=60)
    port = _free_port()
    server = subprocess.Popen([*as_user, f"{bin_dir}/postgres", "-D", str(home / "data"), "-h", "127.0.0.1",
                               "-p", str(port), "-k", str(home), "-c", "fsync=off"], cwd="/tmp",
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    time.sleep(0.3)  # accepting connections a moment after the socket listens
    yield f"postgresql+psycopg2://agentos@127.0.0.1:{port}/postgres"
    server.send_signal(signal.SIGINT)  # stopped by its pid ("fast" shutdown: clients are disconnected)
    server.wait(timeout=30)
    shutil.rmtree(home, ignore_errors=True)


def test_two_drivers_share_one_study_in_postgresql(tmp_path, postgres):
    path = write(tmp_path, seeds=2, episodes=20, trials=4, parallel=1, alpha="[float, 0.05, 0.9]")
    command = [sys.executable, "-m", "agentos", "tune", path, "-j", "1", "-q", "--storage", postgres]
    drivers = [subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(2)]
    for driver in drivers:
        _, err = driver.communicate(timeout=120)
        assert driver.returncode == 0, err
    import optuna

    study = optuna.load_study(study_name="sweep", storage=postgres)
    done = [t for t in study.get_trials() if t.state.name in ("COMPLETE", "PRUNED")]
    assert len(done) >= 4 and len({t.number for t in done}) == len(done)
    pids = {t.user_attrs["driver"].split(":")[1] for t in study.get_trials()}
    assert pids == {str(d.pid) for d in drivers}  # both drivers ran trials of the one study
    assert not os.path.exists(tmp_path / "experiments" / "sweep" / "study.journal")
    shown = subprocess.run([sys.executable, "-m", "agentos", "tune", "show", str(tmp_path / "experiments" / "sweep"),
                            "--json", "--storage", postgres], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert f'"number": {study.best_trial.number}' in shown.stdout


def test_trials_are_pruned_while_they_train_from_their_intermediate_returns(tmp_path):
    """One seed, so only the worker's reports during training can prune; the partial record is kept."""
    from agentos.tuning import tune

    path = write(tmp_path, seeds=1, episodes=40, trials=8, parallel=1, alpha="[choice, 0.000001, 0.6]",
                 extra="sampler = random\npruner = median\nreports = 4\n")
    study = tune(path, workers=1, quiet=True)
    pruned = [t for t in study.get_trials() if t.state.name == "PRUNED"]
    done = [t for t in study.get_trials() if t.state.name == "COMPLETE"]
    assert pruned and len(pruned) + len(done) == 8
    assert all(t.params["trainer.alpha"] == 0.000001 for t in pruned)  # only the bad value
    for t in pruned:  # stopped at a checkpoint during training (steps 0-3; 4 is the seed's final score)
        assert t.intermediate_values and max(t.intermediate_values) < 4
        records = glob.glob(str(tmp_path / "experiments" / "sweep" / t.user_attrs["folder"] / "trials/*/trial.json"))
        record = json.loads(Path(records[0]).read_text())
        assert record["status"] == "pruned" and record["test"] is None
        assert 0 < record["train"]["episodes"] < 40  # the partial training, kept honestly


def test_median_time_prunes_a_slow_learner_by_its_seconds_while_it_trains(tmp_path):
    """``median-time``: the worker reports about every second (steps: tenths of a second) and stops a trial
    that, after as many seconds as the others had taken, returns less than what they had reached."""
    from agentos.tuning import tune

    path = write(tmp_path, seeds=1, episodes=20000, trials=8, parallel=1, alpha="[float, 0.000001, 0.6, log]",
                 extra="sampler = random\npruner = median-time\n")
    study = tune(path, workers=1, quiet=True)
    pruned = [t for t in study.get_trials() if t.state.name == "PRUNED"]
    assert pruned and len(study.get_trials()) == 8
    for t in pruned:
        assert t.params["trainer.alpha"] < 0.0001  # the slow learners (-100 an episode), only them
        assert min(t.intermediate_values) >= 10  # its first report after a second of training
        records = glob.glob(str(tmp_path / "experiments" / "sweep" / t.user_attrs["folder"] / "trials/*/trial.json"))
        record = json.loads(Path(records[0]).read_text())
        assert record["status"] == "pruned" and 0 < record["train"]["episodes"] < 20000


def test_time_median_compares_with_what_finished_trials_had_reached_by_then():
    import optuna
    from agentos.tuning._prune import make_pruner

    study = optuna.create_study(direction="maximize", pruner=make_pruner(optuna, "median-time"))
    fast = optuna.trial.create_trial(value=10.0, intermediate_values={5: 8.0, 12: 10.0})  # done at 1.2 s
    slow = optuna.trial.create_trial(value=9.0, intermediate_values={10: 2.0, 40: 6.0, 80: 9.0})
    late = optuna.trial.create_trial(value=9.0, intermediate_values={50: 1.0})  # nothing by 4 s: left out
    for trial in (fast, slow, late):
        study.add_trial(trial)
    asked = study.ask()
    asked.report(-1e9, 10)  # warming up: a third of the finished trials' median time (5 s / 3) not reached
    assert not asked.should_prune()
    asked.report(7.0, 40)  # by 4 s the others had reached 10 (fast, finished) and 6 (slow): median 8
    assert asked.should_prune()
    asked.report(8.5, 41)
    assert not asked.should_prune()
    minimize = optuna.create_study(direction="minimize", pruner=make_pruner(optuna, "median-time"))
    for trial in (fast, slow):
        minimize.add_trial(trial)
    lower = minimize.ask()
    lower.report(7.0, 40)
    assert not lower.should_prune()
    lower.report(float("nan"), 41)
    assert lower.should_prune()
    one = optuna.create_study(direction="maximize", pruner=make_pruner(optuna, "median-time"))
    one.add_trial(fast)  # fewer than 2 finished: never
    alone = one.ask()
    alone.report(-1e9, 40)
    assert not alone.should_prune()


@pytest.mark.parametrize("name, kind", [("median", "MedianPruner"), ("successive-halving", "SuccessiveHalvingPruner"),
                                        ("hyperband", "HyperbandPruner"), ("median-time", "TimeMedianPruner")])
def test_a_worker_asks_the_pruner_the_tune_names(tmp_path, name, kind):
    """The worker loads the study with the tune's pruner (Optuna's default would be a median pruner)."""
    from agentos.tuning._prune import IntermediateReports
    from agentos.tuning._storage import JOURNAL, open_study

    study = open_study(str(tmp_path), create={"study": "s", "direction": "maximize", "sampler": "random",
                                              "seed": 1, "pruner": name})
    trial = study.ask()
    check = IntermediateReports(str(tmp_path / JOURNAL), "s", trial.number, step0=0, reports=4, episodes=100,
                                steps=None, pruner=name)({})
    assert type(check.handle.study.pruner).__name__ == kind


def test_a_resumed_tune_draws_new_settings_not_the_first_ones_again(tmp_path):
    path = write(tmp_path, trials=3, parallel=1, alpha="[float, 0.01, 1.0]", extra="sampler = random\npruner = none\n")
    assert agentos("tune", path, "-j", "1", cwd=tmp_path).returncode == 0
    Path(path).write_text(Path(path).read_text().replace("trials = 3", "trials = 6"))
    again = agentos("tune", path, "-j", "1", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    drawn = [p["trainer.alpha"] for _, _, p in states(str(tmp_path / "experiments" / "sweep")).values()]
    assert len(drawn) == 6 and len(set(drawn)) == 6  # the seeded sampler went on, it did not start over


@pytest.mark.parametrize("first, then, problem", [
    ("pruner = median\n", "pruner = median-time\n", "counts its steps in seconds, but the study 'sweep' has them "
                                                      "in reports"),
    ("pruner = median-time\n", "pruner = hyperband\n", "counts its steps in reports, but the study 'sweep' has "
                                                        "them in seconds"),
    ("direction = maximize\n", "direction = minimize\n", "already maximizes"),
])
def test_a_resume_that_changes_what_the_study_is_is_one_line(tmp_path, first, then, problem):
    path = write(tmp_path, seeds=2, trials=3, parallel=1, alpha="[float, 0.000001, 0.6, log]", extra=first)
    assert agentos("tune", path, "-j", "1", cwd=tmp_path).returncode == 0
    record = (tmp_path / "experiments" / "sweep" / "tune.json").read_text()
    Path(path).write_text(Path(path).read_text().replace(first, then).replace("trials = 3", "trials = 5"))
    again = agentos("tune", path, "-j", "1", cwd=tmp_path)
    assert again.returncode == 2 and problem in again.stderr, again.stderr
    assert len(again.stderr.strip().splitlines()) == 1 and "Traceback" not in again.stderr
    assert (tmp_path / "experiments" / "sweep" / "tune.json").read_text() == record  # left as it was
    assert len(states(str(tmp_path / "experiments" / "sweep"))) == 3  # nothing ran


@pytest.mark.parametrize("damage", [b"\x00\xffgarbage{{{\n", None])
def test_a_damaged_journal_is_one_line_naming_it(tmp_path, damage):
    path = write(tmp_path, trials=2, parallel=1, extra="pruner = none\n")
    assert agentos("tune", path, "-j", "1", cwd=tmp_path).returncode == 0
    journal = tmp_path / "experiments" / "sweep" / "study.journal"
    if damage is None:  # cut mid-line, as a crash while writing leaves it
        journal.write_bytes(journal.read_bytes()[:-37])
    else:
        journal.write_bytes(journal.read_bytes() + damage)
    for args in (("tune", path, "-j", "1"), ("tune", "show", "experiments/sweep")):
        done = agentos(*args, cwd=tmp_path)
        assert done.returncode == 2 and "study.journal:" in done.stderr and ": damaged" in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_schema_made_by_another_driver_at_the_same_moment_is_retried_not_reported(postgres):
    """PostgreSQL's real answer when a second driver creates the tables a first has just made."""
    import sqlalchemy
    from agentos.tuning._storage import _made_at_once
    from optuna.storages._rdb import models

    engine = sqlalchemy.create_engine(postgres)
    models.BaseModel.metadata.create_all(engine)
    with pytest.raises(sqlalchemy.exc.ProgrammingError) as raised:
        models.BaseModel.metadata.create_all(engine, checkfirst=False)
    assert "already exists" in str(raised.value) and _made_at_once(raised.value)
    with pytest.raises(sqlalchemy.exc.ProgrammingError) as other:  # a real error of another kind is not a race
        with engine.connect() as connection:
            connection.execute(sqlalchemy.text("select * from no_such_table"))
    assert not _made_at_once(other.value)
    engine.dispose()


def test_enqueued_settings_run_first_and_a_resume_does_not_queue_them_again(tmp_path):
    from agentos.tuning import tune

    path = write(tmp_path, seeds=1, trials=3, parallel=1, alpha="[float, 0.01, 0.9]", extra="pruner = none\n")
    first = [{"trainer.alpha": 0.5}, {"trainer.alpha": 0.125}]
    study = tune(path, workers=1, quiet=True, enqueue=first)
    by_number = sorted(study.get_trials(), key=lambda t: t.number)
    assert [t.params["trainer.alpha"] for t in by_number[:2]] == [0.5, 0.125]  # first, in order
    assert len(by_number) == 3 and by_number[2].params["trainer.alpha"] not in (0.5, 0.125)  # then sampled
    study = tune(path, workers=1, quiet=True, trials=4, enqueue=first)  # resumed with the same list
    alphas = [t.params["trainer.alpha"] for t in study.get_trials()]
    assert len(alphas) == 4 and alphas.count(0.5) == 1 and alphas.count(0.125) == 1


@pytest.mark.parametrize("content, problem", [
    ('[{"trainer.alpha": 7}]', "enqueue[0]: trainer.alpha = 7 is not a number from 0.01 to 0.9"),
    ('[{"trainer.alpha": NaN}]', "not JSON: NaN is not a number a setting can take"),
    ('[{"trainer.alpha": "0.5"}]', "enqueue[0]: trainer.alpha = '0.5' is not a number"),
    ('[{"trainer.alpah": 0.5}]', "enqueue[0]: 'trainer.alpah' is not searched"),
    ('[{"trainer.alpha": 0.5}, {}]', "enqueue[1]: give an object of searched settings"),
    ('{"trainer.alpha": 0.5}', "give a JSON list of settings objects"),
    ('[' * 100_000, "not JSON"),
    ("[" + "{}, " * 400_000 + "{}]", "larger than 1,048,576 bytes"),
])
def test_hostile_enqueue_files_are_one_line_and_run_nothing(tmp_path, content, problem):
    path = write(tmp_path, seeds=1, trials=1, parallel=1, alpha="[float, 0.01, 0.9]", extra="pruner = none\n")
    valid = tmp_path / "valid.json"
    valid.write_text('[{"trainer.alpha": 0.25}]')
    hostile = tmp_path / "hostile.json"
    hostile.write_text(content)
    result = agentos("tune", path, "--enqueue", str(hostile), "-q", cwd=tmp_path)
    assert result.returncode == 2 and problem in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "experiments").exists()  # nothing ran
    result = agentos("tune", path, "--enqueue", str(valid), "-q", cwd=tmp_path)  # the valid twin
    assert result.returncode == 0, result.stderr
    assert "trainer.alpha=0.25" in result.stdout
