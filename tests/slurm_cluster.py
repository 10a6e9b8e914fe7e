"""A real single-node Slurm for tests and benchmarks: munged, slurmctld and slurmd on 127.0.0.1.

Everything lives under one folder (configuration, munge key and socket, spool and state folders, pid
and log files); the daemons listen on ports of their own and are stopped by pid. The system's
/etc/slurm and /etc/munge are never read or written: clients find the cluster through ``SLURM_CONF``
(see :attr:`SingleNodeSlurm.env`). Needs Debian's ``slurmctld slurmd slurm-client munge`` and root
(slurmd starts jobs as their user). Stdlib only; ``python3 tests/slurm_cluster.py FOLDER`` starts one
and waits for Ctrl-C.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time

#: The programs it starts, and the Debian packages that provide them (see system_packages.py).
PROGRAMS = {"/usr/sbin/munged": "munge", "/usr/sbin/slurmctld": "slurmctld", "/usr/sbin/slurmd": "slurmd",
            "/usr/bin/sbatch": "slurm-client"}


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _node_line() -> tuple[str, int, int]:
    """(node name, CPUs, memory in MB) from ``slurmd -C`` (what this machine has)."""
    out = subprocess.run(["/usr/sbin/slurmd", "-C"], capture_output=True, text=True, timeout=30, check=True).stdout
    name = re.search(r"NodeName=(\S+)", out).group(1)
    cpus = int(re.search(r"\bCPUs=(\d+)", out).group(1))
    memory = int(re.search(r"RealMemory=(\d+)", out).group(1))
    return name, cpus, memory


class SingleNodeSlurm:
    """``start()`` it (or use it as a context manager); ``env`` is what the Slurm commands need."""

    def __init__(self, folder: str, partition: str = "debug"):
        self.folder, self.partition = os.path.abspath(folder), partition
        self.conf = os.path.join(self.folder, "slurm.conf")
        self.socket = os.path.join(self.folder, "munge", "munge.socket")
        self.pids: dict[str, int] = {}
        self.procs: dict[str, subprocess.Popen] = {}
        self.env = {"SLURM_CONF": self.conf}

    def _path(self, *parts: str) -> str:
        return os.path.join(self.folder, *parts)

    def write_config(self) -> None:
        for sub in ("munge", "state", "spool", "log"):
            os.makedirs(self._path(sub), mode=0o700, exist_ok=True)
        key = self._path("munge", "munge.key")
        if not os.path.exists(key):
            fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(1024))
        name, cpus, memory = _node_line()
        self.node, self.cpus, self.memory = name, cpus, memory
        ctld, slurmd = _free_ports(2)
        lines = [
            "ClusterName=agentos-test", f"SlurmctldHost={name}(127.0.0.1)", f"SlurmctldPort={ctld}",
            f"SlurmdPort={slurmd}", "AuthType=auth/munge", "CryptoType=crypto/munge",
            f"AuthInfo=socket={self.socket}", "SlurmUser=root", "SlurmdUser=root",
            f"StateSaveLocation={self._path('state')}", f"SlurmdSpoolDir={self._path('spool')}",
            f"SlurmctldPidFile={self._path('slurmctld.pid')}", f"SlurmdPidFile={self._path('slurmd.pid')}",
            f"SlurmctldLogFile={self._path('log', 'slurmctld.log')}",
            f"SlurmdLogFile={self._path('log', 'slurmd.log')}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU", "SchedulerType=sched/backfill", "ReturnToService=2", "MpiDefault=none",
            "JobCompType=jobcomp/none", "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none", "SlurmctldTimeout=30", "SlurmdTimeout=30", "InactiveLimit=0",
            "KillWait=5", "MinJobAge=2", "SchedulerParameters=sched_interval=1",
            f"NodeName={name} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN",
            f"PartitionName={self.partition} Nodes={name} Default=YES MaxTime=INFINITE State=UP",
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def _daemon(self, name: str, cmd: list[str]) -> None:
        """Start a daemon in the foreground, as a child of this process (stopped and reaped by pid)."""
        log = open(self._path("log", f"{name}.out"), "ab")
        self.procs[name] = subprocess.Popen(cmd, env={**os.environ, **self.env}, stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.pids[name] = self.procs[name].pid

    def start(self, timeout: float = 60) -> SingleNodeSlurm:
        self.write_config()
        m = self._path("munge")
        try:
            self._daemon("munged", ["/usr/sbin/munged", "--foreground", f"--socket={self.socket}",
                                    f"--key-file={m}/munge.key", f"--pid-file={m}/munged.pid",
                                    f"--log-file={m}/munged.log", f"--seed-file={m}/munged.seed", "--force"])
            deadline = time.monotonic() + timeout
            while not os.path.exists(self.socket) and time.monotonic() < deadline:
                self._check_running()
                time.sleep(0.02)
            self._daemon("slurmctld", ["/usr/sbin/slurmctld", "-D", "-i", "-f", self.conf])
            self._daemon("slurmd", ["/usr/sbin/slurmd", "-D", "-f", self.conf, "-N", self.node])
            self.wait_idle(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _check_running(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited ({proc.returncode}); see {self._path('log')}")

    def run(self, *cmd: str, timeout: float = 30) -> subprocess.CompletedProcess:
        """A Slurm client command against this cluster (``sinfo``, ``squeue``, ``scancel``...)."""
        return subprocess.run(list(cmd), env={**os.environ, **self.env}, capture_output=True, text=True,
                              timeout=timeout)

    def wait_idle(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            state = self.run("sinfo", "-h", "-N", "-o", "%T").stdout.strip()
            if state == "idle":
                return
            self._check_running()
            time.sleep(0.1)
        raise RuntimeError(f"the Slurm node is not idle after {timeout:.0f}s (sinfo: {state!r}); "
                           f"see {self._path('log')}")

    def jobs(self) -> list[str]:
        """The ids of the jobs ``squeue`` lists (pending or running)."""
        return self.run("squeue", "-h", "-o", "%i").stdout.split()

    def jobs_left(self, timeout: float = 15) -> list[str]:
        """The jobs still listed after waiting up to ``timeout`` s for the queue to empty (a cancelled job
        is listed while it completes)."""
        deadline = time.monotonic() + timeout
        while (jobs := self.jobs()) and time.monotonic() < deadline:
            time.sleep(0.2)
        if jobs:
            print(self.run("squeue", "-o", "%i %T %j %M").stdout, file=sys.stderr)
        return jobs

    def cancel_all(self, timeout: float = 30) -> None:
        """Cancel every job and wait until ``squeue`` lists none (their steps end with them)."""
        if "slurmctld" not in self.procs:
            return
        deadline = time.monotonic() + timeout
        while (jobs := self.jobs()) and time.monotonic() < deadline:
            self.run("scancel", *jobs)
            time.sleep(0.2)

    def stop(self) -> None:
        """Cancel the jobs left, then stop every daemon by pid (slurmd first) and reap it."""
        try:
            self.cancel_all()
        finally:
            for name in ("slurmd", "slurmctld", "munged"):
                proc = self.procs.pop(name, None)
                self.pids.pop(name, None)
                if proc is None or proc.poll() is not None:
                    continue
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=15)

    def __enter__(self) -> SingleNodeSlurm:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


if __name__ == "__main__":
    with SingleNodeSlurm(sys.argv[1] if len(sys.argv) > 1 else "slurm-test") as slurm:
        print(f"export SLURM_CONF={slurm.conf}  # Ctrl-C stops the cluster", flush=True)
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
