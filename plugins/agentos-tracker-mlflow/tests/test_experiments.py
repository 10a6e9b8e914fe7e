"""An experiment as one MLflow parent run with a nested run per trial, from real Dask workers and a
process pool; a resumed experiment adds no second run for a trial."""

from __future__ import annotations

import os

from agentos.experiments import run_experiment


def _children(client, experiment_id: str, parent: str):
    return client.search_runs([experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{parent}'")


def test_trials_from_dask_workers_nest_under_one_parent_and_resume_adds_no_duplicate(
        client, mlflow_server, tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    folder = tmp_path / "dask_grid"
    result = run_experiment(["sarsa_table", "random"], ["corridor"], seeds=1, episodes=30, test_episodes=2,
                            folder=str(folder), workers=2, scheduler="local")
    assert all(t["status"] == "finished" for t in result.trials), result.failed()
    assert all(t["pid"] != os.getpid() for t in result.trials)  # the trials ran in Dask's worker processes

    experiment = client.get_experiment_by_name("dask_grid")
    (parent,) = client.search_runs([experiment.experiment_id], filter_string="tags.`agentos.kind` = 'experiment'")
    assert parent.info.status == "FINISHED" and parent.data.tags["agentos.trials"] == "2"
    children = _children(client, experiment.experiment_id, parent.info.run_id)
    by_agent = {run.data.params["agent"]: run for run in children}
    assert sorted(by_agent) == ["random", "sarsa_table"] and len(children) == 2
    sarsa = by_agent["sarsa_table"]
    assert sarsa.data.params["environment"] == "corridor" and sarsa.data.params["seed"] == "0"
    assert sarsa.data.params["trainer"].startswith("agentos-trainer-sarsa==")
    assert sarsa.info.status == "FINISHED" and sarsa.data.tags["agentos.status"] == "finished"
    assert len(client.get_metric_history(sarsa.info.run_id, "episode_return")) == 30  # training
    assert len(client.get_metric_history(sarsa.info.run_id, "test_episode_return")) == 2  # its test
    assert "checkpoint.safetensors" in {a.path for a in client.list_artifacts(sarsa.info.run_id)}
    trial_ids = {run.data.tags["agentos.trial"] for run in children}
    assert trial_ids == {t["id"] for t in result.trials}

    # resume after the sarsa trial is lost: it runs again (a process pool now), the random one does not
    sarsa_trial = next(t for t in result.trials if t["agent"] == "sarsa_table")
    os.remove(os.path.join(sarsa_trial["run_dir"], "trial.json"))
    again = run_experiment(["sarsa_table", "random"], ["corridor"], seeds=1, episodes=30, test_episodes=2,
                           folder=str(folder), workers=1)
    assert all(t["status"] == "finished" for t in again.trials), again.failed()
    parents = client.search_runs([experiment.experiment_id], filter_string="tags.`agentos.kind` = 'experiment'")
    assert [p.info.run_id for p in parents] == [parent.info.run_id]  # the same parent
    after = _children(client, experiment.experiment_id, parent.info.run_id)
    assert len(after) == 2  # one run per trial: the earlier run of the rerun trial was replaced
    rerun = next(run for run in after if run.data.params["agent"] == "sarsa_table")
    assert rerun.info.run_id != sarsa.info.run_id
    kept = next(run for run in after if run.data.params["agent"] == "random")
    assert kept.info.run_id == by_agent["random"].info.run_id


TUNE = """[experiment]
agents = sarsa_table
environments = corridor
seeds = 1
episodes = 20
test-episodes = 2

[search]
trainer.alpha = [float, 0.05, 0.9]

[tune]
trials = 3
parallel = 2
sampler = random
pruner = none
seed = 1
"""


def test_a_tune_is_a_parent_run_with_a_nested_run_per_trial_and_its_seeds_under_it(
        client, mlflow_server, tmp_path, monkeypatch):
    from agentos.tuning import tune

    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    path = tmp_path / "nested_tune.ini"
    path.write_text(TUNE)
    study = tune(str(path), workers=2, quiet=True)  # two trials at once: two tune-trial runs open together
    experiment = client.get_experiment_by_name("nested_tune")
    (parent,) = client.search_runs([experiment.experiment_id], filter_string="tags.`agentos.kind` = 'study'")
    assert parent.info.status == "FINISHED" and parent.data.tags["agentos.trials"] == "3"
    children = _children(client, experiment.experiment_id, parent.info.run_id)
    assert len(children) == 3 and {c.data.tags["agentos.kind"] for c in children} == {"tune-trial"}
    by_name = {c.info.run_name: c for c in children}
    for trial in study.get_trials():
        run = by_name[f"trial {trial.number}"]
        assert run.info.status == "FINISHED" and run.data.tags["agentos.state"] == "complete"
        assert float(run.data.params["trainer.alpha"]) == trial.params["trainer.alpha"]
        assert run.data.metrics["tune_value"] == trial.value
        (seed,) = _children(client, experiment.experiment_id, run.info.run_id)  # its one seed, nested under it
        assert seed.data.tags["agentos.kind"] == "trial" and seed.data.params["trainer.alpha"] == str(trial.params[
            "trainer.alpha"])
        assert len(client.get_metric_history(seed.info.run_id, "episode_return")) == 20
