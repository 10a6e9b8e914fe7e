"""Uploads: ``POST /legacy/`` as twine and PyPI speak it, and the web form that posts there.

The token is checked before any of the file is stored: a Basic-auth token before the body is read
at all, a form's ``token`` field as soon as the file part begins (the field must come first, as
the form sends it). The request body is counted as it arrives and refused with 413 as soon as it
passes the limit (python-multipart spools the file to disk, never to memory). The file goes into
a private folder inside the index, its ``sha256_digest`` field is checked, then it goes through the
registry's own publish path (:func:`agentos.registry.publish_files`, with every check of a local
publish; the name rule and the project's owner are checked under the index lock, and the owner is
recorded in the same atomic step as the publish). Errors: 400 (the one-line reason), 403 (unknown
token, a name the index does not serve, project owned by someone else), 408 (body too slow), 409
(another file of that name exists), 413 (too large); the reason is also the status line's reason
phrase, which is what twine prints. The same file again is a no-op (200), as it is for a local
publish.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from html import escape

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartParser
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse

from ...errors import UsageError
from .._artifacts import is_distribution_file
from .._tokens import TokenStore
from ._guard import BodyTimeout
from ._protocol import REASON_HEADER, reason_phrase

DEFAULT_MAX_UPLOAD = 100 << 20
_FILENAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


class TooLarge(Exception):
    pass


class Refused(Exception):
    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status


def _header_token(request: Request) -> str | None:
    """The Basic auth password (twine: ``-u __token__ -p TOKEN``), or None."""
    auth = request.headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "basic" and value:
        with contextlib.suppress(ValueError, UnicodeDecodeError):
            return base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")[2] or None
    return None


class _GatedParser(MultiPartParser):
    """Starlette's multipart parser that calls ``gate(fields so far)`` before a file part is stored."""

    def __init__(self, *args, gate, **kwargs):
        super().__init__(*args, **kwargs)
        self.gate = gate

    def on_headers_finished(self) -> None:
        super().on_headers_finished()
        if self._current_part.file is not None:
            self.gate(self.items)


