"""Reading Slurm 22.05's JSON: nodes with typed GPUs, jobs with their GPU requests and where
they run (on documents recorded from the live test cluster)."""

from __future__ import annotations

import pytest

from apportion.adapters.slurm.slurmcli import (
    SlurmError,
    parse_jobs,
    parse_nodes,
    without_type_feature,
)
from tests.adapters.slurm.samples import sinfo, squeue


def test_nodes_carry_their_gpu_type_and_count() -> None:
    nodes = {n.name: n for n in parse_nodes(sinfo())}
    assert {n: (x.gpu_type, x.gpus) for n, x in nodes.items()} == {
        "n1": ("v100", 8),
        "n2": ("v100", 8),
        "n3": ("k80", 8),
        "n4": ("k80", 8),
    }
    assert all(n.usable for n in nodes.values())


def test_jobs_carry_their_gpu_requests() -> None:
    jobs = {j.id: j for j in parse_jobs(squeue())}
    requests = {j: (x.gpus, x.per_node, x.node_count, x.requested_type) for j, x in jobs.items()}
    assert requests == {
        "1": (2, True, 1, None),
        "2": (4, True, 1, "k80"),
        "3": (12, False, 2, None),
        "4": (1, True, 1, None),
        "5": (8, True, 1, "k80"),
        "6": (2, True, 1, None),
        "7": (0, False, 1, None),
        "8": (4, True, 1, None),
        "9": (4, True, 2, None),
    }
    assert jobs["8"].features == "v100&k80"
    assert jobs["2"].comment == "model=lm,weight=2"


def test_running_jobs_show_where_they_run_and_held_jobs_are_held() -> None:
    jobs = {j.id: j for j in parse_jobs(squeue())}
    assert jobs["3"].placement == {"n1": 6, "n2": 6} and jobs["3"].running_type == "v100"
    assert jobs["2"].placement == {"n3": 4} and jobs["2"].running_type == "k80"
    assert jobs["2"].start_time == 1795425588
    assert jobs["7"].running and jobs["7"].placement == {}  # no GPU: no GPU placement
    assert [j for j, x in jobs.items() if x.held] == ["4", "5", "6", "8", "9"]


def test_a_document_that_is_not_slurms_names_the_command() -> None:
    with pytest.raises(SlurmError, match="squeue --json"):
        parse_jobs({"jobs": [{"name": "no id"}]})
    with pytest.raises(SlurmError, match="sinfo --json"):
        parse_nodes({"nodes": None})


def test_nodes_whose_features_cannot_steer_their_gpu_type_are_named() -> None:
    assert without_type_feature(parse_nodes(sinfo())) == {}
    document = sinfo()
    document["nodes"][2]["active_features"] = "fast,ib"  # n3: k80 GPUs, no "k80" feature
    assert without_type_feature(parse_nodes(document)) == {"n3": "k80"}
