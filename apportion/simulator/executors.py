"""Where a sweep's runs execute, by name (`solve simulate --executor`): `processes`, a process
per core on this host (the default), or `ray`, tasks on a Ray cluster.

    with ray_executor() as pool:                     # a local Ray, stopped afterwards
        result = run_sweep(spec, pool)
    with ray_executor("ray://head:10001") as pool:   # or RAY_ADDRESS: an existing cluster
        result = run_sweep(spec, pool)

A Dask cluster is used as before, through its client's `get_executor()`. Every executor gives
the same records: the engine is deterministic and each run carries its own seed.

On Ray each run is one task asking for one CPU; its `SimulationResult` comes back through
Ray's object store. A task's own error comes back as raised in the run (`RunFailed`), not
wrapped in Ray's. On a cluster of several hosts, apportion must be installed on each (the
runs import the simulator). Ray tells nobody when a task starts, so a sweep's `on_start` hears
of a run on Ray when it ends.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from typing import Any

#: The executors a sweep can be given by name.
EXECUTORS = ("processes", "ray")


class ExecutorUnavailable(RuntimeError):
    """The executor asked for cannot be had here; the message says why and what to install.
    `missing` is True when a package is not installed (not a failure to start or connect)."""

    def __init__(self, message: str, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


class RayExecutor(Executor):
    """A `concurrent.futures.Executor` over Ray tasks: connected to `address` (None: the
    `RAY_ADDRESS` environment variable, or else a local Ray started here with `workers` CPUs,
    default one per core). `shutdown` stops the Ray this executor started or connected to."""

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise ExecutorUnavailable(
                "the ray executor needs Ray: pip install 'apportion[ray]'", missing=True
            ) from None
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self._mine = not ray.is_initialized()
        if self._mine:
            _reachable(self.address)
            try:
                ray.init(
                    address=self.address,
                    num_cpus=workers if self.address is None else None,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                    configure_logging=False,
                )
            except Exception as exc:  # ConnectionError, or Ray's own on a bad address
                where = self.address or "a local Ray"
                detail = " ".join(str(exc).split())
                raise ExecutorUnavailable(f"cannot start or reach {where}: {detail}") from None
        self._tasks: dict[Callable[..., Any], Any] = {}

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        import ray

        task = self._tasks.get(fn)
        if task is None:
            # No retry: a run that fails fails the same way again (the engine is
            # deterministic); a lost worker is Ray's to report.
            task = self._tasks[fn] = ray.remote(num_cpus=1, max_retries=0)(fn)
        out: Future[Any] = Future()
        task.remote(*args, **kwargs).future().add_done_callback(lambda done: _relay(done, out))
        return out

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        import ray

        if self._mine and ray.is_initialized():
            ray.shutdown()
        self._mine = False


def _reachable(address: str | None) -> None:
    """A `host:port` that accepts no connection is refused at once (Ray would retry it for
    minutes); other addresses (`auto`, `ray://...`) are left to Ray."""
    if address is None or "://" in address or address.count(":") != 1:
        return
    host, _, port = address.partition(":")
    try:
        socket.create_connection((host, int(port)), timeout=5.0).close()
    except (OSError, ValueError) as exc:
        raise ExecutorUnavailable(f"cannot reach Ray at {address}: {exc}") from None


def _relay(done: Future[Any], out: Future[Any]) -> None:
    """`done`'s outcome to `out`, a task's own error unwrapped from Ray's."""
    from ray.exceptions import RayTaskError

    try:
        out.set_result(done.result())
    except RayTaskError as exc:
        cause = exc.cause if isinstance(exc.cause, BaseException) else exc
        out.set_exception(cause)
    except BaseException as exc:
        out.set_exception(exc)


@contextmanager
def ray_executor(address: str | None = None, workers: int | None = None) -> Iterator[RayExecutor]:
    """A `RayExecutor`, shut down on exit."""
    pool = RayExecutor(address, workers)
    try:
        yield pool
    finally:
        pool.shutdown()


def make_executor(
    name: str, workers: int | None = None, address: str | None = None
) -> Executor | None:
    """The executor called `name`; None for `processes`, which a sweep makes itself (and
    shuts down) as its default."""
    if name == "processes":
        return None
    if name == "ray":
        return RayExecutor(address, workers)
    raise ValueError(f"executor: {name!r} is not one of {', '.join(EXECUTORS)}")
