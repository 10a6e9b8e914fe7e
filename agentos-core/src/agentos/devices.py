"""``device = auto|cpu|cuda|cuda:N`` and ``threads = N``: the settings shared by torch components.

Torch is imported only when a device is resolved, so components can validate the settings early;
:func:`use_torch_threads` (one CPU thread per process unless asked otherwise) never imports it.
"""

from __future__ import annotations

import os
import re

_DEVICE_RE = re.compile(r"^(auto|cpu|cuda|cuda:\d+|mps)$")


def check_device(setting: str | None) -> str:
    """Validate a device setting without importing torch; returns it normalised (lower case)."""
    text = "auto" if setting is None else str(setting).strip().lower()
    if not _DEVICE_RE.match(text):
        raise ValueError(f"device must be auto, cpu, cuda or cuda:N, not {setting!r}")
    return text


def resolve_device(setting: str | None = "auto"):
    """A ``torch.device``: ``auto`` is CUDA when available, else the CPU.

    Asking for CUDA on a machine without it is an error, not a silent fallback.
    """
    import torch

    text = check_device(setting)
    if text == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if text.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"device {text!r} was asked for but CUDA is not available (use device = auto or cpu)")
        index = int(text.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise ValueError(f"device {text!r}: only {torch.cuda.device_count()} CUDA device(s) here")
    return torch.device(text)


# --- CPU threads -------------------------------------------------------------------------------------
#: What a process's math libraries read when they start: torch (OpenMP), MKL and OpenBLAS (numpy).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
MAX_THREADS = 1024


def check_threads(setting) -> int | None:
    """Validate a thread count (``[agentos] threads``, ``--threads``, a component's ``threads``)
    without importing torch: None (not set) or an integer from 1 to 1024."""
    if setting is None:
        return None
    if isinstance(setting, bool) or not isinstance(setting, int) or not 1 <= setting <= MAX_THREADS:
        raise ValueError(f"threads must be an integer from 1 to {MAX_THREADS}, not {setting!r}")
    return setting


def _torch_default() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def use_torch_threads(threads: int | None = None) -> int | None:
    """The CPU threads of torch (and numpy's BLAS) in this process: one unless asked otherwise.

    torch starts one thread per core, which oversubscribes a small or shared machine (a small
    network trains many times faster with one). Call this before a torch component is built:

    - ``threads`` given (a setting): that many, from now on in this process and its children;
    - else, when ``$OMP_NUM_THREADS`` is set (by the user, or by an earlier call with ``threads``):
      nothing changes;
    - else one thread, unless torch is already imported and runs a count set with
      ``torch.set_num_threads`` (one other than its default), which is kept.

    Returns the count now in force, or None when it was left to ``$OMP_NUM_THREADS`` or to torch.
    It never imports torch: it sets ``OMP_NUM_THREADS`` (read when torch starts) and calls
    ``torch.set_num_threads`` only when torch is already imported.
    """
    import sys

    threads = check_threads(threads)
    torch = sys.modules.get("torch")
    if threads is None:
        if os.environ.get("OMP_NUM_THREADS"):
            return None
        if torch is not None and torch.get_num_threads() != _torch_default():
            return None
        threads = 1
        for name in THREAD_VARIABLES:
            os.environ.setdefault(name, "1")
    else:
        for name in THREAD_VARIABLES:
            os.environ[name] = str(threads)
    if torch is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads
