"""``agentos train --from-run RUN`` / ``--checkpoint FILE`` (issue 19 point 9): training goes on from a
run's policy (and trainer state), the new record names its parent, ``runs show`` follows the chain."""

from __future__ import annotations

import csv
import json

from learning._helpers import make_agent, ntuple_td_ini


def _records(agent) -> list[dict]:
    return sorted(
        (json.loads(p.read_text()) for p in (agent / "runs").glob("*/run.json")), key=lambda m: m["started"] + m["id"]
    )


def _first_returns(agent, run_id: str, n: int) -> list[float]:
    with open(agent / "runs" / run_id / "returns.csv") as f:
        return [float(r["return"]) for r in csv.DictReader(f)][:n]


def test_train_continues_from_a_run_and_records_its_parent(learning_venv, corridor_agent):
    first = learning_venv.agentos("train", "40", "--seed", "0", "--quiet", cwd=corridor_agent)
    assert first.returncode == 0, first.stderr
    parent = _records(corridor_agent)[-1]["id"]
    more = learning_venv.agentos("train", "40", "--seed", "1", "--quiet", "--from-run", parent, cwd=corridor_agent)
    assert more.returncode == 0, more.stderr
    assert f"continued from run {parent}" in more.stdout
    child = _records(corridor_agent)[-1]
    assert child["parent"] == parent and child["request"]["from_run"] == parent and child["status"] == "finished"
    # it starts where the parent stopped: its first episodes are the trained ones (optimal -9), not
    # the long random walks of an untrained table
    assert sum(_first_returns(corridor_agent, child["id"], 5)) > sum(_first_returns(corridor_agent, parent, 5)) + 20
    assert min(_first_returns(corridor_agent, child["id"], 5)) >= -15
    # a third run: `runs show` follows the chain back
    third = learning_venv.agentos("train", "10", "--quiet", "--from-run", child["id"], cwd=corridor_agent)
    assert third.returncode == 0, third.stderr
    shown = learning_venv.agentos("runs", "show", "latest", cwd=corridor_agent).stdout
    assert f"parent:     {child['id']} (finished, 40 episodes) <- {parent} (finished, 40 episodes)" in shown
    # --checkpoint: the policy of a file, no parent
    checkpoint = corridor_agent / "runs" / parent / "checkpoint.safetensors"
    from_file = learning_venv.agentos("train", "5", "--seed", "1", "--quiet", "--checkpoint", str(checkpoint),
                                      cwd=corridor_agent)
    assert from_file.returncode == 0, from_file.stderr
    newest = _records(corridor_agent)[-1]
    assert newest["request"]["checkpoint"] == str(checkpoint) and "parent" not in newest
    assert min(_first_returns(corridor_agent, newest["id"], 5)) >= -15


def test_train_from_run_refuses_what_a_run_folder_names_outside_it(learning_venv, corridor_agent, tmp_path):
    assert learning_venv.agentos("train", "10", "--quiet", cwd=corridor_agent).returncode == 0
    run_dir = next((corridor_agent / "runs").iterdir())
    meta = json.loads((run_dir / "run.json").read_text())
    outside = tmp_path / "elsewhere.safetensors"
    outside.write_bytes((run_dir / "checkpoint.safetensors").read_bytes())
    for key in ("checkpoint", "trainer_state"):
        hostile = dict(meta, **{key: str(outside)})
        (run_dir / "run.json").write_text(json.dumps(hostile))
        result = learning_venv.agentos("train", "5", "--from-run", str(run_dir), cwd=corridor_agent)
        assert result.returncode == 2 and "Traceback" not in result.stderr and result.stderr.count("\n") == 1
        assert f": {key} '/" in result.stderr and "' is not a file name inside the run folder" in result.stderr
    (run_dir / "run.json").write_text(json.dumps(meta))  # the valid twin
    result = learning_venv.agentos("train", "5", "--quiet", "--from-run", str(run_dir), cwd=corridor_agent)
    assert result.returncode == 0, result.stderr
    both = learning_venv.agentos("train", "5", "--from-run", "x", "--checkpoint", "y", cwd=corridor_agent)
    assert both.returncode == 2 and "not both" in both.stderr


def test_td_trainer_state_is_saved_and_continued(learning_venv, tmp_path):
    agent = make_agent(tmp_path, ntuple_td_ini(coherent="true", alpha=0.5), name="td_agent")
    first = learning_venv.agentos("train", "30", "--seed", "1", "--quiet", cwd=agent)
    assert first.returncode == 0, first.stderr
    parent = _records(agent)[-1]
    assert parent["trainer_state"] == "trainer.safetensors"
    more = learning_venv.agentos("train", "30", "--seed", "2", "--quiet", "--from-run", parent["id"], cwd=agent)
    assert more.returncode == 0, more.stderr
    # the accumulators went on from the parent's: each absolute sum only grows
    code = (
        "import sys; from safetensors.numpy import load_file; a, b = (load_file(p)['absolute'] for p in sys.argv[1:]); "
        "print(bool((b >= a).all()), float(b.sum() - a.sum()) > 0)"
    )
    child = _records(agent)[-1]
    paths = [str(agent / "runs" / r["id"] / "trainer.safetensors") for r in (parent, child)]
    compared = learning_venv.run("python", "-c", code, *paths)
    assert compared.stdout.split() == ["True", "True"], compared.stderr
