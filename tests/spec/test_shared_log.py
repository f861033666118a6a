"""SharedLog has the value semantics of the tuple it replaces in trace validation (spec.shared_log).

Random programs of the spec's log operations (append, append a suffix of another log, take a
prefix) run on tuples and on shared logs side by side; every observation must agree, and equal
shared logs must hash equally whichever buffers they live in."""

from __future__ import annotations

import pickle

from hypothesis import given, settings
from hypothesis import strategies as st
from isr.spec.log import epoch_start, epoch_starts
from isr.spec.protocols import KIP_101, KIP_279, KIP_320
from isr.spec.shared_log import SharedLog

# An op: (kind, which log, argument). kinds: 0 append entry, 1 prefix, 2 append another's suffix.
ops = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 3), st.integers(0, 4), st.integers(0, 3)),
    max_size=60,
)


def _run(program: list[tuple[int, int, int, int]]) -> tuple[list[tuple], list[SharedLog]]:
    tups: list[tuple] = [()] * 4
    shared = [SharedLog.of() for _ in range(4)]
    epoch = 1
    for kind, i, arg, j in program:
        if kind == 0:  # a leader appends a record in a non-decreasing epoch
            epoch += arg == 4
            e = (arg, epoch)
            tups[i] = tups[i] + (e,)
            shared[i] = shared[i] + (e,)
        elif kind == 1:  # truncation, crash, restart: a prefix
            k = len(tups[i]) * arg // 4
            tups[i] = tups[i][:k]
            shared[i] = shared[i][:k]
        else:  # a follower fetches the leader's suffix from its own LEO
            o = min(len(tups[i]), len(tups[j]))
            tups[i] = tups[i][:o] + tups[j][o:]
            shared[i] = shared[i][:o] + shared[j][o:]
    return tups, shared


@settings(max_examples=300, deadline=None)
@given(ops)
def test_shared_log_behaves_as_a_tuple(program):
    tups, shared = _run(program)
    for t, s in zip(tups, shared, strict=True):
        assert len(s) == len(t) and bool(s) == bool(t)
        assert tuple(s) == t and s == t and list(reversed(s)) == list(reversed(t))
        assert [s[k] for k in range(-len(t), len(t))] == [t[k] for k in range(-len(t), len(t))]
        assert s[1:] == t[1:] and s[: len(t) // 2] == t[: len(t) // 2]
        assert epoch_starts(s) == epoch_starts(t) and epoch_starts(s, 9) == epoch_starts(t, 9)
        for ep in range(0, 8):
            assert epoch_start(s, ep) == epoch_start(t, ep)
        assert pickle.loads(pickle.dumps(s)) == s
    for a, sa in zip(tups, shared, strict=True):
        for b, sb in zip(tups, shared, strict=True):
            assert (sa == sb) == (a == b)
            if a == b:
                assert hash(sa) == hash(sb)
            for proto in (KIP_101, KIP_279, KIP_320):  # the epoch lookups of each release
                assert proto.truncation_offset(sa, 1, sb, 8) == proto.truncation_offset(a, 1, b, 8)


def test_a_follower_shares_its_leaders_buffer_and_a_divergent_log_leaves_it():
    leader = SharedLog.of([(1, 1), (2, 1), (3, 1)])
    follower = leader[:1] + leader[1:]
    assert follower == leader and follower._b is leader._b  # copied entries are shared
    old = leader[:2]
    new_leader = old + ((9, 2),)  # a new leader writes over the old leader's tail
    assert new_leader._b is not leader._b and list(new_leader) == [(1, 1), (2, 1), (9, 2)]
    assert list(leader) == [(1, 1), (2, 1), (3, 1)]  # the old value is unchanged
    assert new_leader != leader and hash(new_leader) != hash(leader)
    with_tip = leader + ((4, 1),)  # the buffer's end: appended in place
    assert with_tip._b is leader._b and len(leader) == 3 and len(with_tip) == 4
