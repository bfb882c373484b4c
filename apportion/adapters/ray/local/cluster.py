"""A real Ray cluster on this host, for the try-out and the adapter's tests: one raylet per node
(`ray.cluster_utils.Cluster`), each declaring fake GPUs of one type and the two resources the
adapter reads (`apportion_gpu_<type>`, `apportion_node_<name>`). The first node is the head.

Raylets, GCS and workers are processes of this one cluster, stopped by `running` whatever
happens. `Unavailable` says why a cluster cannot be had (Ray not installed, or it would not
start here).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from apportion.adapters.ray.raycluster import NAMESPACE, NODE_PREFIX, TYPE_PREFIX

#: The try-out's and the tests' cluster: node → GPU type.
NODES = {"n1": "v100", "n2": "v100", "n3": "k80"}
GPUS_PER_NODE = 8


class Unavailable(RuntimeError):
    """No local Ray cluster can be started here; the message says why."""


@dataclass(frozen=True)
class LocalRay:
    """A running local cluster: its address and its nodes (name → (type, GPUs))."""

    address: str
    nodes: Mapping[str, tuple[str, int]]


def node_args(name: str, kind: str, gpus: int, cpus: int = 1) -> dict[str, Any]:
    """A raylet's arguments: `gpus` fake GPUs of `kind`, named `name`."""
    resources = {f"{TYPE_PREFIX}{kind}": gpus, f"{NODE_PREFIX}{name}": gpus}
    return {"num_cpus": cpus, "num_gpus": gpus, "resources": resources}


@contextmanager
def running(
    nodes: Mapping[str, str] = NODES, gpus: int = GPUS_PER_NODE, connect: bool = True
) -> Iterator[LocalRay]:
    """A cluster of `nodes` (name → GPU type) with `gpus` GPUs each, this process connected
    to it in the adapter's namespace (with `connect`); everything stopped on exit."""
    try:
        import ray
        from ray.cluster_utils import Cluster
    except ImportError as exc:
        raise Unavailable(
            f"Ray is not installed ({exc.name}): pip install 'apportion[ray]'"
        ) from None
    specs = [node_args(n, kind, gpus) for n, kind in nodes.items()]
    cluster = Cluster(initialize_head=False)
    try:
        try:
            cluster.add_node(**specs[0])
            for spec in specs[1:]:
                cluster.add_node(**spec)
            cluster.wait_for_nodes()
            if connect:
                ray.init(
                    address=cluster.address,
                    namespace=NAMESPACE,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                )
        except (RuntimeError, OSError, TimeoutError) as exc:
            raise Unavailable(f"Ray would not start here: {exc}") from exc
        yield LocalRay(cluster.address, {n: (kind, gpus) for n, kind in nodes.items()})
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()  # type: ignore[no-untyped-call]
