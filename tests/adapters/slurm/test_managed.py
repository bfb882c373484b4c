"""Which jobs and GPUs the Slurm adapter manages, on recorded documents: scoped by partition
(the scheduled nodes are the partition's, the GPUs other jobs hold there are taken off), by
account and by a comment flag; jobs out of scope are neither managed nor named; a job whose
partition lacks some scheduled node is left alone, saying which."""

from __future__ import annotations

from typing import Any

from apportion.adapters.slurm.managed import build_managed
from apportion.adapters.slurm.scope import Scope
from apportion.adapters.slurm.slurmcli import parse_jobs, parse_nodes
from tests.adapters.slurm.samples import TABLE, sinfo, squeue


def _documents() -> tuple[dict[str, Any], dict[str, Any]]:
    """The recorded cluster with a second partition `k80` (n3, n4); job 5 is pending in it and
    job 4 is charged to account `ml` and flagged."""
    nodes, jobs = sinfo(), squeue()
    for node in nodes["nodes"]:
        if node["name"] in ("n3", "n4"):
            node["partitions"] = ["gpu", "k80"]
    entries = {str(j["job_id"]): j for j in jobs["jobs"]}
    entries["5"]["partition"] = "k80"
    entries["4"]["account"] = "ml"
    entries["4"]["comment"] = "apportion,model=resnet50"
    return nodes, jobs


def _managed(scope: Scope | None) -> tuple[dict[str, tuple[str, int]], list[str], dict[str, str]]:
    nodes, jobs = _documents()
    managed = build_managed(parse_nodes(nodes), parse_jobs(jobs), TABLE, scope)
    return managed.nodes, [j.id for j in managed.jobs], managed.skipped


def test_without_a_scope_a_job_whose_partition_lacks_nodes_is_left_alone() -> None:
    nodes, jobs, skipped = _managed(None)
    assert nodes == {"n1": ("v100", 8), "n2": ("v100", 8), "n3": ("k80", 8), "n4": ("k80", 8)}
    assert jobs == ["1", "2", "3", "4", "9"]
    assert skipped["5"] == (
        "its partition k80 lacks node(s) n1, n2 that the adapter schedules; scope the adapter "
        "with --partition k80"
    )


def test_a_partition_scope_schedules_its_nodes_minus_what_other_jobs_hold() -> None:
    nodes, jobs, skipped = _managed(Scope(partitions=frozenset({"k80"})))
    # Job 2 (partition gpu, out of scope) holds 4 K80 GPUs on n3: not there for the round.
    assert nodes == {"n3": ("k80", 4), "n4": ("k80", 8)}
    assert jobs == ["5"]
    assert skipped == {}  # jobs out of scope are not named


def test_an_account_and_a_flag_narrow_the_jobs() -> None:
    assert _managed(Scope(accounts=frozenset({"ml"})))[1] == ["4"]
    assert _managed(Scope(flag="apportion"))[1] == ["4"]
    assert _managed(Scope(accounts=frozenset({"ml"}), flag="other"))[1] == []
    nodes, _, skipped = _managed(Scope(flag="apportion"))
    # The running jobs out of scope hold their GPUs: 2 + 6 on n1, 6 on n2, 4 on n3.
    assert nodes == {"n1": ("v100", 0), "n2": ("v100", 2), "n3": ("k80", 4), "n4": ("k80", 8)}
    assert skipped == {}


def test_scope_descriptions() -> None:
    assert Scope().describe() == "every job"
    scope = Scope(frozenset({"k80", "gpu"}), frozenset({"ml"}), "apportion")
    assert scope.describe() == "partitions gpu,k80; accounts ml; flag apportion"


def test_a_job_shown_without_its_gpus_is_managed_with_that_fault_on_its_nodes() -> None:
    # As slurmctld showed jobs started on nodes not yet registered again after its restart.
    nodes, jobs = sinfo(), squeue()
    entry = next(j for j in jobs["jobs"] if str(j["job_id"]) == "2")  # 4 K80 on n3
    entry["gres_detail"] = ["gpu:k80:0(IDX:)"]
    managed = build_managed(parse_nodes(nodes), parse_jobs(jobs), TABLE)
    (job,) = [j for j in managed.jobs if j.id == "2"]
    assert job.fault == "it runs with 0 of the 4 GPUs it asked for (gpu:k80:0(IDX:) on n3)"
    assert job.placement == {"n3": 4}  # what Slurm may still count there until the requeue
    assert "2" not in managed.skipped  # not "on nodes the adapter does not schedule"


def test_holds_are_passed_on_with_slurms_word() -> None:
    managed = build_managed(parse_nodes(sinfo()), parse_jobs(squeue()), TABLE)
    words = {j.id: j.held_by for j in managed.jobs}
    assert words["4"] == "JobHeldUser" and words["1"] is None
