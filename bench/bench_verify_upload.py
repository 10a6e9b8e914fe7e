"""From an upload to a verified entry on the server's board, for the embedded index's trained packages.

For each policy: a copy of the embedded index (``index/``) without that package (``agentos index
rebuild`` drops it), ``agentos index serve`` on it with background verification (``--verify-workers
1``), the package's wheel uploaded with ``agentos publish --to`` and a token, then the server's
``catalogue.json`` polled until the release has a verdict, and the board JSON read to check the
entry shows it. The venv set-up is timed on its own afterwards (``prepare_venv`` of the same
requirements from the same index: the first step of every verification), so the re-run is the rest.

    python bench/bench_verify_upload.py [--policies corridor_sarsa cartpole_ppo] [--out bench/verify_upload.json]
    python bench/bench_verify_upload.py --smoke     # corridor_sarsa only (what the test runs)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INDEX = ROOT / "index"
AGENTOS = [sys.executable, "-m", "agentos"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def _without(project: str, folder: Path) -> Path:
    """A copy of the embedded index without ``project`` (its files and records), rebuilt."""
    copy = folder / "index"
    shutil.copytree(INDEX, copy, ignore=shutil.ignore_patterns(".*"))
    for part in ("files", "results"):
        shutil.rmtree(copy / part / project, ignore_errors=True)
    subprocess.run([*AGENTOS, "index", "rebuild", "--index", str(copy)], check=True, capture_output=True)
    return copy


def _board_status(url: str, project: str) -> str | None:
    for board in _get(f"{url}/leaderboards/index.json")["leaderboards"]:
        stem = board["page"].removesuffix(".html")
        for entry in _get(f"{url}/leaderboards/{stem}.json")["entries"]:
            if entry["project"] == project:
                return entry["status"]
    return None


def measure(name: str, timeout: float) -> dict:
    project = f"agentos-policy-{name.replace('_', '-')}"
    (wheel,) = (INDEX / "files" / project).glob("*.whl")
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        index = _without(project, Path(tmp))
        port = _port()
        url = f"http://127.0.0.1:{port}"
        log = open(os.path.join(tmp, "server.log"), "wb")
        cmd = [*AGENTOS, "index", "serve", str(index), "--port", str(port), "--no-access-log"]
        server = subprocess.Popen([*cmd, "--verify-workers", "1", "--verify-timeout", str(timeout)], stdout=log,
                                  stderr=subprocess.STDOUT)  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    _get(f"{url}/catalogue.json")
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise RuntimeError(open(log.name).read()) from None
                    time.sleep(0.2)
            token = subprocess.run([*AGENTOS, "index", "token", "create", "--index", str(index), "--owner", "bench"],
                                   capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
            start = time.monotonic()
            subprocess.run([*AGENTOS, "publish", str(wheel), "--to", url, "--token", token], check=True,
                           capture_output=True)  # fmt: skip
            uploaded = time.monotonic() - start
            pending = status = None
            while time.monotonic() - start < timeout + 120:
                release = _get(f"{url}/catalogue.json")["projects"][project]["releases"]
                results = next(iter(release.values()))["results"]
                status = results.get("status", "claimed")
                if status == "pending" and pending is None:
                    pending = time.monotonic() - start
                if status in ("verified", "flagged", "unverifiable"):
                    break
                time.sleep(0.25)
            total = time.monotonic() - start
            board = _board_status(url, project)
            reason = results.get("verification", {}).get("reason", "")
            version = next(iter(release))
        finally:
            server.terminate()
            server.wait(30)
            log.close()
        setup = _setup_time(index, results, version)
    return {
        "policy": name,
        "project": project,
        "version": version,
        "status": status,
        "board_status": board,
        "reason": reason,
        "upload_s": round(uploaded, 2),
        "pending_after_s": None if pending is None else round(pending, 2),
        "verified_after_s": round(total, 1),
        "venv_setup_s": round(setup, 1),
        "rerun_and_rest_s": round(total - setup, 1),
    }


def _setup_time(index: Path, results: dict, version: str) -> float:
    """Seconds of a fresh venv with the claim's environment and policy (the verification's first step)."""
    sys.path.insert(0, str(ROOT / "agentos-core" / "src"))
    from agentos.results import prepare_venv

    record = json.loads((index / results["record"]).read_text())
    env, policy = record["environment"], record["policy"]
    with tempfile.TemporaryDirectory(prefix="bench-venv-") as folder:
        start = time.monotonic()
        prepare_venv(folder, f"{env['name']}=={env['version']}", f"{policy['name']}=={version}",
                     index_url=index.as_uri())  # fmt: skip
        return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=["corridor_sarsa", "cartpole_ppo"])
    parser.add_argument("--smoke", action="store_true", help="corridor_sarsa only")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--out", default=None, help="write the JSON here (default: print it)")
    args = parser.parse_args()
    policies = ["corridor_sarsa"] if args.smoke else args.policies
    rows = [measure(name, args.timeout) for name in policies]
    result = {
        "bench": "verify_upload",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared), load {os.getloadavg()[0]:.1f}",
        "python": platform.python_version(),
        "rows": rows,
    }
    text = json.dumps(result, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    return 0 if all(r["status"] == "verified" == r["board_status"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
