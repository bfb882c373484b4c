"""Rounds with estimates (POST /v1/rounds through the app, and the library): the progress
observed changes the estimated throughputs, and the round is decided on them; without an
estimate, the request and the answer are as before."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from apportion.api.main import app
from apportion.client import LocalClient
from apportion.estimation import estimate
from apportion.estimation.rounds import EstimatedRound, with_estimates
from apportion.mechanism.document import RoundResult

client = TestClient(app)
ROUND = 360.0
# What the jobs really do (steps/s): a gains 10x on the V100, b only 2x over its K80 rate.
TRUTH = {"a": {"v100": 10.0, "k80": 1.0}, "b": {"v100": 2.0, "k80": 1.5}}
# What the snapshot was told (a guess): with it, maximum throughput puts a on the K80
# (2 + 2 = 4 against 1 + 1); with the truth, a on the V100 (10 + 1.5 against 1 + 2).
SNAPSHOT: dict[str, Any] = {
    "nodes": [
        {"id": "v0", "gpus": 1, "gpu_type": "v100"},
        {"id": "k0", "gpus": 1, "gpu_type": "k80"},
    ],
    "jobs": [
        {"id": "a", "throughput": {"v100": 1.0, "k80": 2.0}},
        {"id": "b", "throughput": {"v100": 2.0, "k80": 1.0}},
    ],
}
SEEN = [
    {"job": j, "gpu_type": g, "steps": rate * ROUND, "seconds": ROUND}
    for j, per in TRUTH.items()
    for g, rate in per.items()
]
BODY: dict[str, Any] = {"snapshot": SNAPSHOT, "policy": "max_throughput", "received": {}}


def _where(answer: dict[str, Any]) -> dict[str, str]:
    return {job: a["gpu_type"] for job, a in answer["assignments"].items()}


def test_the_round_follows_the_observed_progress_and_returns_the_estimate() -> None:
    plain = client.post("/v1/rounds", json=BODY)
    assert plain.status_code == 200, plain.text
    assert _where(plain.json()) == {"a": "k80", "b": "v100"}
    assert "estimate" not in plain.json()  # old callers see the old answer
    jobs = [{"id": "a"}, {"id": "b"}]
    learned = client.post(
        "/v1/rounds", json={**BODY, "estimate": {"jobs": jobs, "observations": SEEN}}
    )
    assert learned.status_code == 200, learned.text
    assert _where(learned.json()) == {"a": "v100", "b": "k80"}
    document = learned.json()["estimate"]
    for job, per in TRUTH.items():
        for gpu, rate in per.items():
            cell = document["jobs"][job]["throughput"][gpu]
            assert abs(cell["mean"] - rate) / rate < 0.01 and cell["low"] <= rate <= cell["high"]
    # Next round: the document goes back with nothing new, and the decision holds.
    again = client.post("/v1/rounds", json={**BODY, "estimate": {"estimate": document}})
    assert _where(again.json()) == {"a": "v100", "b": "k80"}
    assert again.json()["estimate"]["observed"] == document["observed"]


def test_the_local_client_gives_the_same_round_and_types() -> None:
    local = LocalClient()
    plain = local.rounds(BODY)
    assert type(plain) is RoundResult
    learned = local.rounds(
        {**BODY, "estimate": {"jobs": [{"id": "a"}, {"id": "b"}], "observations": SEEN}}
    )
    assert isinstance(learned, EstimatedRound) and learned.estimate is not None
    assert learned.assignments["a"].gpu_type == "v100"


def test_a_bad_estimate_field_is_named_under_estimate() -> None:
    bad = {**BODY, "estimate": {"observations": [{**SEEN[0], "job": "ghost"}]}}
    response = client.post("/v1/rounds", json=bad)
    assert response.status_code == 422
    locs = [e["loc"] for e in response.json()["errors"]]
    assert locs == [["body", "estimate", "observations", 0, "job"]]


def test_covered_pairs_take_the_estimated_rates_together() -> None:
    jobs = [{"id": "x", "job_type": "LM (batch size 20)"}, {"id": "y", "job_type": "A3C"}]
    document = estimate({"jobs": jobs})
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 1}],
        "jobs": [
            {"id": "x", "throughput": {"v100": 1.0}},
            {"id": "y", "throughput": {"v100": 1.0}},
        ],
        "job_pairs": [{"a": "y", "b": "x", "throughput": {"v100": [0.5, 0.5]}}],
    }
    out = with_estimates(snapshot, document)
    pair = document.pairs[0]
    assert (pair.a, pair.b) == ("x", "y")
    x, y = pair.throughput["v100"]
    assert out["job_pairs"][0]["throughput"] == {"v100": [y.mean, x.mean]}
    assert out["jobs"][0]["throughput"] == {"v100": document.jobs["x"].throughput["v100"].mean}
