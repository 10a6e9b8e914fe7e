"""An experiment folder is data: files in it are read and written without following any link out of it.

Anyone who can write into ``experiments/<name>/`` (a shared disk, an unpacked archive, a copied
folder) could plant a symbolic link there. The folder itself is the user's choice; below it, every
path is walked one component at a time with ``O_NOFOLLOW`` relative to an open directory, so a link
is never followed, whatever happens between a check and a write. A link where a folder must be is
removed (never its target) and replaced by a real folder; files are replaced atomically through a
temporary file created with ``O_EXCL``, so a planted link or hard link is replaced, not written through.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import sys

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
#: A record larger than this is not read (trial.json holds an agent.ini and its local code).
MAX_RECORD_BYTES = 64 * 1024 * 1024


class NotAFolder(OSError):
    """A path inside the experiment folder is not what it must be (a file where a folder belongs...)."""


def _parts(rel: str) -> list[str]:
    parts = [p for p in rel.replace(os.sep, "/").split("/") if p not in ("", ".")]
    if not parts or ".." in parts or rel.startswith("/"):
        raise NotAFolder(errno.EINVAL, f"not a path inside the experiment folder: {rel!r}")
    return parts


def _enter(parent: int, name: str, create: bool) -> int:
    """Open the folder ``name`` in ``parent`` without following a link; with ``create``, make it (a link
    in its place is removed first)."""
    for _ in range(3):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                raise
            if not create or not stat.S_ISLNK(os.lstat(name, dir_fd=parent).st_mode):
                raise NotAFolder(errno.ENOTDIR, f"{name!r} is not a folder") from None
            warn(f"a symbolic link where a folder belongs was removed (not followed): {name}")
            os.unlink(name, dir_fd=parent)
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, dir_fd=parent)
    raise NotAFolder(errno.EAGAIN, f"{name!r} keeps changing")


@contextlib.contextmanager
def folder_fd(root: str, rel: str = "", *, create: bool = False):
    """An open descriptor of ``root/rel``; ``root`` is trusted, nothing below it is followed."""
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        for part in _parts(rel) if rel else []:
            child = _enter(fd, part, create)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def write_file(root: str, rel: str, data: bytes | str, *, durable: bool = False) -> None:
    """Replace ``root/rel`` atomically (its folders are made as needed); links are never written through.
    ``durable`` syncs the data to disk before the rename (records that mark something done)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    *folders, name = _parts(rel)
    with folder_fd(root, "/".join(folders), create=True) as parent:
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644, dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                if durable:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=parent)
            raise


def read_file(root: str, rel: str, limit: int = MAX_RECORD_BYTES) -> bytes:
    """The bytes of the regular file ``root/rel``; a link anywhere on the way is an ``OSError``."""
    *folders, name = _parts(rel)
    with folder_fd(root, "/".join(folders)) as parent:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), dir_fd=parent)
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise NotAFolder(errno.EINVAL, f"{rel} is not a regular file")
            if info.st_size > limit:
                raise NotAFolder(errno.EFBIG, f"{rel} is larger than {limit:,} bytes")
            return f.read(limit + 1)[:limit]


def is_plain_path(root: str, rel: str) -> bool:
    """Whether ``root/rel`` exists and no part of it below ``root`` is a link."""
    path = root
    for part in _parts(rel):
        path = os.path.join(path, part)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return False
        except OSError:
            return False
    return True


def remove_links(root: str) -> list[str]:
    """Remove every symbolic link inside ``root`` (never a link's target); returns their paths.

    Run before an experiment writes into its folder: code that writes summary files and plots
    by path then cannot be led out of the folder by a link planted there.
    """
    removed = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                removed.append(path)
                warn(f"a symbolic link in the experiment folder was removed (not followed): {path}")
    return removed


def unlinked(path: str) -> str:
    """``path``, after removing a symbolic link found there (a file written by path replaces it then)."""
    if os.path.islink(path):
        os.unlink(path)
        warn(f"a symbolic link in the experiment folder was removed (not followed): {path}")
    return path


def warn(message: str) -> None:
    print(f"agentos: warning: {message}", file=sys.stderr)
