"""API tokens and project owners, in ``.access.json`` inside the index folder (never served).

A token is ``agentos-`` plus 32 random bytes (url-safe base64); only its sha256 is stored, so
the file does not let anyone upload. Each token belongs to an owner; each project to the owner
whose token first uploaded it: ``projects`` here is that owner's claim, written before the first
byte of the project (so a killed upload leaves the name to its uploader), and ``catalogue.json``
records the owner with the publish itself. Projects already in the index without an owner (published
locally) belong to the index's maintainers: no token uploads to them unless ``assign`` gives
them to an owner.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import time

from ..errors import UsageError

ACCESS_FILE = ".access.json"
PREFIX = "agentos-"
_OWNER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


class TokenStore:
    """Tokens (hashed) and project owners of the index folder ``root``."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self.path = os.path.join(self.root, ACCESS_FILE)

    def _load(self) -> dict:
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return {"tokens": {}, "projects": {}}
        except (OSError, ValueError) as exc:
            raise UsageError(f"{self.path}: unreadable token store ({exc})") from None
        return data

    def _save(self, data: dict) -> None:
        import tempfile

        fd, tmp = tempfile.mkstemp(prefix=".access.", suffix=".tmp", dir=self.root)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @contextlib.contextmanager
    def locked(self):
        """Serialises writes of this file (held briefly; taken inside the index's lock, never around it)."""
        import fcntl

        os.makedirs(self.root, exist_ok=True)
        with open(os.path.join(self.root, ".access.lock"), "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    @staticmethod
    def check_owner_name(owner: str) -> None:
        if not _OWNER_RE.match(owner or ""):
            raise UsageError(f"invalid owner name {owner!r}: letters, digits, '.', '_', '-' (at most 64)")

    def create(self, owner: str) -> str:
        """A new token for ``owner``; the only time the token itself is seen."""
        self.check_owner_name(owner)
        token = PREFIX + secrets.token_urlsafe(32)
        with self.locked():
            data = self._load()
            data["tokens"][_digest(token)] = {"owner": owner, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ")}
            self._save(data)
        return token

    def owner_of_token(self, token: str | None) -> str | None:
        """The owner of ``token``, or None (compared digest to digest in constant time)."""
        if not token:
            return None
        wanted = _digest(token)
        found = None
        for digest, info in self._load()["tokens"].items():
            if hmac.compare_digest(digest, wanted):
                found = info["owner"]
        return found

    def project_owner(self, project: str) -> str | None:
        return self._load()["projects"].get(project)

    def projects(self) -> dict[str, str]:
        """Project -> owner claimed by its first upload (the catalogue's ``owner`` is the published one)."""
        return dict(self._load()["projects"])

    def assign(self, project: str, owner: str | None) -> None:
        """Record ``owner`` as the owner of ``project``, or forget it with None (call under :meth:`locked`)."""
        data = self._load()
        if owner is None:
            data["projects"].pop(project, None)
        else:
            data["projects"][project] = owner
        self._save(data)

    def list(self) -> list[dict]:
        """Every token as ``{"id", "owner", "created"}``: the id is the first 12 hex digits of its sha256."""
        tokens = self._load()["tokens"]
        return [{"id": d[:12], "owner": i["owner"], "created": i.get("created", "")} for d, i in sorted(tokens.items())]

    def revoke(self, token_id: str = "", owner: str = "") -> int:
        """Delete the token whose id is ``token_id`` (at least 8 hex digits), or every token of ``owner``."""
        if not (owner or re.fullmatch(r"[0-9a-f]{8,64}", token_id or "")):
            raise UsageError("name a token by its id (8 or more hex digits, see 'agentos index token list') or --owner")
        with self.locked():
            data = self._load()
            doomed = [
                d for d, i in data["tokens"].items() if (token_id and d.startswith(token_id)) or i["owner"] == owner
            ]
            if token_id and len(doomed) > 1:
                raise UsageError(f"{token_id} names {len(doomed)} tokens; give more digits")
            for digest in doomed:
                del data["tokens"][digest]
            self._save(data)
        return len(doomed)
