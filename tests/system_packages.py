"""The system programs the tests start themselves, installed with Debian's apt-get when missing.

``nox -s tests`` calls :func:`main` before pytest, so the README's test command works on a machine
that has never seen this project: redis-server (the Academy exchange tests), Chromium (the
registry server's browser tests), bubblewrap (the policy sandbox of ``agentos index verify``),
Slurm with munge (the batch-cluster experiment tests) and PostgreSQL (agentos tune's shared study) are
installed when absent (``apt-get update`` once, then ``apt-get install``). As root that happens
unasked; otherwise one line says what to install. Run it alone: ``python3 tests/system_packages.py`` (stdlib only).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

# the path the tests start -> the Debian package that provides it
NEEDED = {
    "/usr/bin/redis-server": "redis-server",
    "/usr/bin/chromium": "chromium",
    "/usr/bin/bwrap": "bubblewrap",  # the policy sandbox of agentos index verify
    # a single-node Slurm for the batch-cluster experiment tests (tests/slurm_cluster.py)
    "/usr/sbin/slurmctld": "slurmctld",
    "/usr/sbin/slurmd": "slurmd",
    "/usr/bin/sbatch": "slurm-client",
    "/usr/sbin/munged": "munge",
    "/usr/lib/postgresql/15/bin/postgres": "postgresql",  # agentos tune's shared-study test (Debian 12: 15)
}


def missing(needed: dict[str, str] = NEEDED) -> list[str]:
    """The packages whose program is not at its path, in ``needed``'s order."""
    return [package for path, package in needed.items() if not os.access(path, os.X_OK)]


def main(needed: dict[str, str] = NEEDED) -> int:
    packages = missing(needed)
    if not packages:
        return 0
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        print(
            f"the tests need {', '.join(packages)}: install {'it' if len(packages) == 1 else 'them'} "
            f"(Debian: apt-get install -y {' '.join(packages)}) as root, or run this command as root",
            file=sys.stderr,
        )
        return 1
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    print(f"installing {' '.join(packages)} with apt-get (the tests start them on 127.0.0.1)", flush=True)
    for cmd in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", "--no-install-recommends", *packages]):
        if subprocess.run(cmd, env=env).returncode != 0:
            print(f"'{' '.join(cmd)}' failed: install {' '.join(packages)} and run the tests again", file=sys.stderr)
            return 1
    still = missing(needed)
    if still:
        print(f"apt-get installed {' '.join(packages)} but {', '.join(still)} is still missing", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # ``PATH=PACKAGE`` arguments replace the list (the tests use this to name programs that do not exist)
    pairs = dict(arg.split("=", 1) for arg in sys.argv[1:] if "=" in arg)
    sys.exit(main(pairs or NEEDED))
