"""``agentos run --from-run mlflow:<run id>``: an MLflow run's files into a temporary run folder.

The entry point ``mlflow`` of the group ``agentos.run_sources`` (core calls :func:`fetch` with a new
empty folder and a byte bound). The tracking server is someone else's data: only the files listed in
the run's ``agentos.files`` tag (plain names, sha256 each, written by this plugin when it logged the
run) are fetched, each bounded by its listed size and the total bound, and each must match its
sha256; ``agentos.lock_sha256`` must match lock.json. The whole fetch has a deadline
(``AGENTOS_MLFLOW_FETCH_TIMEOUT`` seconds, 600 by default): a server that trickles bytes under the
per-read timeout cannot stall the run. Core then checks the folder like a local run
folder (lock against the installed components, the ``source =`` allowlist, the checkpoint's name).
"""

from __future__ import annotations

import json
import os
import re
import threading

from agentos.errors import UsageError

from ._sender import FILES_TAG, client_for, file_sha256

_RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")
_SHA = re.compile(r"[0-9a-f]{64}\Z")
MAX_FILES = 32
CHUNK = 1 << 16
FETCH_SECONDS = 600.0
MAX_ANSWER_BYTES = 4 << 20  # a run's tags, or its artifact listing (MLflow caps a tag at 8,000 characters)


def _fetch_seconds() -> float:
    text = os.environ.get("AGENTOS_MLFLOW_FETCH_TIMEOUT", "").strip()
    try:
        seconds = float(text) if text else FETCH_SECONDS
    except ValueError:
        raise UsageError(f"AGENTOS_MLFLOW_FETCH_TIMEOUT={text[:40]!r} is not a number of seconds") from None
    if not 0 < seconds < 1e7:
        raise UsageError(f"AGENTOS_MLFLOW_FETCH_TIMEOUT={text[:40]!r} must be a positive number of seconds")
    return seconds


