"""The n-tuple network: indices, symmetries, search, checkpoints, settings, conformance."""

from __future__ import annotations

import numpy as np
import pytest
from agentos import testing
from agentos_env_2048 import Game2048Env, kernels
from agentos_policy_ntuple import NTuplePolicy, network

SMALL = "0 1 2 3; 4 5 6 7; 0 1 4 5"
TABLES = kernels.move_tables()


class TestConformance(testing.PolicyConformance):
    name = "ntuple"
    environment = "2048"
    settings = {"tuples": SMALL}


class TestConformanceExpectimax(testing.PolicyConformance):
    name = "ntuple"
    environment = "2048"
    settings = {"tuples": "0 1 2 3; 4 5 6 7", "depth": 2}


def random_boards(count: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [kernels.board_from_cells(rng.integers(0, 14, 16) * (rng.random(16) < 0.8)) for _ in range(count)]


def test_indices_read_the_tuple_cells_in_order():
    layout = network.make_layout([(5, 1, 2, 3), (15, 0)])
    out = np.zeros(16, np.int64)
    cells = np.arange(16) % 16
    board = kernels.board_from_cells(cells.reshape(4, 4))
    network.weight_indices(board, network.network(np.zeros(layout.size, np.float32), layout), out)
    assert out[0] == 5 + (1 << 4) + (2 << 8) + (3 << 12)  # identity symmetry, first tuple
    assert out[1] == layout.offsets[1] + 15 + (0 << 4)
    assert layout.size == 16**4 + 16**2 and not layout.default


def test_the_written_out_default_path_equals_the_generic_one():
    fast = network.make_layout(network.DEFAULT_TUPLES)
    generic = fast._replace(default=False)
    weights = np.random.default_rng(1).random(fast.size, dtype=np.float32)
    for board in random_boards(200):
        assert network.value(board, network.network(weights, fast)) == pytest.approx(
            network.value(board, network.network(weights, generic)), rel=1e-6
        )


def test_the_written_out_default_indices_equal_the_generic_ones_exactly():
    from agentos_policy_ntuple import _network

    fast = network.make_layout(network.DEFAULT_TUPLES)
    generic = fast._replace(default=False)
    weights = np.zeros(fast.size, np.float32)
    got, expected = np.zeros(32, np.uint64), np.zeros(32, np.uint64)
    for board in random_boards(2000):
        network.weight_indices(board, network.network(weights, fast), got)
        network.weight_indices(board, network.network(weights, generic), expected)
        assert got.tolist() == expected.tolist()
        # pext where the processor has a fast one (see _pext), shifts and masks elsewhere: the same indices
        assert [int(i) for i in _network.default_indices(board)] == [int(i) for i in _network._shifted_indices(board)]


def test_symmetric_boards_have_the_same_value():
    layout = network.make_layout(network.parse_tuples(SMALL))
    weights = np.random.default_rng(2).random(layout.size, dtype=np.float32)
    net = network.network(weights, layout)
    for board in random_boards(50, seed=3):
        values = {
            round(network.value(np.uint64(b), net), 3)
            for b in (board, kernels.transpose(board), kernels.mirror(board))
        }
        assert len(values) == 1


def _expectimax(board, net) -> int:
    """Depth-2 search written plainly: max over moves of points + E[spawn] max over moves."""
    best, best_value = -1, -np.inf
    for action in range(4):
        after, points = kernels.move(board, action, TABLES)
        if after == board:
            continue
        cells = [c for c in range(16) if not (int(after) >> (4 * c)) & 15]
        expected = 0.0
        for cell in cells:
            for tile, p in ((1, 0.9), (2, 0.1)):
                spawned = np.uint64(int(after) | (tile << (4 * cell)))
                replies = [
                    r_points + network.value(np.uint64(r_after), net)
                    for r_after, r_points in (kernels.move(spawned, a, TABLES) for a in range(4))
                    if r_after != spawned
                ]
                expected += p * max(replies, default=0.0) / len(cells)
        if points + expected > best_value:
            best, best_value = action, points + expected
    return best


def test_expectimax_depth_two_matches_a_plain_search():
    layout = network.make_layout(network.parse_tuples(SMALL))
    weights = np.random.default_rng(4).normal(size=layout.size).astype(np.float32) * 100
    net = network.network(weights, layout)
    for board in random_boards(30, seed=5):
        if kernels.has_legal_move(board):
            assert network.best_action(board, 2, net, TABLES) == _expectimax(board, net)


def test_decide_batch_equals_decide():
    env = Game2048Env()
    policy = NTuplePolicy(env.observation_space, env.action_space, tuples=SMALL)
    policy.weights[:] = np.random.default_rng(6).random(policy.weights.shape[0])
    observations = []
    observation, _ = env.reset(seed=0)
    for step in range(200):
        observations.append(observation)
        observation, _, terminated, _, _ = env.step(step % 4)
        if terminated:
            observation, _ = env.reset()
    batch = policy.decide_batch(np.stack(observations))
    assert batch.tolist() == [policy.decide(o) for o in observations]


def test_checkpoints_are_safetensors_sparse_or_dense_and_checked(tmp_path):
    from safetensors.numpy import load_file, save_file

    policy = NTuplePolicy(tuples=SMALL)
    policy.weights[[3, 70000]] = [1.5, -2.0]
    policy.save(str(tmp_path / "sparse"))
    assert set(load_file(str(tmp_path / "sparse"))) == {"tuples", "indices", "values"}
    policy.weights[:] = 0.25
    policy.weights[9] = 3.0
    policy.save(str(tmp_path / "dense"))
    assert set(load_file(str(tmp_path / "dense"))) == {"tuples", "weights"}
    for name in ("sparse", "dense"):
        again = NTuplePolicy(tuples=SMALL)
        again.load(str(tmp_path / name))
        assert again.weights[9] == (3.0 if name == "dense" else 0.0)
    with pytest.raises(ValueError, match="differ"):
        NTuplePolicy(tuples="0 1 2 3").load(str(tmp_path / "dense"))
    tensors = load_file(str(tmp_path / "sparse"))
    tensors["indices"][0] = 1 << 40
    save_file(tensors, str(tmp_path / "hostile"))
    with pytest.raises(ValueError, match="out of range"):
        NTuplePolicy(tuples=SMALL).load(str(tmp_path / "hostile"))


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"depth": 0}, "depth"),
        ({"depth": 4}, "depth"),
        ({"tuples": "0 1 1"}, "distinct"),
        ({"tuples": "0 1 16"}, "0-15"),
        ({"tuples": ";"}, "at least one"),
        ({"tuples": "0 1 2 3 4 5 6 7 8"}, "1-8"),
    ],
)
def test_bad_settings_are_clear(settings, message):
    with pytest.raises(ValueError, match=message):
        NTuplePolicy(**settings)


