"""A numpy Generator's small integer draws, made in Python from its raw stream: the same numbers,
several times faster.

A graph takes about a hundred `Generator.integers(lo, hi + 1)` calls, each ~1.5 us of numpy call
overhead for one number. `StreamChooser` draws the PCG64 bit generator's raw 64-bit outputs in
bulk and turns them into the same integers numpy would (Lemire's bounded method on 32-bit halves,
as numpy does for ranges below 2**32, buffering the unused half the same way); `close()` leaves
the Generator in exactly the state those calls through numpy would have left it, so the draws
after it are unchanged too. Other bit generators keep numpy's own calls (`stream_chooser`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

_MASK32 = 0xFFFFFFFF

_CHUNK = 128  # raw outputs drawn at a time (a 30-node graph uses about 60)


class RngChooser:
    """A `Chooser` backed by a numpy Generator (one numpy call per draw)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    def choice(self, options: Sequence[Any]) -> Any:
        return options[int(self.rng.integers(len(options)))]


class StreamChooser:
    """A `Chooser` (integer, choice) drawing from a PCG64 Generator's raw stream; call `close`
    (or use `stream_chooser`) before the Generator is used again."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._bitgen = rng.bit_generator
        self._start = self._bitgen.state
        self._has_half = self._start["has_uint32"]
        self._half = self._start["uinteger"]
        self._raw: list[int] = []
        self._next = 0
        self._used = 0  # raw outputs consumed, of those drawn

    def _uint32(self) -> int:
        """numpy's next 32-bit draw: the saved upper half of the last 64-bit output, else the
        lower half of a new one (whose upper half is saved)."""
        if self._has_half:
            self._has_half = 0
            return self._half
        if self._next == len(self._raw):
            self._raw = self._bitgen.random_raw(_CHUNK).tolist()
            self._next = 0
        x = self._raw[self._next]
        self._next += 1
        self._used += 1
        self._has_half, self._half = 1, x >> 32
        return x & _MASK32

    def integer(self, lo: int, hi: int) -> int:
        """`Generator.integers(lo, hi + 1)`: uniform in [lo, hi]."""
        span = hi - lo
        if span == 0:
            return lo  # numpy draws nothing for a single value
        if not 0 < span < _MASK32:
            raise ValueError(f"StreamChooser.integer: range [{lo}, {hi}] must span 2..2**32-1 values")
        size = span + 1
        product = self._uint32() * size
        if (product & _MASK32) < size:
            threshold = (_MASK32 - span) % size
            while (product & _MASK32) < threshold:
                product = self._uint32() * size
        return lo + (product >> 32)

    def choice(self, options: Sequence[Any]) -> Any:
        return options[self.integer(0, len(options) - 1)]

    def close(self) -> None:
        """Put the Generator where numpy's own draws would have left it."""
        state = self._start
        self._bitgen.state = state
        self._bitgen.advance(self._used)  # (advancing also clears the saved half)
        state = self._bitgen.state
        state["has_uint32"], state["uinteger"] = self._has_half, self._half
        self._bitgen.state = state


@contextmanager
def stream_chooser(rng: np.random.Generator) -> Iterator[Any]:
    """A fast `Chooser` for a PCG64 Generator (numpy's default), else `RngChooser`'s plain calls;
    the Generator is in the right state again when the block ends."""
    if type(rng.bit_generator) is not np.random.PCG64:
        yield RngChooser(rng)
        return
    chooser = StreamChooser(rng)
    try:
        yield chooser
    finally:
        chooser.close()
