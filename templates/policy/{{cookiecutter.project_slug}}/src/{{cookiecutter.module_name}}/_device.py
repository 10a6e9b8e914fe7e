"""The ``device`` setting: ``auto``, ``cpu``, ``cuda`` or ``cuda:N``."""

from __future__ import annotations

import re

import torch

_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")


def resolve_device(device: str = "auto") -> torch.device:
    """``auto`` is CUDA when it is available and the CPU otherwise; the others are taken as given."""
    if not _DEVICE.match(device):
        raise ValueError(f"device must be auto, cpu, cuda or cuda:N, got {device!r}")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)
