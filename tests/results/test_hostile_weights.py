"""Weights are data: hostile safetensors files are refused with one line, each beside a valid twin."""

from __future__ import annotations

import json
import pickle
import struct

import numpy as np
import pytest
from agentos.errors import UsageError
from agentos.results._weights import MAX_HEADER, QUANTIZED_KEY, check_weights, dequantized, quantize
from safetensors.numpy import save_file


def _raw(path, header: dict, data: bytes) -> str:
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return str(path)


def _refused(path, expected: str, **kwargs) -> None:
    with pytest.raises(UsageError) as caught:
        check_weights(path, **kwargs)
    message = str(caught.value)
    assert expected in message and "\n" not in message, message


@pytest.fixture
def valid(tmp_path) -> str:
    path = tmp_path / "valid.safetensors"
    save_file({"values": np.arange(6, dtype=np.float32).reshape(2, 3), "keys": np.arange(2, dtype=np.int64)},
              str(path), metadata={"format": "x"})
    return str(path)


def test_valid_twin_passes(valid):
    header = check_weights(valid)
    assert header["values"]["dtype"] == "F32" and header["__metadata__"] == {"format": "x"}


def test_a_pickle_is_refused(tmp_path):
    path = tmp_path / "w.safetensors"
    path.write_bytes(pickle.dumps({"values": np.zeros(3)}))
    _refused(str(path), "refused")


