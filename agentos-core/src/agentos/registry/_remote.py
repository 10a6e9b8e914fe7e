"""``agentos publish --to URL --token T``: upload to a registry server (the legacy upload API).

Folders are built first, as for a local publish; each file is then sent as ``multipart/form-data``
with ``:action=file_upload`` and its ``sha256_digest``, the token as HTTP Basic auth
(``__token__``), exactly as twine sends it. The server answers with one line.

The token goes only to the URL given: a redirect is never followed (it is an error naming where
it pointed; :mod:`agentos.http_credentials`, shared by every client that sends a credential), and only
a 200 that says ``published`` or ``unchanged`` counts as an upload.
"""

from __future__ import annotations

import base64
import os
import secrets
import tempfile
import urllib.error
import urllib.request

from ..errors import UsageError
from ..http_credentials import urlopen

_CHUNK = 1 << 20


def _body(path: str, fields: dict[str, str], boundary: str) -> tuple[int, object]:
    """The multipart body as (length, chunks): the file is streamed, never held in memory."""
    head = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
        for key, value in fields.items()
    )
    head += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="content"; filename="{os.path.basename(path)}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()

    def chunks():
        yield head
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                yield chunk
        yield tail

    return len(head) + os.path.getsize(path) + len(tail), chunks()


def upload_file(path: str, url: str, token: str, timeout: float = 120) -> str:
    """Upload one wheel or sdist; returns the server's line, raises :class:`UsageError` on refusal."""
    from ._artifacts import read_artifact, sha256_file

    art = read_artifact(path)  # the same local checks first: a clear error before any network
    digest = sha256_file(path)
    fields = {
        ":action": "file_upload",
        "protocol_version": "1",
        "name": art.name,
        "version": art.version,
        "filetype": art.packagetype,
        "pyversion": "source" if art.packagetype == "sdist" else "py3",
        "metadata_version": "2.1",
        "sha256_digest": digest,
    }
    boundary = secrets.token_hex(16)
    length, body = _body(path, fields, boundary)
    endpoint = url.rstrip("/") + "/legacy/"
    auth = base64.b64encode(f"__token__:{token}".encode()).decode()
    request = urllib.request.Request(
        endpoint,
        data=body,
        method="POST",
        headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Content-Length": str(length),
            "Authorization": f"Basic {auth}",
        },
    )
    from .._safe_text import printable

    try:
        with urlopen(request, timeout=timeout, follow_redirects=False) as response:
            line = (response.read(4096).decode("utf-8", "replace").strip().splitlines() or [""])[0]
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            where = printable(str(exc.headers.get("Location", "?")))[:200]
            raise UsageError(
                f"{endpoint} answered {exc.code}, a redirect to {where}: not followed (the token goes only to "
                f"the URL given); nothing was uploaded, use the server's own URL"
            ) from None
        reason = exc.read(4096).decode("utf-8", "replace").strip().splitlines()
        line = printable(reason[0] if reason else exc.reason)[:300]
        raise UsageError(f"{endpoint} refused {art.filename}: {exc.code} {line}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise UsageError(f"cannot reach {endpoint}: {getattr(exc, 'reason', exc)}") from None
    if response.status != 200 or not line.startswith(("published ", "unchanged ")):
        raise UsageError(
            f"{endpoint} did not confirm {art.filename} (HTTP {response.status}: {printable(line)[:200]!r}); "
            "nothing was uploaded"
        )
    return line


def publish_remote(paths: list[str], url: str, token: str, *, sdist: bool = False) -> list[dict]:
    """Build folders, then upload every file to the server at ``url``."""
    from ._build import collect

    if not paths:
        raise UsageError("nothing to publish: name a plugin folder, a wheel or an sdist")
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--to takes the server's URL (http:// or https://), not {url}")
    if not token:
        raise UsageError("--to needs --token (agentos index token create)")
    results = []
    with tempfile.TemporaryDirectory(prefix="agentos-upload-") as work:
        for path in collect(list(paths), work, sdist=sdist):
            line = upload_file(path, url, token)
            status = "unchanged" if line.startswith("unchanged ") else "uploaded"
            results.append({"filename": os.path.basename(path), "status": status, "index": url, "server": line})
    return results