@pytest.mark.parametrize("name, valid, hostile", [
    ("depth", 2, 2.5), ("depth", "2", True), ("search_depth", 2.0, 2.5), ("search_depth", 1, True),
    ("cache_bits", 20, 20.7), ("cache_bits", "20", float("inf")), ("cache_bits", 20, float("nan")),
    ("downgrade_tile", 32768, 32768.5), ("downgrade_tile", 4, "4.0"), ("initial_value", 1, True),
    ("initial_value", "1.5", "lots"),
])
def test_numbers_that_int_would_truncate_are_refused_beside_a_valid_twin(name, valid, hostile):
    assert getattr(NTuplePolicy(tuples=SMALL, **{name: valid}), name) == float(valid)
    with pytest.raises(ValueError, match=f"{name} must be a"):
        NTuplePolicy(tuples=SMALL, **{name: hostile})


def test_refuses_boards_that_are_not_2048():
    from gymnasium import spaces

    with pytest.raises(ValueError, match="4x4"):
        NTuplePolicy(spaces.Box(0, 1, (3, 3)), spaces.Discrete(4))


def _saved(tmp_path, name: str, **tensors) -> str:
    from safetensors.numpy import save_file

    path = str(tmp_path / name)
    save_file(tensors, path)
    return path


def _tuples_table(tuples) -> np.ndarray:
    table = np.full((len(tuples), 8), -1, dtype=np.int8)
    for row, cells in enumerate(tuples):
        table[row, : len(cells)] = cells
    return table


# -- issue 18 point 10: weights are numbers
@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_are_refused_beside_a_finite_twin(tmp_path, layout, bad):
    policy = NTuplePolicy(tuples=SMALL)
    table = _tuples_table(policy.tuples)
    weights = np.full(policy.layout.size, 0.5, np.float32)
    indices = np.array([3, 70000], np.int64)

    def checkpoint(name, value):
        if layout == "dense":
            dense = weights.copy()
            dense[70000] = value
            return _saved(tmp_path, name, tuples=table, weights=dense)
        return _saved(tmp_path, name, tuples=table, indices=indices, values=np.array([1.0, value], np.float32))

    policy.load(checkpoint("finite", 2.0))  # the valid twin
    assert policy.weights[70000] == 2.0
    with pytest.raises(ValueError, match=r"not all finite numbers \(1 NaN or Inf\)"):
        NTuplePolicy(tuples=SMALL).load(checkpoint("hostile", bad))