class Uploader:
    def __init__(self, root: str, max_upload: int):
        self.root = os.path.abspath(root)
        self.max_upload = max_upload
        self.tokens = TokenStore(self.root)

    async def form(self, request):
        """The upload form (token + file), posting to the same API as twine."""
        return HTMLResponse(
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Upload a package</title>'
            '<link rel="stylesheet" href="../static/style.css"></head><body>'
            '<nav><a href="../index.html">Catalogue</a></nav><h1>Upload a package</h1>'
            '<form id="upload" method="post" action="../legacy/" enctype="multipart/form-data">'
            '<input type="hidden" name=":action" value="file_upload">'
            '<input type="hidden" name="protocol_version" value="1">'
            '<p><label>API token <input type="password" name="token" id="token" autocomplete="off" required>'
            "</label></p>"
            '<p><label>Wheel or sdist <input type="file" name="content" id="content" accept=".whl,.tar.gz,.zip" '
            "required></label></p>"
            '<p><button type="submit">Upload</button></p></form>'
            f"<p>Files up to {self.max_upload >> 20} MiB. Same checks as <code>agentos publish</code>.</p>"
            "</body></html>\n"
        )

    async def upload(self, request: Request):
        browser = "text/html" in request.headers.get("accept", "")
        try:
            name = await self._upload(request)
        except Refused as exc:
            reason = str(exc).splitlines()[0] if str(exc) else "refused"
            headers = {REASON_HEADER.decode(): reason_phrase(reason).decode()}
            if exc.status in (408, 413):
                headers["Connection"] = "close"  # the rest of the body is not read
            if browser:
                return HTMLResponse(
                    f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Upload refused</title></head>'
                    f'<body><h1>Upload refused</h1><p id="result">{escape(reason)}</p>'
                    '<p><a href="../upload/">Back</a></p></body></html>\n',
                    status_code=exc.status,
                    headers=headers,
                )
            return PlainTextResponse(reason + "\n", status_code=exc.status, headers=headers)
        if browser:
            return HTMLResponse(
                f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Uploaded</title></head>'
                f'<body><h1>Uploaded</h1><p id="result">{escape(name)}</p>'
                '<p><a href="../index.html">Catalogue</a></p></body></html>\n'
            )
        return PlainTextResponse(f"{name}\n")

    async def _upload(self, request: Request) -> str:
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_upload:
            raise Refused(413, f"upload too large: over {self.max_upload} bytes")
        header_token = _header_token(request)
        owner = None
        if header_token is not None:  # checked before a byte of the body is read
            owner = await run_in_threadpool(self.tokens.owner_of_token, header_token)
            if owner is None:
                raise Refused(403, "invalid or unknown API token")
        if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
            raise Refused(400, "malformed upload: expected multipart/form-data")
        received = 0
        receive = request.receive

        async def counted():
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.max_upload:
                raise TooLarge()
            return message

        def gate(fields) -> None:  # the file part begins: nothing of it is stored without a valid token
            nonlocal owner
            if owner is not None:
                return
            field = next((value for key, value in fields if key == "token"), None)
            if not isinstance(field, str) or not field:
                raise Refused(403, "no API token: send it as Basic auth, or as a 'token' field before the file")
            owner = self.tokens.owner_of_token(field)
            if owner is None:
                raise Refused(403, "invalid or unknown API token")

        parser = _GatedParser(
            request.headers, Request(request.scope, counted).stream(), max_files=1, max_fields=64, gate=gate
        )
        try:
            form = await parser.parse()
        except (TooLarge, BodyTimeout, Refused) as exc:
            if isinstance(exc, TooLarge):
                raise Refused(413, f"upload too large: over {self.max_upload} bytes") from None
            if isinstance(exc, BodyTimeout):
                raise Refused(408, "request body too slow: timed out") from None
            raise
        except Exception as exc:  # malformed multipart bodies (python-multipart / Starlette errors)
            raise Refused(400, f"malformed upload: {exc}") from None
        try:
            if form.get(":action") != "file_upload":
                raise Refused(400, "unsupported :action (expected file_upload)")
            if owner is None:
                gate(list(form.multi_items()))
            upload = form.get("content")
            if not isinstance(upload, UploadFile) or not upload.filename:
                raise Refused(400, "no file in the 'content' field")
            filename = upload.filename
            if not _FILENAME_RE.match(filename) or not is_distribution_file(filename):
                raise Refused(400, f"invalid file name {filename[:100]!r}: a wheel or an sdist")
            digest = form.get("sha256_digest")
            return await run_in_threadpool(self._store, upload.file, filename, digest, owner)
        finally:
            await form.close()

    def _store(self, source, filename: str, digest, owner: str) -> str:
        incoming = os.path.join(self.root, ".incoming")
        os.makedirs(incoming, exist_ok=True)
        folder = tempfile.mkdtemp(prefix="upload-", dir=incoming)
        try:
            path = os.path.join(folder, filename)
            sha = hashlib.sha256()
            source.seek(0)
            with open(path, "wb") as out:
                for block in iter(lambda: source.read(1 << 20), b""):
                    sha.update(block)
                    out.write(block)
            if isinstance(digest, str) and digest and digest.strip().lower() != sha.hexdigest():
                raise Refused(400, f"{filename}: sha256_digest does not match the uploaded bytes")
            return self._publish(path, filename, owner)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _publish(self, path: str, filename: str, owner: str) -> str:
        """Every check, the owner's included, happens in ``publish_files`` (parsing before the index
        lock, the owner and the write under it, ownership recorded with the publish itself)."""
        from ...errors import AlreadyPublished
        from .. import publish_files
        from .._owners import Forbidden

        try:
            results = publish_files([path], self.root, owner=owner)
        except Forbidden as exc:
            raise Refused(403, str(exc)) from None
        except AlreadyPublished as exc:
            raise Refused(409, str(exc)) from None
        except UsageError as exc:
            raise Refused(400, str(exc)) from None
        except Exception as exc:  # a file the reader did not foresee is still only refused
            raise Refused(400, f"{filename}: unreadable ({type(exc).__name__}: {exc})") from None
        if results and results[0]["status"] == "unchanged":
            return f"unchanged {filename}"  # the same file again: a no-op, as a local publish
        return f"published {filename}"
