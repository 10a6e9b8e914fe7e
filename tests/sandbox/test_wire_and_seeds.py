"""The sandbox pipe's arrays and the policy's seeds, each hostile case beside its valid twin.

An array frame whose ``.npy`` header claims more bytes than the frame holds is refused before anything
is allocated (a policy could otherwise make the verifier's side allocate 96 GiB and die); in a
verification the policy is seeded with an HMAC of each episode's seed under a key it never sees, so it
cannot rebuild the environment's randomness (in ``evaluate --isolated`` it gets the seeds themselves,
so the games are the in-process ones).
"""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
from agentos.sandbox._remote import RemotePolicy
from agentos.sandbox._wire import WireError, recv_array, send_array


def _frame(header: dict, body: bytes = b"") -> io.BytesIO:
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, header)
    payload = out.getvalue() + body
    return io.BytesIO(struct.pack(">IB", len(payload), ord("A")) + payload)


def test_a_plain_array_crosses_the_pipe():
    sent = io.BytesIO()
    send_array(sent, np.arange(12, dtype=np.float32).reshape(3, 4))
    sent.seek(0)
    got = recv_array(sent)
    assert got.dtype == np.float32 and got.shape == (3, 4) and got[2, 3] == 11


@pytest.mark.parametrize("shape", [(12 * 2**30,), (2**20, 2**20), (4,)])
def test_a_header_claiming_more_than_the_frame_holds_is_refused_unallocated(shape):
    frame = _frame({"descr": "<i8", "fortran_order": False, "shape": shape}, b"\0" * 8)
    with pytest.raises(WireError, match="array header claiming"):
        recv_array(frame)


def test_an_object_array_header_is_refused():
    with pytest.raises(WireError, match="not a numeric array"):
        recv_array(_frame({"descr": "|O", "fortran_order": False, "shape": (1,)}, b"\0" * 8))


def _seeder(key: bytes | None) -> RemotePolicy:
    remote = object.__new__(RemotePolicy)  # only the seed derivation: no process is started
    remote._seed_key = key
    return remote


def test_a_verification_never_tells_the_policy_the_environment_seed():
    open_, keyed, other = _seeder(None), _seeder(b"k" * 16), _seeder(b"j" * 16)
    seeds = range(1000, 1100)
    assert [open_._policy_seed(s) for s in seeds] == list(seeds)  # evaluate --isolated: the seeds themselves
    derived = [keyed._policy_seed(s) for s in seeds]
    assert derived == [keyed._policy_seed(s) for s in seeds]  # one key: the same policy seed per episode
    assert not set(derived) & set(seeds) and len(set(derived)) == len(derived)
    assert all(0 <= d < 2**32 for d in derived)
    assert derived != [other._policy_seed(s) for s in seeds]  # another verification: other policy seeds
