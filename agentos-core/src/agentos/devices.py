"""``device = auto|cpu|cuda|cuda:N``: the device setting shared by torch components.

Torch is imported only when a device is resolved, so components can validate the setting early.
"""

from __future__ import annotations

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
