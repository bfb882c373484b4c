"""The elastic round loop under apportion's policies: every decision fits the nodes, every job
finishes, and the records add up."""

from __future__ import annotations

from collections import Counter

import pytest

from apportion.refdata.sia import SIA_CLUSTER, workload
from apportion.simulator.elastic.engine import Decision, ElasticConfig, node_list, simulate_elastic
from apportion.simulator.elastic.jobs import ElasticJob
from apportion.simulator.elastic.policies import ApportionElastic

JOBS = workload("saturn", 1)[:8]


class Checked(ApportionElastic):
    """The policy's decisions, each checked against the nodes as it is made."""

    def decide(self, now: float, active: list[ElasticJob]) -> Decision:
        decision = super().decide(now, active)
        size = {node: gpus for node, gpus, _ in node_list(self.cluster)}
        used: Counter[str] = Counter()
        for held in decision.values():
            assert len({node.rsplit("-", 1)[0] for node in held}) == 1  # one GPU type
            used.update(held)
        assert all(used[node] <= size[node] for node in used)
        return decision


@pytest.mark.parametrize("policy", ["sia", "elastic_max_goodput", "ones"])
def test_every_job_finishes_within_the_nodes(policy: str) -> None:
    result = simulate_elastic(JOBS, SIA_CLUSTER, Checked(policy, SIA_CLUSTER))
    records = result.records
    assert result.summary["finished"] == len(JOBS)
    assert (records["finish"] > records["arrival"]).all()
    assert records["progress"].to_numpy() == pytest.approx(1.0)
    # the first start costs the model's restart time, so no job beats it
    assert (records["jct"] >= 25.0).all()
    assert result.summary["policy_calls"] == len(result.call_seconds)


def test_max_time_stops_the_run() -> None:
    config = ElasticConfig(max_time=1800.0)
    result = simulate_elastic(JOBS, SIA_CLUSTER, ApportionElastic("sia", SIA_CLUSTER), config)
    assert result.summary["finished"] < len(JOBS)
    assert result.records["finish"].isna().any()


def test_time_shares_are_enacted_by_deficit() -> None:
    from apportion.simulator.elastic.policies import SharedElastic

    class CheckedShares(Checked, SharedElastic):
        pass

    decider = CheckedShares("elastic_max_min", SIA_CLUSTER)
    result = simulate_elastic(JOBS, SIA_CLUSTER, decider)
    assert result.summary["finished"] == len(JOBS)
    assert result.records["progress"].to_numpy() == pytest.approx(1.0)
