"""Managing part of the live cluster, read back from Slurm: a partition scope schedules only
that partition's nodes, minus the GPUs other jobs hold there; an account and a comment flag
narrow the jobs; jobs out of scope are never touched. Jobs submitted as users would (no
`--hold`: the cluster's job_submit.lua holds them; an untyped `--gres=gpu:N` without a
constraint) are started on the type the round chooses."""

from __future__ import annotations

from pathlib import Path

from apportion.adapters.framework import Kind
from apportion.adapters.slurm.local.cluster import Cluster
from apportion.adapters.slurm.scope import Scope
from tests.adapters.slurm.driving import (
    assert_enacted,
    assert_no_gpu_oversubscribed,
    controller,
    fingerprint,
    jobs,
    running_soon,
    settle,
    submit,
)


def test_a_partition_scope_manages_its_jobs_on_its_nodes_only(
    cluster: Cluster, tmp_path: Path
) -> None:
    # Out of scope, in partition gpu: one job held at submission, one running on n3 (4 K80).
    held = cluster.sbatch("--gres=gpu:2", "--comment=model=lm", seconds=300)
    busy = cluster.sbatch("--hold", "-w", "n3", "--gres=gpu:k80:4", seconds=300)
    cluster.run("scontrol", "release", busy)
    assert running_soon(cluster, [busy])[busy].running
    ids = submit(
        cluster,
        [
            ("-p k80 --gres=gpu:4", "lm"),
            ("-p k80 --gres=gpu:8", "resnet50"),
            ("-p k80 --gres=gpu:4", "gan"),
        ],
    )
    before = fingerprint(cluster)
    outcome = controller(
        cluster, tmp_path / "state.json", scope=Scope(partitions=frozenset({"k80"}))
    ).step()
    assert outcome.view is not None
    assert outcome.view.nodes == {"n3": ("k80", 4), "n4": ("k80", 8)}
    assert list(outcome.view.jobs) == ids and outcome.view.skipped == {}
    now = settle(cluster, outcome)
    assert_enacted(outcome, now)
    assert_no_gpu_oversubscribed(cluster)
    started = [a.job for a in outcome.actions if a.kind == Kind.START]
    assert 0 < sum(now[j].gpus for j in started) <= 12  # the partition's free K80 GPUs
    assert all(set(now[j].placement) <= {"n3", "n4"} for j in started)
    after = fingerprint(cluster)
    assert after[held] == before[held] and after[busy] == before[busy]


def test_an_account_and_a_flag_scope_start_only_their_jobs_on_the_chosen_type(
    cluster: Cluster, tmp_path: Path
) -> None:
    ours = cluster.sbatch("--gres=gpu:2", "--account=ml", "--comment=apportion,model=lm")
    unflagged = cluster.sbatch("--gres=gpu:2", "--account=ml", "--comment=model=lm")
    other = cluster.sbatch("--gres=gpu:2", "--account=vision", "--comment=apportion,model=lm")
    submitted = jobs(cluster)
    # Held at submission by the cluster's job_submit.lua, untyped, without a constraint.
    for job in (ours, unflagged, other):
        assert submitted[job].held, (submitted[job].state, submitted[job].reason)
        assert submitted[job].requested_type is None and submitted[job].features == ""
    before = fingerprint(cluster)
    scope = Scope(accounts=frozenset({"ml"}), flag="apportion")
    outcome = controller(cluster, tmp_path / "state.json", scope=scope).step()
    assert outcome.view is not None and list(outcome.view.jobs) == [ours]
    (action,) = outcome.actions
    assert action.kind == Kind.START and action.gpu_type in ("v100", "k80")
    now = settle(cluster, outcome)
    assert_enacted(outcome, now)
    assert now[ours].running_type == now[ours].features == action.gpu_type
    after = fingerprint(cluster)
    assert after[unflagged] == before[unflagged] and after[other] == before[other]
