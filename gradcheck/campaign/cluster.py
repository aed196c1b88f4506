"""Campaigns on a Dask cluster: `gradcheck run --scheduler ADDRESS` sends the work to its workers.

A Dask `Client`'s executor is a `concurrent.futures.Executor` like the local process pool, so the
campaign's loop is the same; what differs is that a worker runs no initializer, so each task sets
up the worker's checker itself the first time it meets these settings.
"""

from __future__ import annotations

from concurrent.futures import Executor

from gradcheck.campaign.settings import CampaignError

CONNECT_TIMEOUT = "20s"


class DaskCluster:
    """A connection to a running Dask scheduler and the executor that runs tasks on its workers."""

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client
        except ImportError as exc:
            raise CampaignError(
                "--scheduler needs the `distributed` package: pip install 'minigrad[cluster]'"
            ) from exc
        try:
            self.client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise CampaignError(f"cannot reach the Dask scheduler at {address!r}: {exc}") from None
        self.executor: Executor = self.client.get_executor(pure=False)

    def workers(self) -> int:
        """The threads of all workers: how many tasks run at once."""
        return max(1, sum(self.client.nthreads().values()))

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        self.client.close()
