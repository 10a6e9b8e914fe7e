"""Where a tune's study lives: Optuna's journal in the experiment folder (checked line by line before Optuna
reads it) or an allowlisted database URL; the folder's ``tune.json`` record; the seeded sampler."""

from __future__ import annotations

import json
import os
import time

from ..errors import UsageError
from ._prune import make_pruner

STORAGE_SCHEMES = ("postgresql", "postgresql+psycopg2", "postgresql+psycopg", "mysql", "mysql+pymysql", "sqlite")
JOURNAL = "study.journal"
TUNE_RECORD = "tune.json"


def _optuna():
    try:
        import optuna
    except ImportError:
        raise UsageError("tune needs Optuna: pip install 'agentos-core[tune]'") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def check_storage(url: str) -> str:
    """A database URL for Optuna's RDB storage: only the allowlisted schemes (one clear line otherwise)."""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme not in STORAGE_SCHEMES:
        raise UsageError(f"--storage {scheme or url!r}: give a database URL ({', '.join(STORAGE_SCHEMES[:1])}://"
                         f"user@host/db, mysql://..., sqlite:///file.db)")
    return url


def open_study(folder: str, storage: str | None = None, *, create: dict | None = None):
    """The study of a tune folder (``create``: its name and direction, for a new one)."""
    if storage is None:
        _check_journal(os.path.join(folder, JOURNAL))
    return _open_study(folder, storage, create)


def _check_journal(path: str) -> None:
    """Every line of a journal is a JSON object (else one line: Optuna would fail on it anywhere, later)."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return
    with f:
        for number, line in enumerate(f, 1):
            try:
                ok = isinstance(json.loads(line.decode("utf-8")), dict)
            except (UnicodeDecodeError, ValueError):
                ok = False
            if not ok:
                raise UsageError(f"{path}:{number}: damaged (not one of Optuna's journal lines of JSON); keep a "
                                 "copy, and remove the broken lines or start a new study")


def _open_study(folder: str, storage: str | None, create: dict | None):
    optuna = _optuna()
    if storage is None:
        from optuna.storages.journal import JournalFileBackend, JournalStorage

        backend = JournalFileBackend(os.path.join(folder, JOURNAL))
        storage_obj = JournalStorage(backend)
    else:
        storage_obj = check_storage(storage)
    record = create or read_record(folder)
    for attempt in range(5):
        try:
            return _open(optuna, record, storage_obj, create)
        except Exception as exc:
            if _made_at_once(exc) and attempt < 4:  # two drivers made the tables at once: the next try finds them
                time.sleep(0.5 * (attempt + 1))
                continue
            if isinstance(exc, ImportError):
                raise UsageError(f"--storage needs the database's driver (PostgreSQL: pip install psycopg2-binary "
                                 f"and postgresql+psycopg2://...): {exc}") from None
            if type(exc).__module__.startswith("sqlalchemy"):  # cannot connect, no such database, bad password
                raise UsageError(f"--storage: {str(exc).splitlines()[0]}") from None
            raise


# PostgreSQL's answers when two drivers create one schema at once: unique_violation (a catalog row),
# duplicate_table, duplicate_object (an enum type).
_RACE_CODES = frozenset({"23505", "42P07", "42710"})


def _made_at_once(exc: Exception) -> bool:
    if type(exc).__name__ == "IntegrityError":
        return True
    return getattr(getattr(exc, "orig", None), "pgcode", None) in _RACE_CODES


def _open(optuna, record: dict, storage_obj, create: dict | None):
    if create is None:
        try:
            return optuna.load_study(study_name=record["study"], storage=storage_obj)
        except KeyError:
            raise UsageError(f"no study {record['study']!r} in the storage (give its --storage)") from None
    return optuna.create_study(study_name=record["study"], storage=storage_obj, direction=record["direction"],
                               sampler=_sampler(optuna, record["sampler"], record.get("seed")),
                               pruner=make_pruner(optuna, record["pruner"]), load_if_exists=True)


def read_record(folder: str) -> dict:
    path = os.path.join(folder, TUNE_RECORD)
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"{folder}: not a tune folder (no {TUNE_RECORD}; run: agentos tune FILE)") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: unreadable: {exc}") from None
    keys = {"study": str, "direction": str, "agent": str, "environments": list, "settings": dict}
    if not isinstance(record, dict) or any(not isinstance(record.get(k), t) for k, t in keys.items()):
        raise UsageError(f"{path}: malformed tune record")
    return record


def _sampler(optuna, name: str, seed: int | None):
    return {"tpe": optuna.samplers.TPESampler, "random": optuna.samplers.RandomSampler,
            "qmc": optuna.samplers.QMCSampler}[name](seed=seed)
