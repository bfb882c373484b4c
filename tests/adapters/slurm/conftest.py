"""The live Slurm cluster, started once per session (`adapters.slurm.local.cluster`): two V100
nodes and two K80 nodes of 8 fake GPUs each; partitions `gpu` (all four, where GPU jobs are held
at submission, as docs/SLURM.md recommends) and `k80`. The Debian packages are installed by
`adapters.slurm.local.packages` when missing (as root). Skipped, with the reason, where Slurm
can be neither found nor installed, or without root."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from apportion.adapters.slurm.local.cluster import Cluster, Unavailable, start, stop


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[Cluster]:
    # Not pytest's tmp_path: munged wants every directory above its socket searchable by all.
    root = Path(tempfile.mkdtemp(prefix="apportion-slurm-"))
    try:
        cluster = start(root, hold_partitions=("gpu",))
    except Unavailable as exc:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"no live Slurm cluster: {exc}")
    try:
        yield cluster
    finally:
        stop(cluster)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def cluster(slurm_cluster: Cluster) -> Cluster:
    """The session's cluster with no job left from an earlier test."""
    slurm_cluster.clear_jobs()
    return slurm_cluster
