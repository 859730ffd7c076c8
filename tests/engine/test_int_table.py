"""IntTable (the lock-step algorithms' int64 hash table) answers as a dict does: keys that
are there and keys that are not, many or few at once, crowded tables with long probe chains."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.engine.int_table import FEW_KEYS, MISSING, IntTable


@pytest.mark.parametrize("room", [1, 2, 4])
@pytest.mark.parametrize("queries", [1, 37, FEW_KEYS, FEW_KEYS + 1, 5 * FEW_KEYS, 60_000])
def test_lookups_equal_a_dict(room: int, queries: int) -> None:
    rng = np.random.default_rng(room * 1000 + queries)
    keys = rng.choice(10**12, 20_000, replace=False).astype(np.int64)
    values = rng.integers(0, 2**31 - 1, keys.size)
    table = IntTable(keys, values, room=room)
    expected = dict(zip(keys.tolist(), values.tolist(), strict=True))
    asked = np.concatenate([rng.choice(keys, queries // 2 + 1),
                            rng.integers(0, 10**12, queries // 2)])
    rng.shuffle(asked)
    got = table.get(asked).tolist()
    assert got == [expected.get(k, MISSING) for k in asked.tolist()]


def test_clustered_keys_long_probe_chains() -> None:
    """Keys that hash to the same few slots: chains far longer than a round or two."""
    base = IntTable(np.array([1], np.int64), np.array([1], np.int64))
    keys = np.arange(1, 300_000, dtype=np.int64)
    home = base._hash(keys)
    crowded = keys[home == home[0]][:40]  # 40 keys with one home slot
    table = IntTable(crowded, crowded * 3)
    assert table._reach >= 30
    asked = np.concatenate([crowded, crowded + 1_000_000])
    expected = [int(k) * 3 for k in crowded] + [MISSING] * len(crowded)
    assert table.get(asked).tolist() == expected
    assert table.get(crowded[:1]).tolist() == [int(crowded[0]) * 3]


def test_empty_table() -> None:
    table = IntTable(np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert table.get(np.array([0, 5, 2**40], np.int64)).tolist() == [MISSING] * 3


def test_added_keys_grow_the_table_and_answer_as_a_dict() -> None:
    rng = np.random.default_rng(7)
    table = IntTable(np.zeros(0, np.int64), np.zeros(0, np.int64))
    expected: dict[int, int] = {}
    for size in [1, 5, 100, 3_000, 40_000]:  # each add more than doubles the table
        keys = rng.choice(10**12, size, replace=False).astype(np.int64)
        keys = keys[[k not in expected for k in keys.tolist()]]
        values = rng.integers(0, 2**31 - 1, keys.size)
        table.add(keys, values)
        expected.update(zip(keys.tolist(), values.tolist(), strict=True))
        assert len(table) == len(expected)
        asked = np.concatenate([np.array(list(expected), np.int64),
                                rng.integers(10**12, 2 * 10**12, 500)])
        assert table.get(asked).tolist() == [expected.get(k, MISSING) for k in asked.tolist()]


def test_a_table_rebuilt_from_its_state_finds_the_same_values_and_still_grows() -> None:
    rng = np.random.default_rng(7)
    keys = rng.choice(1 << 40, 5000, replace=False).astype(np.int64)
    values = rng.integers(0, 1 << 30, 5000)
    table = IntTable(keys, values, room=4)
    again = IntTable.from_state(table.state())
    probe = np.concatenate((keys, keys + (1 << 41)))
    assert np.array_equal(again.get(probe), table.get(probe))
    assert len(again) == len(table)
    more = np.arange(1 << 42, (1 << 42) + 30000, dtype=np.int64)
    again.add(more, more & 0xFFFF)  # (its arrays are its own: it grows)
    assert np.array_equal(again.get(more), more & 0xFFFF)
    assert np.array_equal(again.get(keys), values.astype(np.int32))


def test_a_state_that_is_no_table_is_refused() -> None:
    room, size, reach, keys, values = IntTable(np.arange(3), np.arange(3)).state()
    with pytest.raises(ValueError):
        IntTable.from_state((room, size, reach, keys[:-8], values[:-4]))


def test_adds_into_a_big_table_reuse_its_scratch_and_answer_as_a_dict() -> None:
    """Many small adds into one table (its scratch array of claims kept from one add to the
    next, its stale entries never read), keys crowding the same home slots across adds."""
    rng = np.random.default_rng(11)
    first = rng.choice(10**12, 50_000, replace=False).astype(np.int64)
    table = IntTable(first, np.arange(first.size))
    expected = dict(zip(first.tolist(), range(first.size), strict=True))
    assert table._claims is None  # (a table nobody adds to keeps no scratch)
    slots = len(table._keys)
    candidates = np.arange(10**13, 10**13 + 400_000, dtype=np.int64)
    home = table._hash(candidates)
    crowded = candidates[np.isin(home, home[:50])]  # ~50 home slots, several keys each
    batches = [*np.array_split(crowded, 7), rng.choice(10**12, 300).astype(np.int64) + 10**12]
    for batch in batches:
        values = rng.integers(0, 2**31 - 1, batch.size)
        table.add(batch, values)
        expected.update(zip(batch.tolist(), values.tolist(), strict=True))
    assert len(table._keys) == slots and table._claims is not None  # (no growth: reused)
    asked = np.array([*expected, 7, 8, 9], np.int64)
    assert table.get(asked).tolist() == [expected.get(k, MISSING) for k in asked.tolist()]


def _keys_at_homes(homes: list[int], bits: int) -> np.ndarray:
    """Keys whose home slot in a table of ``2 ** bits`` slots is each of ``homes`` (the
    Fibonacci multiplier is odd: its inverse mod 2**64 maps a hash back to a key)."""
    golden = 0x9E3779B97F4A7C15
    inverse = pow(golden, -1, 1 << 64)
    out = [((((h << (64 - bits)) + k) * inverse) % (1 << 64)) for k, h in enumerate(homes)]
    return np.array(out, np.uint64).view(np.int64)


@pytest.mark.parametrize("grown", [False, True])
def test_keys_that_wrap_around_keep_every_probe_chain_unbroken(grown: bool) -> None:
    """Keys crowding the last slots of a fresh table (and of a grown one) wrap around to
    the first ones, where other keys have homes; each key is found, and every slot between
    a key's home and its slot is taken (as linear probing needs: a lookup stops at an empty
    slot)."""
    bits = 8 if grown else 7  # 64 keys at room 2: 128 slots; grown to a load of 1/4
    last = (1 << bits) - 1
    homes = ([last] * 12 + list(range(last - 9, last)) * 2 + [0, 0, 1, 2, 2, 2, 5]
             + list(range(40, 64)))
    keys = _keys_at_homes(homes, bits)
    values = np.arange(len(keys)) * 7
    if grown:
        table = IntTable(keys[:20], values[:20])
        table.add(keys[20:], values[20:])
    else:
        table = IntTable(keys, values)
    assert len(table._keys) == 1 << bits
    assert table._hash(keys).tolist() == homes
    assert table.get(keys).tolist() == values.tolist()
    others = _keys_at_homes([last, 0, 1, 3, 6, 64], bits) + 1_000_003
    assert table.get(others).tolist() == [MISSING] * len(others)
    slot_of = {int(k): s for s, k in enumerate(table._keys.tolist()) if k != MISSING}
    for key, home in zip(keys.tolist(), homes, strict=True):
        distance = (slot_of[key] - home) % (1 << bits)
        assert distance <= table._reach
        chain = [(home + d) % (1 << bits) for d in range(distance)]
        assert all(table._keys[s] != MISSING for s in chain)
    assert sum(slot_of[key] < 40 for key in keys[:12].tolist()) >= 8  # (they wrapped around)


@pytest.mark.parametrize("clustered", [False, True])
def test_one_key_lookups_equal_the_array_lookups_through_growth_and_pickling(clustered) -> None:
    """:meth:`IntTable.get_one` (a Python probe over views of the slots) answers as
    :meth:`IntTable.get` for keys in and out of the table, long probe chains included,
    after keys are added (the slots grow: its views must follow) and after pickling."""
    import pickle

    rng = np.random.default_rng(7)
    keys = (np.arange(0, 40_000, 4, dtype=np.int64) * (1 << 20) if clustered
            else rng.choice(1 << 40, 10_000, replace=False).astype(np.int64))
    table = IntTable(keys[:6000], np.arange(6000, dtype=np.int32))
    probes = np.concatenate([keys, rng.integers(0, 1 << 40, 2000)])
    assert [table.get_one(int(k)) for k in probes] == table.get(probes).tolist()
    table.get_one(int(keys[0]))  # (views made before the table grows)
    table.add(keys[6000:], np.arange(6000, len(keys), dtype=np.int32))
    expected = table.get(probes).tolist()
    assert expected[:len(keys)] == list(range(len(keys)))
    assert [table.get_one(int(k)) for k in probes] == expected
    again = pickle.loads(pickle.dumps(table))
    assert [again.get_one(int(k)) for k in probes] == expected
    assert again.get(probes).tolist() == expected
    assert IntTable(np.zeros(0, np.int64), np.zeros(0, np.int32)).get_one(5) == MISSING


def test_reserved_room_takes_keys_without_growing_and_keeps_what_it_held() -> None:
    rng = np.random.default_rng(9)
    keys = np.unique(rng.integers(0, 1 << 60, 6000))
    rng.shuffle(keys)
    table = IntTable(keys[:100], np.arange(100, dtype=np.int32))
    table.reserve(len(keys))
    slots = table._keys
    assert len(slots) >= 2 * len(keys)
    table.add(keys[100:], np.arange(100, len(keys), dtype=np.int32))
    assert table._keys is slots and len(table) == len(keys)
    probe = np.concatenate([keys, keys + 1])
    want = {int(k): v for v, k in enumerate(keys)}
    assert table.get(probe).tolist() == [want.get(int(k), MISSING) for k in probe]
    assert [table.get_one(int(k)) for k in keys[:50]] == list(range(50))
    table.reserve(10)  # (room enough already: nothing changes)
    assert table._keys is slots