@pytest.mark.parametrize(
    ("header", "data", "expected"),
    [
        ({"t": {"dtype": "O", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8, "dtype 'O'"),
        ({"t": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4, "malformed shape"),
        ({"t": {"dtype": "F32", "shape": [4], "data_offsets": [0, 4]}}, b"\0" * 4, "do not match"),
        ({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
          "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}}, b"\0" * 6, "overlap"),
        ({"t": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}}, b"\0" * 9, "does not end"),
        ({"t": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}, "__metadata__": {"k": 1}}, b"\0" * 4,
         "__metadata__"),
        ([1, 2], b"", "must be an object"),
    ],
)
def test_malformed_headers_are_refused(tmp_path, header, data, expected):
    _refused(_raw(tmp_path / "w.safetensors", header, data), expected)


def test_header_length_and_file_size_are_bounded(tmp_path, valid):
    path = tmp_path / "huge.safetensors"
    path.write_bytes(struct.pack("<Q", MAX_HEADER + 1) + b"{" * 64)
    _refused(str(path), "a header of")
    path.write_bytes(struct.pack("<Q", 10**15) + b"{}")
    _refused(str(path), "a header of")
    _refused(valid, "over the per-file limit", max_bytes=50)
    assert check_weights(valid, max_bytes=10_000)


def test_quantized_round_trip_and_malformed_quantization_metadata(tmp_path, valid):
    small = str(tmp_path / "q.safetensors")
    assert quantize(valid, small) == {"values": {"dtype": "float32", "scheme": "float16", "shape": [2, 3]}}
    header = check_weights(small)
    assert header["values"]["dtype"] == "F16" and header["keys"]["dtype"] == "I64"
    from safetensors.numpy import load_file

    back = load_file(dequantized(small, header, str(tmp_path)))
    assert back["values"].dtype == np.float32 and back["values"].tolist() == [[0, 1, 2], [3, 4, 5]]
    bad = _raw(tmp_path / "bad.safetensors",
               {"values": {"dtype": "F16", "shape": [1], "data_offsets": [0, 2]},
                "__metadata__": {QUANTIZED_KEY: json.dumps({"values": "object"})}}, b"\0\0")
    with pytest.raises(UsageError, match="malformed"):
        dequantized(bad, check_weights(bad), str(tmp_path))
    big = tmp_path / "big.safetensors"
    save_file({"values": np.array([1e6], dtype=np.float32)}, str(big))
    with pytest.raises(UsageError, match="beyond float16"):
        quantize(str(big), str(tmp_path / "never.safetensors"))


def test_int8_round_trip_is_within_one_step_of_each_blocks_scale(tmp_path):
    from agentos.results._weights import INT8_BLOCK
    from safetensors.numpy import load_file

    rng = np.random.default_rng(0)
    weights = (rng.standard_normal(INT8_BLOCK * 2 + 5) * np.repeat([1.0, 100.0, 0.01], [INT8_BLOCK, INT8_BLOCK, 5]))
    source, small = str(tmp_path / "w.safetensors"), str(tmp_path / "q.safetensors")
    save_file({"weights": weights.astype(np.float32), "tuples": np.arange(4, dtype=np.int8)}, source)
    quantize(source, small, "int8")
    header = check_weights(small)
    assert header["weights"]["dtype"] == "I8" and header["weights::int8_scales"]["shape"] == [3]
    back = load_file(dequantized(small, header, str(tmp_path)))
    assert set(back) == {"weights", "tuples"} and back["weights"].dtype == np.float32
    blocks = [weights[:INT8_BLOCK], weights[INT8_BLOCK:2 * INT8_BLOCK], weights[2 * INT8_BLOCK:]]
    step = np.repeat([np.abs(b).max() / 127 for b in blocks], [INT8_BLOCK, INT8_BLOCK, 5])
    assert (np.abs(back["weights"] - weights) <= step * 0.51).all()  # each value within half a step
    tensors = load_file(small)
    tensors["weights::int8_scales"] = tensors["weights::int8_scales"][:2]  # a block's scale missing
    from safetensors import safe_open

    with safe_open(small, framework="numpy") as f:
        meta = f.metadata()
    bad = str(tmp_path / "bad.safetensors")
    save_file(tensors, bad, metadata=meta)
    with pytest.raises(UsageError, match="scales are missing or malformed"):
        dequantized(bad, check_weights(bad), str(tmp_path))


def test_weights_of_the_wrong_dtype_or_shape_for_the_policy_are_refused(tmp_path):
    """The policy's own load checks what it expects: an n-tuple network of float64 or of another size."""
    from importlib.metadata import version

    from agentos.results import build_policy
    from gymnasium import spaces

    spec = {"base": {"name": "ntuple", "package": "agentos-policy-ntuple", "version": version("agentos-policy-ntuple")},
            "settings": {"tuples": "0 1"}}
    box, moves = spaces.Box(0, 17, (4, 4), np.uint8), spaces.Discrete(4)
    tuples = np.array([[0, 1, -1, -1, -1, -1, -1, -1]], dtype=np.int8)
    good = str(tmp_path / "good.safetensors")
    save_file({"tuples": tuples, "weights": np.ones(256, dtype=np.float32)}, good)
    assert build_policy(spec, good, box, moves).weights.sum() == 256  # the valid twin
    for name, weights in (("f64", np.ones(256, dtype=np.float64)), ("short", np.ones(255, dtype=np.float32))):
        path = str(tmp_path / f"{name}.safetensors")
        save_file({"tuples": tuples, "weights": weights}, path)
        with pytest.raises(UsageError, match="do not fit the policy"):
            build_policy(spec, path, box, moves)
    wrong = {**spec, "base": {**spec["base"], "version": "0.0.1"}}
    with pytest.raises(UsageError, match="==0.0.1"):
        build_policy(wrong, good, box, moves)


def test_generated_entry_point_holds_any_spec_as_data(tmp_path):
    """Quotes and backslashes in names or settings cannot end the docstring or the literal: SPEC round-trips."""
    import ast

    from agentos.results._wheel import init_source

    spec = {"base": {"name": "q", "package": 'p\\"""', "version": '1"""\\'}, "settings": {"k": '"""\\n; import os'}}
    source = init_source('a summary \\""" import os', spec)
    tree = ast.parse(source)
    assigned = [node for node in tree.body if isinstance(node, ast.Assign)]
    assert [t.id for node in assigned for t in node.targets] == ["SPEC"]
    literal = assigned[0].value.args[0].value  # json.loads(<one string constant>)
    assert json.loads(literal) == spec
    assert [type(node).__name__ for node in tree.body] == ["Expr", "Import", "Assign", "FunctionDef"]


def test_int8_block_size_is_recorded_legacy_files_read_as_4096_and_odd_blocks_refused(tmp_path):
    """New files say their block size; a file made before it was recorded (blocks of 4,096, no
    ``block``) still reads back; a declared block that is not a power of 2 in 16..65,536 is refused."""
    from agentos.results._weights import INT8_BLOCK, LEGACY_INT8_BLOCK, QUANTIZED_KEY, SCALES
    from safetensors.numpy import load_file

    rng = np.random.default_rng(1)
    weights = rng.standard_normal(LEGACY_INT8_BLOCK + 7).astype(np.float32)
    source, small = str(tmp_path / "w.safetensors"), str(tmp_path / "q.safetensors")
    save_file({"weights": weights}, source)
    quantize(source, small, "int8")
    header = check_weights(small)
    assert json.loads(header["__metadata__"][QUANTIZED_KEY])["weights"]["block"] == INT8_BLOCK == 256
    assert np.abs(load_file(dequantized(small, header, str(tmp_path)))["weights"] - weights).max() < 0.05
    # a legacy file, written as core 0.5.3 did: blocks of 4,096 and no "block" in its entry
    blocks = 2
    padded = np.zeros(blocks * LEGACY_INT8_BLOCK, np.float32)
    padded[: weights.size] = weights
    scales = (np.abs(padded.reshape(blocks, -1)).max(axis=1) / 127).astype(np.float32)
    stored = np.rint(padded.reshape(blocks, -1) / scales[:, None]).astype(np.int8).reshape(-1)
    legacy = str(tmp_path / "legacy.safetensors")
    entry = {"dtype": "float32", "scheme": "int8", "shape": [weights.size]}
    save_file({"weights": stored, SCALES.format("weights"): scales}, legacy,
              metadata={QUANTIZED_KEY: json.dumps({"weights": entry})})
    back = load_file(dequantized(legacy, check_weights(legacy), str(tmp_path)))["weights"]
    assert np.abs(back - weights).max() <= scales.max() * 0.51
    for block in (0, 3, 100, 1 << 20, "256", True, 8):
        odd = str(tmp_path / f"odd{block}.safetensors")
        save_file({"weights": stored, SCALES.format("weights"): scales}, odd,
                  metadata={QUANTIZED_KEY: json.dumps({"weights": {**entry, "block": block}})})
        with pytest.raises(UsageError, match="malformed"):
            dequantized(odd, check_weights(odd), str(tmp_path))


@pytest.mark.parametrize("shape", [[2**32, 2**32], [2**70], [2**63], [-1], [True, 2], [2.0], [1] * 9, "6"])
@pytest.mark.parametrize("scheme", ["float16", "int8"])
def test_quantized_shapes_that_overflow_int64_are_one_line_beside_a_valid_twin(tmp_path, shape, scheme):
    """The declared shape is multiplied in Python ints, bounded by the file's bytes, before numpy sees it."""
    if scheme == "float16":
        tensors, extra = {"values": np.arange(6, dtype=np.float16)}, {}
    else:
        tensors = {"values": np.arange(256, dtype=np.int8), "values::int8_scales": np.ones(1, dtype=np.float32)}
        extra = {"block": 256}

    def written(name, declared):
        path = str(tmp_path / name)
        entry = {"dtype": "float32", "scheme": scheme, "shape": declared, **extra}
        save_file(tensors, path, metadata={QUANTIZED_KEY: json.dumps({"values": entry})})
        return path

    from safetensors.numpy import load_file

    twin = written("twin.safetensors", [2, 3])
    assert load_file(dequantized(twin, check_weights(twin), str(tmp_path)))["values"].shape == (2, 3)
    hostile = written("hostile.safetensors", shape)
    with pytest.raises(UsageError) as caught:
        dequantized(hostile, check_weights(hostile), str(tmp_path))
    assert "metadata is malformed" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("shape", [[2**32, 2**32], [2**70], [2**40, 2**40, 0]])
def test_header_shapes_past_the_file_size_are_one_line(tmp_path, shape):
    path = _raw(tmp_path / "huge.safetensors", {"t": {"dtype": "U8", "shape": shape, "data_offsets": [0, 4]}},
                b"\0" * 4)
    _refused(path, "malformed shape")
    twin = _raw(tmp_path / "twin.safetensors", {"t": {"dtype": "U8", "shape": [2, 2], "data_offsets": [0, 4]}},
                b"\0" * 4)
    assert check_weights(twin)["t"]["shape"] == [2, 2]
