"""Reading Slurm 22.05's JSON: nodes with typed GPUs, jobs with their GPU requests and where
they run (on documents recorded from the live test cluster)."""

from __future__ import annotations

import pytest

from apportion.adapters.slurm.slurmcli import (
    SlurmError,
    checked_document,
    parse_jobs,
    parse_nodes,
    parse_version,
    unsupported,
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


def test_partitions_and_accounts_are_read() -> None:
    nodes = {n.name: n for n in parse_nodes(sinfo())}
    assert nodes["n3"].partitions == ("gpu",)
    document = squeue()
    document["jobs"][0]["partition"] = "gpu,k80"  # pending for either
    document["jobs"][0]["account"] = "ml"
    first = parse_jobs(document)[0]
    assert (first.partitions, first.account) == (("gpu", "k80"), "ml")


@pytest.mark.parametrize(
    ("line", "version"),
    [("slurm 22.05.8", (22, 5, "22.05.8")), ("slurm-wlm 22.05.11\n", (22, 5, "22.05.11"))],
)
def test_the_version_line_is_read(line: str, version: tuple[int, int, str]) -> None:
    assert parse_version(line) == version
    assert unsupported(line) is None


def test_an_unsupported_slurm_is_named_with_what_the_adapter_reads() -> None:
    assert unsupported("slurm 23.11.4") == (
        "Slurm 23.11.4 is not supported: apportion-slurm reads the JSON of Slurm 22.05 (sinfo "
        "and squeue --json, openapi/v0.0.38) and relies on its scontrol behaviour"
    )
    with pytest.raises(SlurmError, match="cannot read a Slurm version in 'sinfo: command"):
        parse_version("sinfo: command not found")


def test_a_document_of_another_slurm_release_is_refused() -> None:
    assert checked_document(squeue(), "squeue --json")["jobs"]
    newer = {**squeue(), "meta": {"plugin": {"type": "openapi/v0.0.39"}}}
    with pytest.raises(SlurmError) as caught:
        checked_document(newer, "squeue --json")
    assert str(caught.value) == (
        "squeue --json: openapi/v0.0.39 documents are not supported (only openapi/v0.0.38)"
    )
    later = {**squeue(), "meta": {"slurm": {"release": "23.11.4"}}}
    with pytest.raises(SlurmError) as caught:
        checked_document(later, "squeue --json")
    assert str(caught.value) == "squeue --json: written by Slurm 23.11.4, which is not supported"
    with pytest.raises(SlurmError, match="squeue --json: not a JSON object"):
        checked_document([], "squeue --json")


def test_a_node_not_registered_since_a_slurmctld_restart_is_not_usable() -> None:
    document = sinfo()
    document["nodes"][0]["slurmd_start_time"] = 0  # as read in slurmctld's first seconds
    nodes = parse_nodes(document)
    assert not nodes[0].registered and not nodes[0].usable
    assert all(n.registered for n in nodes[1:])