# -- issue 18 point 18: checkpoint messages say what is wrong
def test_checkpoint_messages_name_the_problem(tmp_path):
    policy = NTuplePolicy(tuples=SMALL)
    table = _tuples_table(policy.tuples)
    size = policy.layout.size
    policy.load(_saved(tmp_path, "ok", tuples=table, weights=np.ones(size, np.float32)))  # valid twin
    with pytest.raises(ValueError, match=r"^checkpoint weights have dtype float16, expected float32$"):
        policy.load(_saved(tmp_path, "half", tuples=table, weights=np.ones(size, np.float16)))
    with pytest.raises(ValueError, match=r"shape \(5,\), expected \(" + str(size)):
        policy.load(_saved(tmp_path, "short", tuples=table, weights=np.ones(5, np.float32)))
    with pytest.raises(ValueError, match=r"tuples must be a 2-D integer table .* got shape \(12,\) dtype int8"):
        policy.load(_saved(tmp_path, "flat", tuples=table[:, :4].reshape(-1), weights=np.ones(size, np.float32)))
    with pytest.raises(ValueError, match=r"dtypes int64/float16, expected int64/float32"):
        one = np.array([1], np.int64)
        policy.load(_saved(tmp_path, "half-sparse", tuples=table, indices=one, values=np.ones(1, np.float16)))


def test_many_tuples_are_refused_before_they_are_built_beside_the_largest_allowed():
    from agentos_policy_ntuple._network import MAX_TUPLES

    assert len(NTuplePolicy(tuples="0;" * MAX_TUPLES).tuples) == MAX_TUPLES  # the valid twin
    with pytest.raises(ValueError, match=f"at most {MAX_TUPLES} tuples"):
        NTuplePolicy(tuples="0;" * (MAX_TUPLES + 1))
    with pytest.raises(ValueError, match="tuples text is too long"):  # 33 M tuples: 14 GB before the bound
        NTuplePolicy(tuples="0;" * 10_000_000)
    with pytest.raises(ValueError, match=f"at most {MAX_TUPLES} tuples"):
        NTuplePolicy(tuples=[(0,)] * 1_000_000)
    assert NTuplePolicy(tuples=[[0, 1], (2, 3)]).tuples == ((0, 1), (2, 3))
    with pytest.raises(ValueError, match="a tuple is a list of cells"):
        NTuplePolicy(tuples=[0, 1, 2])


def test_checkpoint_headers_are_checked_before_their_tensors_are_read(tmp_path):
    policy = NTuplePolicy(tuples=SMALL)
    table = _tuples_table(policy.tuples)
    ones = np.ones(policy.layout.size, np.float32)
    policy.load(_saved(tmp_path, "ok", tuples=table, weights=ones, junk=np.ones(9, np.float32)))  # valid twin
    rows = np.tile(table, (100_000, 1))  # 300,000 rows: tolist() of a million-row table takes GBs
    with pytest.raises(ValueError, match="checkpoint tuples holds 2,400,000 values, more than this policy's 2,048"):
        policy.load(_saved(tmp_path, "rows", tuples=rows, weights=ones))
    with pytest.raises(ValueError, match=r"checkpoint tuples \(\(0, 1, 2, 3\),\) differ"):
        policy.load(_saved(tmp_path, "one", tuples=table[:1], weights=ones))
    with pytest.raises(ValueError, match="checkpoint indices holds"):
        many = np.zeros(policy.layout.size + 1, np.int64)
        policy.load(_saved(tmp_path, "many", tuples=table, indices=many, values=np.ones(len(many), np.float32)))
    header = _saved(tmp_path, "header", tuples=table, weights=ones)
    data = bytearray(open(header, "rb").read())
    length = int.from_bytes(data[:8], "little")
    text = data[8 : 8 + length].decode().replace(f"[{policy.layout.size}]", f"[{1 << 40}]")
    with open(header, "wb") as out:  # a header claiming 4 TB of weights in a small file
        out.write(len(text.encode()).to_bytes(8, "little") + text.encode() + data[8 + length :])
    with pytest.raises(Exception, match="invalid shape"):  # safetensors checks a header against the file
        policy.load(header)


@pytest.mark.parametrize("tuples", [None, "0 1 2 3; 4 5 6 7"])  # the written-out path and the generic one
def test_value_at_and_add_at_work_on_one_stage_of_the_weights_without_slicing(tuples):
    from agentos_policy_ntuple.network import add, add_at, bounds_array, network, stage_base, value, value_at

    policy = NTuplePolicy(tuples=tuples, stage_tiles="2048")
    size = policy.layout.size
    rng = np.random.default_rng(3)
    policy.weights[:] = rng.normal(size=policy.weights.size).astype(np.float32)
    net = network(policy.weights, policy.layout)
    board = np.uint64(0x0123_4567_89AB_0123)  # largest tile 2**11: stage 1 of "2048"
    assert stage_base(board, bounds_array(policy.stage_bounds), size) == size
    second = network(policy.weights[size:].copy(), policy.layout)
    assert value_at(board, net, size) == pytest.approx(value(board, second), rel=1e-9)
    before = policy.weights.copy()
    add_at(board, 0.5, net, size)
    changed = np.flatnonzero(policy.weights != before)
    assert changed.size and changed.min() >= size  # only the second stage's weights moved
    add(board, 0.5, second)  # the same update on a copy of the slice
    assert np.array_equal(policy.weights[size:], second[1])
    assert value_at(board, net, size) == value(board, second)
