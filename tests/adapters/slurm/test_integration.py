"""The Slurm integration on recorded documents: from Slurm's view to the snapshots (who is
scheduled, who is left alone and why), and from a round to `scontrol` commands (what each
job's commands are, and the dry-run text)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from apportion.adapters.framework import Kind, RoundPlanner, View
from apportion.adapters.framework.actions import plan_round, render
from apportion.adapters.framework.integration import ReadError
from apportion.adapters.slurm.integration import PRIORITY_TOP, SlurmIntegration, SlurmState
from apportion.adapters.slurm.scope import Scope
from apportion.adapters.slurm.slurmcli import Slurm, SlurmJob, SlurmNode, parse_jobs, parse_nodes
from apportion.mechanism import Assignment, Round
from tests.adapters.slurm.samples import TABLE, sinfo, squeue

RECEIVED = {"1": {"v100": 8.0}, "2": {"k80": 2.0, "v100": 5.0}, "3": {"v100": 8.0}}
SLURM = SlurmIntegration(Slurm(), TABLE)


def _view(allow_preemption: bool) -> View[SlurmJob]:
    managed = SLURM.managed(SlurmState(parse_nodes(sinfo()), parse_jobs(squeue())))
    return View.build(managed, RECEIVED, allow_preemption=allow_preemption)


def test_the_policy_sees_every_mappable_gpu_job_on_the_nodes_gpus() -> None:
    view = _view(allow_preemption=True)
    snapshot = view.policy_snapshot()
    assert snapshot["nodes"] == [
        {"id": "n1", "gpus": 8, "gpu_type": "v100"},
        {"id": "n2", "gpus": 8, "gpu_type": "v100"},
        {"id": "n3", "gpus": 8, "gpu_type": "k80"},
        {"id": "n4", "gpus": 8, "gpu_type": "k80"},
    ]
    jobs = {j["id"]: (j["scale_factor"], j["weight"], j["throughput"]) for j in snapshot["jobs"]}
    assert jobs == {
        "1": (2, 1.0, {"v100": 400.0, "k80": 100.0}),
        "2": (4, 2.0, {"k80": 12.0}),
        "3": (12, 1.0, {"v100": 50.0, "k80": 10.0}),
        "4": (1, 1.0, {"v100": 400.0, "k80": 100.0}),
        "5": (8, 1.0, {"k80": 100.0}),
        "9": (4, 1.0, {"v100": 30.0, "k80": 12.0}),
    }
    assert view.skipped == {
        "6": "no throughput row for 'unknown-model' (its name); set --comment=model=KEY with a "
        "key of the table (lm, resnet50, transformer)",
        "8": "its constraint 'v100&k80' is not one GPU type (the adapter steers it)",
    }
    assert view.previous() == {"1": {"n1": 2}, "2": {"n3": 4}, "3": {"n1": 6, "n2": 6}}
    # Only the cluster's types reach the round (job 2 once ran on V100 as well).
    assert view.round_received()["2"] == {"k80": 2.0, "v100": 5.0}
    assert view.round_snapshot() == snapshot


def test_without_preemption_running_jobs_keep_their_gpus_and_the_round_gets_the_rest() -> None:
    view = _view(allow_preemption=False)
    assert view.fixed == {"1", "2", "3"}
    rest = view.round_snapshot()
    # n1 holds jobs 1 (2) and 3 (6): full, so absent; n2 has 8 - 6, n3 8 - 4.
    assert rest["nodes"] == [
        {"id": "n2", "gpus": 2, "gpu_type": "v100"},
        {"id": "n3", "gpus": 4, "gpu_type": "k80"},
        {"id": "n4", "gpus": 8, "gpu_type": "k80"},
    ]
    assert [j["id"] for j in rest["jobs"]] == ["4", "5", "9"]
    assert view.previous() == {}
    actions = {a.job: a for a in plan_round(SLURM, view, Round((), {}, ()))}
    assert actions["1"].kind == Kind.FIXED and not actions["1"].commands
    assert actions["1"].reason == (
        "keeps running on v100 (n1:2): preemption is not allowed (--allow-preemption)"
    )


ROUND = Round(
    assignments=(
        Assignment("4", "v100", {"n2": 1}, kept=False, priority=math.inf),
        Assignment("1", "v100", {"n1": 2}, kept=True, priority=2.5),
        Assignment("2", "k80", {"n3": 4}, kept=True, priority=1.25),
        Assignment("5", "k80", {"n4": 8}, kept=False, priority=math.inf),
        Assignment("9", "v100", {"n2": 4}, kept=False, priority=0.8),
    ),
    idle={"v100": 3, "k80": 4},
    waiting=("3",),
    reasons={"3": "the cluster's GPUs all went to higher-priority jobs"},
)

DRY_RUN = "".join(
    line + "\n"
    for line in (
        "# job 3 (transformer, 12 GPUs): preempt: preempted (requeued, held): the cluster's"
        " GPUs all went to higher-priority jobs",
        "scontrol requeuehold 3",
        "# job 4 (resnet50, 1 GPU): start: runs on v100 (n2:1); round priority inf: no time"
        " on that type yet",
        "scontrol update JobId=4 Features=v100 ReqNodeList=n2 StartTime=now",
        "scontrol release 4",
        "scontrol update JobId=4 Priority=100000",
        "# job 5 (resnet50, 8 GPUs): start: runs on k80 (n4:8); round priority inf: no time"
        " on that type yet",
        "scontrol update JobId=5 Features=k80 ReqNodeList=n4 StartTime=now",
        "scontrol release 5",
        "scontrol update JobId=5 Priority=99997",
        "# job 1 (resnet50, 2 GPUs): keep: keeps its GPUs on v100 (n1:2)",
        "# job 2 (lm, 4 GPUs): keep: keeps its GPUs on k80 (n3:4)",
        "# job 9 (lm, 4 GPUs): wait: waits (held): the round places it on v100 (n2:4), but"
        " it asks for 2 GPUs on each of 2 node(s)",
        "# job 6: skip: left alone: no throughput row for 'unknown-model' (its name); set"
        " --comment=model=KEY with a key of the table (lm, resnet50, transformer)",
        "# job 8: skip: left alone: its constraint 'v100&k80' is not one GPU type (the"
        " adapter steers it)",
    )
)


def test_a_round_becomes_preemptions_then_starts_in_serving_order() -> None:
    view = _view(allow_preemption=True)
    actions = plan_round(SLURM, view, ROUND)
    assert [(a.job, a.kind) for a in actions] == [
        ("3", Kind.PREEMPT),
        ("4", Kind.START),
        ("5", Kind.START),
        ("1", Kind.KEEP),
        ("2", Kind.KEEP),
        ("9", Kind.WAIT),
        ("6", Kind.SKIP),
        ("8", Kind.SKIP),
    ]
    assert render(SLURM, actions, view) == DRY_RUN
    assert not any(c[1] == "cancel" or c[0] == "scancel" for a in actions for c in a.commands)


def test_a_moved_job_is_requeued_then_restarted_once_back_in_the_queue() -> None:
    view = _view(allow_preemption=True)
    move = Round((Assignment("1", "k80", {"n4": 2}, kept=False, priority=0.5),), {}, ())
    action = next(a for a in plan_round(SLURM, view, move) if a.job == "1")
    assert action.kind == Kind.MOVE
    assert action.commands == (("scontrol", "requeuehold", "1"),)
    assert action.then == (
        ("scontrol", "update", "JobId=1", "Features=k80", "ReqNodeList=n4", "StartTime=now"),
        ("scontrol", "release", "1"),
        ("scontrol", "update", "JobId=1", f"Priority={PRIORITY_TOP}"),
    )
    assert action.reason.startswith("moves from v100 (n1:2) to k80 (n4:2); round priority 0.5")


def test_a_solved_round_on_the_recorded_cluster_fits_the_free_gpus() -> None:
    view = _view(allow_preemption=False)
    planner = RoundPlanner()
    decision = planner.decide(view.policy_snapshot(), "max_min_fairness", {})
    rest = view.round_snapshot()
    # The answer's columns as they are: the fixed jobs are not in the round's snapshot.
    assert view.fixed and not {job["id"] for job in rest["jobs"]} & set(view.fixed)
    rnd = planner.next_round(rest, decision.allocation, view.round_received(), view.previous())
    free = {n["id"]: n["gpus"] for n in rest["nodes"]}
    for action in plan_round(SLURM, view, rnd):
        if action.kind == Kind.START:
            for node, gpus in action.placement.items():
                free[node] -= gpus
            assert f"ReqNodeList={','.join(action.placement)}" in action.commands[0]
        assert action.kind in (Kind.START, Kind.WAIT, Kind.FIXED, Kind.SKIP)
    assert min(free.values()) >= 0


def test_a_pending_job_slurm_could_start_is_held_and_a_held_one_released_when_started() -> None:
    document = squeue()
    for entry in document["jobs"]:
        if entry["job_id"] in (4, 5):
            entry["state_reason"] = "Priority"  # submitted without --hold
    managed = SLURM.managed(SlurmState(parse_nodes(sinfo()), parse_jobs(document)))
    view = View.build(managed, RECEIVED, allow_preemption=True)
    rnd = Round((Assignment("5", "k80", {"n4": 8}, kept=False, priority=math.inf),), {}, ())
    actions = {a.job: a for a in plan_round(SLURM, view, rnd)}
    assert actions["4"].kind == Kind.HOLD
    assert actions["4"].commands == (("scontrol", "hold", "4"),)
    assert actions["4"].reason == (
        "waits: the policy gives it no time now; held so it does not start outside the round"
    )
    # Not held: no release, only its type, nodes and priority.
    assert actions["5"].commands == (
        ("scontrol", "update", "JobId=5", "Features=k80", "ReqNodeList=n4", "StartTime=now"),
        ("scontrol", "update", "JobId=5", f"Priority={PRIORITY_TOP}"),
    )
    assert actions["9"].kind == Kind.WAIT and actions["9"].commands == ()  # held already


class _Recorded(Slurm):
    """The recorded documents, n2 as read in a restarted slurmctld's first seconds; and the
    cluster's configuration."""

    def nodes(self) -> list[SlurmNode]:
        document = sinfo()
        document["nodes"][1]["slurmd_start_time"] = 0
        return parse_nodes(document)

    def jobs(self) -> list[SlurmJob]:
        return parse_jobs(squeue())

    def run(self, command: Sequence[str]) -> str:
        assert tuple(command) == ("scontrol", "show", "config")
        return (
            "ClusterName             = test\nSlurmctldHost[0]        = ctl\nSlurmctldPort = 6817\n"
        )


def test_nothing_is_read_as_schedulable_until_every_node_registers_again() -> None:
    slurm = SlurmIntegration(_Recorded(), TABLE)
    with pytest.raises(ReadError, match=r"node\(s\) n2 have not registered with slurmctld"):
        slurm.read()
    # Out of scope, it does not matter.
    SlurmIntegration(_Recorded(), TABLE, Scope(partitions=frozenset({"k80"}))).read()


def test_the_identity_names_the_cluster_and_the_scope() -> None:
    scope = Scope(partitions=frozenset({"gpu"}))
    assert SlurmIntegration(_Recorded(), TABLE, scope).identity() == (
        "slurm cluster test at ctl:6817; partitions gpu"
    )
