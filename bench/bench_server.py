"""The registry server against the plain alternatives, side by side (ratios cancel a shared machine's load).

(a) requests/s for ``simple/<project>/`` with 20 concurrent clients (threads with keep-alive
    connections where the server allows it): ``agentos index serve`` (uvicorn, ``--workers``) versus
    ``python -m http.server`` on the same folder, alternating rounds.
(b) one upload (``POST /legacy/``, the path twine uses) of a new project into an index of 5,000
    projects versus one local ``publish`` of a new project into the same index, alternating.

    python bench/bench_server.py [--projects 5000] [--requests 4000] [--rounds 3] [--workers 2] [--json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_registry import _wheel  # noqa: E402  (the same synthetic component wheels)

CLIENTS = 20


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"server did not start: {url}") from None
            time.sleep(0.2)


def _load(port: int, path: str, total: int) -> float:
    """requests/s for ``total`` GETs of ``path`` over CLIENTS threads (keep-alive when offered)."""
    per = total // CLIENTS
    errors = []

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(per):
            conn.request("GET", path)
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                errors.append(r.status)
            if r.will_close:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise SystemExit(f"{len(errors)} failed requests: {errors[:5]}")
    return per * CLIENTS / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=5000)
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from agentos.registry import publish, upload_file
    from agentos.registry.server import TokenStore

    agentos = os.path.join(os.path.dirname(sys.executable), "agentos")
    with tempfile.TemporaryDirectory(prefix="bench-server-") as work:
        wheels = os.path.join(work, "wheels")
        os.makedirs(wheels)
        index = os.path.join(work, "index")
        start = time.perf_counter()
        publish([_wheel(wheels, i) for i in range(args.projects)], index)
        setup = time.perf_counter() - start
        token = TokenStore(index).create("bench")
        ours_port, plain_port = _port(), _port()
        ours = subprocess.Popen(
            [
                agentos,
                "index",
                "serve",
                index,
                "--port",
                str(ours_port),
                "--workers",
                str(args.workers),
                "--no-access-log",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        plain = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(plain_port), "--bind", "127.0.0.1", "--directory", index],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait(f"http://127.0.0.1:{ours_port}/simple/", ours)
            _wait(f"http://127.0.0.1:{plain_port}/simple/", plain)
            path = "/simple/agentos-env-bench7/"
            _load(ours_port, path, 400), _load(plain_port, path, 400)  # warm up both
            ours_rps, plain_rps = [], []
            for _ in range(args.rounds):
                ours_rps.append(_load(ours_port, path, args.requests))
                plain_rps.append(_load(plain_port, path, args.requests))
            uploads, publishes = [], []
            n = args.projects
            for _ in range(args.rounds):
                new = _wheel(wheels, n)
                start = time.perf_counter()
                upload_file(new, f"http://127.0.0.1:{ours_port}", token)
                uploads.append(time.perf_counter() - start)
                new = _wheel(wheels, n + 1)
                start = time.perf_counter()
                publish([new], index)
                publishes.append(time.perf_counter() - start)
                n += 2
            problems = subprocess.run([agentos, "index", "check", "--index", index], capture_output=True, text=True)
        finally:
            for proc in (ours, plain):
                proc.terminate()
                proc.wait(timeout=30)
    o, p = statistics.median(ours_rps), statistics.median(plain_rps)
    u, lp = statistics.median(uploads), statistics.median(publishes)
    result = {
        "projects": args.projects,
        "setup_publish_all_s": setup,
        "workers": args.workers,
        "clients": CLIENTS,
        "serve_rps": ours_rps,
        "http_server_rps": plain_rps,
        "serve_ratio": o / p,
        "upload_s": uploads,
        "local_publish_s": publishes,
        "upload_ratio": u / lp,
        "index_check": problems.stdout.strip(),
        "targets": {"serve_ratio": ">= 1", "upload_ratio": "<= 1.5"},
    }
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"simple/<project>/ at {CLIENTS} clients: agentos index serve ({args.workers} workers) {o:.0f} req/s, "
              f"python -m http.server {p:.0f} req/s: ratio {o / p:.2f} (target >= 1)")  # fmt: skip
        print(f"into {args.projects} projects: upload {u * 1000:.0f} ms, local publish {lp * 1000:.0f} ms: "
              f"ratio {u / lp:.2f} (target <= 1.5); index check: {result['index_check']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
