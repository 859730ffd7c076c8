"""A read-only hash table from int64 keys to int32 values, looked up for whole arrays.

Linear probing at load factor <= 1/2 (or lower: ``room``), Fibonacci hashing, filled and
probed with numpy: one lookup round per probe for every key still unresolved, so a million
lookups cost a few array operations (~25 ns each) instead of a million dict calls. Used by
the lock-step algorithms that advance many words at once: the Unigram trie walk
(:mod:`explorer.engine.unigram.batch`) and byte-pair merging
(:mod:`explorer.engine.bpe.lockstep`).
"""

from __future__ import annotations

import numpy as np

MISSING = -1
"""What :meth:`IntTable.get` returns for a key not in the table (keys must not be -1)."""

FEW_KEYS = 512
"""Lookups still unresolved after a probe round: up to this many finish in one 2-D gather."""
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing multiplier
_GOLDEN_INT = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1


class IntTable:
    """``keys[i] -> values[i]`` (distinct int64 keys other than -1, int32 values)."""

    __slots__ = ("_claims", "_keys", "_mask", "_reach", "_room", "_shift", "_size", "_values",
                 "_views")

    def __init__(self, keys: np.ndarray, values: np.ndarray, *, room: int = 2) -> None:
        """``room``: at least this many slots per key (2: load factor <= 1/2; 4 makes the
        probe chains of keys that are not there shorter, for lookups that mostly miss)."""
        keys = np.asarray(keys, np.int64)
        values = np.asarray(values, np.int32)
        self._room = room
        self._size = len(keys)
        self._allocate(int(room * max(len(keys), 1) - 1).bit_length())
        self._place(keys, values)
        self._claims = None  # (kept only for a table that is added to)
        self._views: tuple[memoryview, memoryview, int, int, range] | None = None  # get_one

    def state(self) -> tuple[int, int, int, bytes, bytes]:
        """The table as plain values (for a cache): :meth:`from_state` rebuilds it without
        placing a key again."""
        return (self._room, self._size, self._reach, self._keys.tobytes(),
                self._values.tobytes())

    @classmethod
    def from_state(cls, state: tuple[int, int, int, bytes, bytes]) -> IntTable:
        """The table :meth:`state` described (its slot arrays read as they are)."""
        room, size, reach, keys, values = state
        table = cls.__new__(cls)
        table._room, table._size = room, size
        slot_keys = np.frombuffer(keys, np.int64)
        slot_values = np.frombuffer(values, np.int32)
        slots = len(slot_keys)
        if (slots != len(slot_values) or slots < 16 or slots & (slots - 1)
                or int(np.count_nonzero(slot_keys != MISSING)) != size):
            raise ValueError("not the state of an IntTable")
        table._shape(len(slot_keys).bit_length() - 1)
        table._keys, table._values = slot_keys, slot_values  # (read-only: add copies them)
        table._reach = reach
        table._claims = None
        table._views = None
        return table

    def _shape(self, bits: int) -> None:
        """Hash shift and slot mask for ``2 ** bits`` slots."""
        self._shift = np.uint64(64 - bits)
        self._mask = (1 << bits) - 1

    def _allocate(self, bits: int) -> None:
        bits = max(4, bits)
        self._shape(bits)
        self._keys = np.full(1 << bits, MISSING, np.int64)
        self._values = np.zeros(1 << bits, np.int32)
        self._claims: np.ndarray | None = None
        """:meth:`_place`'s scratch array, one slot per table slot, kept from one call to the
        next: made afresh, a table of a million slots had its pages faulted in again at every
        call (adding 4,000 keys to it took ~8 ms, ~10x the keys' own work)."""
        self._reach = 0
        """Probes past a key's home slot that the farthest key needed (lookups look no
        farther: linear probing never moves a key past an empty slot, nor deletes)."""

    def __len__(self) -> int:
        return self._size

    def add(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Add keys that are not in the table yet (distinct), growing it as needed."""
        keys = np.asarray(keys, np.int64)
        values = np.asarray(values, np.int32)
        if not self._keys.flags.writeable:  # (slots read from a state: copied on first add)
            self._keys, self._values = self._keys.copy(), self._values.copy()
        size = self._size + len(keys)
        if self._room * size > len(self._keys):  # grow: every key placed again
            held = self._keys != MISSING
            old_keys, old_values = self._keys[held], self._values[held]
            self._allocate(int(2 * self._room * size - 1).bit_length())
            self._place(old_keys, old_values)
        self._place(keys, values)
        self._size = size
        self._views = None  # (slot arrays and reach may have changed: get_one's views too)

    def reserve(self, size: int) -> None:
        """Room for ``size`` keys in all, so that adding up to that many places no key
        again (each growth of :meth:`add` places every key held once more)."""
        if self._room * size <= len(self._keys):
            return
        held = self._keys != MISSING
        old_keys, old_values = self._keys[held], self._values[held]
        self._allocate(int(self._room * size - 1).bit_length())
        self._place(old_keys, old_values)
        self._views = None

    def _place(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Put keys absent from the table into free slots (all probes in lock step).

        Keys that want the same free slot in a round are told apart by writing each one's
        index into that slot of a scratch array: the one whose index stays there takes the
        slot, the others probe on (a sort of the claims, ``np.unique``, took twice as long).
        """
        slot = self._hash(keys)
        pending = np.arange(len(keys))
        owner = self._claims  # (only the claimed slots are written)
        if owner is None or len(owner) != len(self._keys):  # (keys' indices: int32 is room)
            owner = self._claims = np.empty(len(self._keys), np.int32)
        depth = 0
        while pending.size:
            wanted = slot[pending]
            free = np.flatnonzero(self._keys[wanted] == MISSING)
            claims = wanted[free]
            claimants = pending[free]
            owner[claims] = claimants
            won = owner[claims] == claimants
            winners, claims = claimants[won], claims[won]
            self._keys[claims] = keys[winners]
            self._values[claims] = values[winners]
            stay = np.ones(len(pending), bool)
            stay[free[won]] = False
            pending = pending[stay]
            slot[pending] = (slot[pending] + 1) & self._mask
            if pending.size:
                depth += 1
                self._reach = max(self._reach, depth)

    def _hash(self, keys: np.ndarray) -> np.ndarray:
        return ((keys.astype(np.uint64) * _GOLDEN) >> self._shift).astype(np.int64)

    def keys(self) -> np.ndarray:
        """Every key in the table (in table order)."""
        return self._keys[self._keys != MISSING]

    def get_one(self, key: int) -> int:
        """The value of one key, :data:`MISSING` when it is not in the table: the same probe
        in Python over views of the slot arrays (~0.3 us), for callers that look keys up one
        at a time (a dict of the same int keys and values takes ~4x the memory: a 262k-piece
        model's 515k merges held 51 MB as a dict, 12 MB here)."""
        views = self._views
        if views is None:
            views = self._views = (memoryview(self._keys), memoryview(self._values),
                                   int(self._shift), self._mask, range(self._reach + 1))
        slot_keys, slot_values, shift, mask, probes = views
        slot = ((key & _MASK64) * _GOLDEN_INT & _MASK64) >> shift
        for _ in probes:
            found = slot_keys[slot]
            if found == key:
                return slot_values[slot]  # type: ignore[no-any-return]
            if found == MISSING:
                return MISSING
            slot = (slot + 1) & mask
        return MISSING

    def __getstate__(self) -> tuple[int, int, int, bytes, bytes]:
        """Pickled as :meth:`state` (views of the slots are not picklable)."""
        return self.state()

    def __setstate__(self, state: tuple[int, int, int, bytes, bytes]) -> None:
        table = IntTable.from_state(state)
        for name in IntTable.__slots__:
            setattr(self, name, getattr(table, name))

    def get(self, keys: np.ndarray) -> np.ndarray:
        """The value of each key (int32), :data:`MISSING` where a key is not in the table."""
        slot = self._hash(keys)
        table_keys, table_values, mask = self._keys, self._values, self._mask
        # (np.take: fancy indexing's index checks cost more than the gathers' cache misses)
        found = np.take(table_keys, slot)  # the first probe for everyone, without index arrays
        hit = found == keys
        out = np.where(hit, np.take(table_values, slot), MISSING)
        todo = np.flatnonzero(~hit & (found != MISSING))
        slot = (np.take(slot, todo) + 1) & mask
        depth, reach = 1, self._reach  # `slot` is `depth` probes past each key's home
        while todo.size > FEW_KEYS and depth <= reach:
            found = np.take(table_keys, slot)
            hit = found == np.take(keys, todo)
            # (indices of a mask, then gathers: boolean indexing with a mask of mixed
            # values is several times slower on big arrays)
            at = np.flatnonzero(hit)
            out[np.take(todo, at)] = np.take(table_values, np.take(slot, at))
            more = np.flatnonzero(~hit & (found != MISSING))
            todo = np.take(todo, more)
            slot = (np.take(slot, more) + 1) & mask
            depth += 1
        if todo.size and depth <= reach:
            # The last few keys look at every slot left within reach at once (probing one
            # slot per round took up to ~10 more rounds of array calls for them).
            slots = (slot[:, None] + np.arange(reach - depth + 1)) & mask
            row, col = np.nonzero(table_keys[slots] == keys[todo, None])
            out[todo[row]] = table_values[slots[row, col]]
        return out
