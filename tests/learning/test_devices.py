"""The ``device`` setting shared by torch components."""

from __future__ import annotations

import pytest
import torch
from agentos.devices import check_device, resolve_device


def test_auto_is_cpu_without_cuda():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert resolve_device(None).type == expected
    assert resolve_device("CPU").type == "cpu"


@pytest.mark.parametrize("value", ["cpu", "cuda", "cuda:1", "auto", " Auto "])
def test_valid_settings(value):
    assert check_device(value) == value.strip().lower()


@pytest.mark.parametrize("value", ["gpu", "cuda:", "cuda:x", "tpu", 3])
def test_invalid_settings_are_clear(value):
    with pytest.raises(ValueError, match="device must be auto, cpu, cuda or cuda:N"):
        check_device(value)


def test_cuda_is_used_when_present_and_an_error_when_absent():
    if torch.cuda.is_available():
        assert resolve_device("cuda:0").type == "cuda"
    else:
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda:0")