def fetch(reference: str, destination: str, *, max_bytes: int) -> None:
    """Write the files of MLflow run ``reference`` into ``destination`` (at most ``max_bytes``)."""
    uri = os.environ.get("MLFLOW_TRACKING_URI", "").strip()
    if not uri:
        raise UsageError("--from-run mlflow:<run id> needs MLFLOW_TRACKING_URI (the tracking server's address)")
    if not _RUN_ID.match(reference):
        raise UsageError(f"mlflow:{reference[:80]!r} is not an MLflow run id")
    seconds = _fetch_seconds()
    stop = threading.Event()  # set at the deadline: the fetching thread writes nothing more
    failure: list[BaseException] = []

    def work() -> None:
        try:
            _fetch(uri, reference, destination, max_bytes, stop)
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    worker = threading.Thread(target=work, name="agentos-mlflow-fetch", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        stop.set()
        raise UsageError(f"run mlflow:{reference}: {uri} did not send it within {seconds:g} s "
                         "(AGENTOS_MLFLOW_FETCH_TIMEOUT); not using it")
    if failure:
        raise failure[0]


def _fetch(uri: str, reference: str, destination: str, max_bytes: int, stop: threading.Event) -> None:
    where = f"run mlflow:{reference}"
    client = None if _is_http(uri) else client_for(uri)
    tags, listed = _run_and_listing(client, uri, reference, stop)
    manifest = _manifest(tags.get(FILES_TAG), where)
    total = 0
    for name, sha in manifest.items():
        size = listed.get(name)
        if not isinstance(size, int) or size < 0:
            raise UsageError(f"{where}: {name} is listed in its {FILES_TAG} tag but not among its artifacts")
        total += size
        if total > max_bytes:
            raise UsageError(f"{where}: its files are larger than {max_bytes:,} bytes; not using it")
        if stop.is_set():
            return
        _download(client, uri, reference, name, os.path.join(destination, name), size, stop)
        if file_sha256(os.path.join(destination, name)) != sha:
            raise UsageError(f"{where}: {name} does not match the sha256 recorded when it was logged "
                             "(changed since); not using it")
    lock_sha = tags.get("agentos.lock_sha256")
    if lock_sha is not None and manifest.get("lock.json") != lock_sha:
        raise UsageError(f"{where}: lock.json does not match its agentos.lock_sha256 tag; not using it")


def _is_http(uri: str) -> bool:
    return uri.startswith(("http://", "https://"))


def _run_and_listing(client, uri: str, reference: str, stop: threading.Event) -> tuple[dict, dict]:
    """The run's tags and ``{artifact name: listed size}``. Over HTTP(S) each answer is read only up to
    ``MAX_ANSWER_BYTES`` (MLflow's client would hold an answer of any size in memory)."""
    if client is not None:
        try:
            run = client.get_run(reference)
        except Exception as exc:
            raise UsageError(f"mlflow:{reference}: no such run at {uri} ({type(exc).__name__})") from None
        return dict(run.data.tags), {f.path: f.file_size for f in client.list_artifacts(reference) if not f.is_dir}
    answer = _get_json(uri, "runs/get", reference, stop, f"mlflow:{reference}: no such run at {uri}")
    run = answer.get("run") if isinstance(answer, dict) else None
    data = run.get("data") if isinstance(run, dict) else None
    entries = data.get("tags", []) if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(isinstance(t, dict) for t in entries):
        raise UsageError(f"mlflow:{reference}: {uri} did not answer with an MLflow run")
    tags = {t.get("key"): t.get("value") for t in entries}
    answer = _get_json(uri, "artifacts/list", reference, stop, f"run mlflow:{reference}: its artifacts are not listed")
    files = answer.get("files", []) if isinstance(answer, dict) else None
    if not isinstance(files, list):
        raise UsageError(f"run mlflow:{reference}: {uri} did not answer with an artifact listing")
    listed = {f.get("path"): f.get("file_size") for f in files if isinstance(f, dict) and not f.get("is_dir")}
    return tags, listed


def _get_json(uri: str, endpoint: str, run_id: str, stop: threading.Event, failed: str):
    """``GET /api/2.0/mlflow/<endpoint>?run_id=`` as JSON, at most ``MAX_ANSWER_BYTES``, or one line."""
    import urllib.parse
    import urllib.request

    query = urllib.parse.urlencode({"run_id": run_id, "run_uuid": run_id})
    request = urllib.request.Request(f"{uri.rstrip('/')}/api/2.0/mlflow/{endpoint}?{query}", headers=_auth_headers())
    body = bytearray()
    try:
        whole = _stream(request, MAX_ANSWER_BYTES, stop, body.extend)
    except UsageError:
        raise
    except Exception as exc:
        raise UsageError(f"{failed} ({type(exc).__name__})") from None
    if not whole:
        raise UsageError(f"{failed} (its answer is larger than {MAX_ANSWER_BYTES:,} bytes)")
    try:
        return json.loads(bytes(body))
    except (ValueError, RecursionError):
        raise UsageError(f"{failed} (its answer is not JSON)") from None


def _stream(request, limit: int, stop: threading.Event, write) -> bool:
    """Send ``request``, hand each block of the answer to ``write``; False (stopped) past ``limit`` bytes.
    The credential stays with the tracking server's origin (:mod:`agentos.http_credentials`: a redirect
    elsewhere drops it, one from https to http is refused)."""
    from agentos.http_credentials import urlopen

    timeout = float(os.environ.get("MLFLOW_HTTP_REQUEST_TIMEOUT", "10"))
    seen = 0
    with urlopen(request, timeout=timeout) as response:
        while not stop.is_set():
            block = response.read1(CHUNK)  # what one read brings: the deadline is checked between reads
            if not block:
                break
            seen += len(block)
            if seen > limit:
                return False
            write(block)
    return True


def _manifest(text, where: str) -> dict[str, str]:
    """The run's ``{file name: sha256}`` (plain names, hex digests), or one line why not."""
    if not isinstance(text, str) or len(text) > 8000:
        raise UsageError(f"{where}: no {FILES_TAG} tag (a run not logged by agentos-tracker-mlflow, or unfinished)")
    try:
        value = json.loads(text)
    except ValueError:
        raise UsageError(f"{where}: its {FILES_TAG} tag is not JSON") from None
    if not isinstance(value, dict) or not 0 < len(value) <= MAX_FILES:
        raise UsageError(f"{where}: its {FILES_TAG} tag must map at most {MAX_FILES} file names to sha256")
    manifest = {}
    for name, sha in value.items():
        if "/" in name:
            continue  # the test run's files (test/...): not a run folder's
        if not isinstance(sha, str) or not _NAME.match(name) or not _SHA.match(sha):
            raise UsageError(f"{where}: {str(name)[:60]!r} in its {FILES_TAG} tag is not a plain name with a sha256")
        manifest[name] = sha
    return manifest


def _download(client, uri: str, run_id: str, name: str, target: str, size: int, stop: threading.Event) -> None:
    """At most ``size`` bytes of artifact ``name``: streamed from the server's get-artifact endpoint
    (http/https), else copied by MLflow's client from a local store, then checked."""
    if _is_http(uri):
        _http_download(uri, run_id, name, target, size, stop)
    else:
        import shutil
        import tempfile

        with tempfile.TemporaryDirectory() as scratch:
            path = client.download_artifacts(run_id, name, scratch)
            if os.path.islink(path) or not os.path.isfile(path):
                raise UsageError(f"run mlflow:{run_id}: {name} is not a plain file; not using it")
            shutil.copyfile(path, target)
    if os.path.getsize(target) != size:
        raise UsageError(f"run mlflow:{run_id}: {name} is not the size its listing says; not using it")


def _http_download(uri: str, run_id: str, name: str, target: str, size: int, stop: threading.Event) -> None:
    import urllib.parse
    import urllib.request

    query = urllib.parse.urlencode({"path": name, "run_uuid": run_id})
    request = urllib.request.Request(f"{uri.rstrip('/')}/get-artifact?{query}", headers=_auth_headers())
    with open(target, "wb") as out:
        if not _stream(request, size, stop, out.write):
            raise UsageError(f"run mlflow:{run_id}: {name} is larger than its listing says; not using it")


def _auth_headers() -> dict:
    """MLflow's own credentials variables (a token, or a user name and password)."""
    token = os.environ.get("MLFLOW_TRACKING_TOKEN")
    if token:
        return {"Authorization": f"Bearer {token}"}
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if user and password:
        import base64

        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}
    return {}
