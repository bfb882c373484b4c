"""Tiresias's reference data: models' skew, the YARN samples, the Philly sample's thinning,
and the busy-cluster snapshots."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest

from apportion.refdata.tiresias import (
    PHILLY_SAMPLE,
    busy_cluster,
    model_names,
    skew,
    tensor_sizes,
    thin_philly,
    yarn_samples,
)
from apportion.solver.snapshot import parse_snapshot


def test_skew_separates_the_vgg_family_and_alexnet() -> None:
    assert len(model_names()) == 9
    skewed = {m for m in model_names() if (skew(m) or 0) > 0.5}
    assert skewed == {"vgg19", "vgg16", "vgg11", "alexnet"}
    assert skew("vgg16") == pytest.approx(392.0 / sum(tensor_sizes("vgg16") or ()))
    # Chronus's names: inception_v3 is inception3; mobilenet_v2 falls back to it.
    assert tensor_sizes("inception_v3") == tensor_sizes("inception3")
    assert tensor_sizes("mobilenet_v2") == tensor_sizes("inception3")
    assert tensor_sizes(None) is None


def test_yarn_samples() -> None:
    samples = yarn_samples()
    assert len(samples) == 9999
    assert min(samples) == 121.0
    assert sorted(samples)[len(samples) // 2] == pytest.approx(2227.0)


def test_thinning_is_reproducible(tmp_path: Path) -> None:
    source = tmp_path / "trace.csv.gz"
    with gzip.open(source, "wt", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["job_id", "submit_time"])
        writer.writerows([i, i * 10] for i in range(2000))
    one, two = tmp_path / "a.csv", tmp_path / "b.csv"
    kept = thin_philly(source, one, days=1.0, fraction=0.25)
    assert kept == thin_philly(source, two, days=1.0, fraction=0.25)
    assert one.read_text() == two.read_text()
    rows = list(csv.DictReader(one.open()))
    assert len(rows) == kept and 0 < kept < 144  # 144 rows in the first day, a quarter kept
    assert all(float(r["submit_time"]) < 1440 for r in rows)
    assert PHILLY_SAMPLE.exists()


def test_busy_cluster_is_a_valid_snapshot() -> None:
    document = busy_cluster(seed=3, shape=(16, 8), fill=0.7, new_job=(8, "resnet50"))
    snapshot = parse_snapshot(document)
    held = sum(sum(j.placement.values()) for j in snapshot.jobs if j.placement)
    assert 0.7 * 128 <= held <= 128
    assert snapshot.jobs[-1].placement is None
