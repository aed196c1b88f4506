"""One SGD training step of an MLP 784-512-512-10 in float32 under pytest-benchmark: minigrad
beside torch and beside the same step written out by hand with numpy (the floor), batch 64 and
256, on one thread (`tensor_workloads.py` has the three steps).

    pytest benchmarks/test_tensor_step.py --benchmark-only

Each batch size is a group whose rows are the three engines, with pytest-benchmark's ratios to
the fastest: minigrad's ratio to the numpy row is the engine's overhead.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import pytest
from tensor_workloads import FLOOR, STEPS, batch, make_weights
from threadpoolctl import threadpool_limits

torch = pytest.importorskip("torch")

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
HEAP_UP_TO = 32 * 1024 * 1024


def temporaries_from_the_heap() -> None:
    """glibc hands an allocation above its mmap threshold fresh pages (a page fault per page, in
    every step); the threshold rises as such blocks are freed, but in pytest's process it stayed
    low and the numpy floor, which allocates about a megabyte of temporaries per step, measured
    1.4 times slower than minigrad at batch 256. Blocks up to 32 MiB come from the heap here, and
    the heap keeps up to 64 MiB free instead of returning it to the system, as in a process that
    trains for long (a no-op without glibc); it stays so for the process."""
    libc = ctypes.util.find_library("c")
    mallopt = getattr(ctypes.CDLL(libc), "mallopt", None) if libc else None
    if mallopt is not None:
        mallopt(M_MMAP_THRESHOLD, HEAP_UP_TO)
        mallopt(M_TRIM_THRESHOLD, 2 * HEAP_UP_TO)


@pytest.fixture
def one_thread():
    """numpy's BLAS and torch on one thread each, as the figures in docs/performance.md are taken."""
    temporaries_from_the_heap()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with threadpool_limits(limits=1):
        yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("engine", list(STEPS))
@pytest.mark.parametrize("size", [64, 256])
def test_training_step(benchmark, one_thread, engine, size):
    benchmark.group = f"tensor: MLP 784-512-512-10 step, float32, batch {size}, one thread"
    x, y = batch(size)
    weights = make_weights()
    step = STEPS[engine](weights, x, y)
    first = step()
    floor = STEPS[FLOOR](weights, x, y)()
    assert first == pytest.approx(floor, rel=1e-4)  # the same step from the same weights
    benchmark(step)
