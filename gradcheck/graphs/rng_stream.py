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

_CHUNK = 32  # raw outputs drawn at a time (a 30-node graph uses about 60: converting unused ones costs)


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
        # numpy's 32-bit draws in order: the saved upper half of the last 64-bit output if any,
        # then each new output's lower half followed by its upper half (little-endian words)
        self._saved = 1 if self._start["has_uint32"] else 0
        self._words: list[int] = [self._start["uinteger"]] if self._saved else []
        self._next = 0  # index of the next word to use

    def _more_words(self) -> None:
        self._words += self._bitgen.random_raw(_CHUNK).astype("<u8", copy=False).view("<u4").tolist()

    def integer(self, lo: int, hi: int) -> int:
        """`Generator.integers(lo, hi + 1)`: uniform in [lo, hi]."""
        size = hi - lo + 1
        if size == 1:
            return lo  # numpy draws nothing for a single value
        if not 1 < size <= _MASK32:
            raise ValueError(f"StreamChooser.integer: range [{lo}, {hi}] must span 2..2**32-1 values")
        i = self._next
        try:
            product = self._words[i] * size
        except IndexError:  # once every 64 words
            self._more_words()
            product = self._words[i] * size
        self._next = i + 1
        if (product & _MASK32) < size:  # rarely: Lemire's rejection step
            threshold = (_MASK32 - size + 1) % size
            while (product & _MASK32) < threshold:
                if self._next == len(self._words):
                    self._more_words()
                product = self._words[self._next] * size
                self._next += 1
        return lo + (product >> 32)

    def choice(self, options: Sequence[Any]) -> Any:
        return options[self.integer(0, len(options) - 1)]

    def close(self) -> None:
        """Put the Generator where numpy's own draws would have left it."""
        if self._next == 0:
            self._bitgen.state = self._start
            return
        fresh = self._next - self._saved  # words taken from new 64-bit outputs
        self._bitgen.state = self._start
        self._bitgen.advance((fresh + 1) // 2)
        state = self._bitgen.state
        # numpy's saved half: a used output's upper half, still pending when an odd number of
        # fresh words was used (else the last one handed out, kept but flagged as used)
        pending = fresh % 2
        state["has_uint32"] = pending
        state["uinteger"] = self._words[self._next] if pending else self._words[self._next - 1]
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
