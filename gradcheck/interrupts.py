"""How the harness takes SIGINT and SIGTERM: as exceptions in the main thread (`Terminated` for
SIGTERM, Python's KeyboardInterrupt for SIGINT), so that `finally` blocks stop the worker
processes and remove temporary files, and the command line ends with one line and exit status
130 or 143; and held back (`signals_held`) for the few steps that must not be cut in two.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

# The exit statuses of a command ended by a signal: 128 + its number, as shells report them.
INTERRUPTED = 128 + signal.SIGINT
TERMINATED = 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM arrived (a BaseException, like KeyboardInterrupt: no `except Exception` takes it)."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


@contextlib.contextmanager
def terminable() -> Iterator[None]:
    """SIGTERM raises `Terminated` inside (main thread only; elsewhere nothing changes)."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back inside, delivered on leaving (where the OS allows it)."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
