"""The Tiresias policies served three ways: the library, the command line, and a real service
(uvicorn in a subprocess), with bad input named by field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from apportion import solve
from apportion.refdata.tiresias import tensor_sizes, yarn_samples
from apportion.solver.errors import InputError
from tests.api.service import running_service
from tests.cli_runner import invoke


def snapshot() -> dict[str, Any]:
    """Two 4-GPU nodes: a VGG-16 job on 4 GPUs must sit on one node, ResNet-101 may spread."""
    return {
        "nodes": [{"id": "a", "gpus": 4}, {"id": "b", "gpus": 4}],
        "now": 500.0,
        "service_distribution": {"samples": list(yarn_samples())[:200]},
        "jobs": [
            {
                "id": "resnet",
                "scale_factor": 3,
                "throughput": {"gpu": 1.0},
                "placement": {"a": 2, "b": 1},
                "attained_service": 900.0,
                "started_at": 200.0,
                "overhead_seconds": 62.0,  # a preemption costs it 62 s: not for a job of its queue
                "tensor_sizes": list(tensor_sizes("resnet101") or ()),
            },
            {
                "id": "vgg",
                "scale_factor": 4,
                "throughput": {"gpu": 1.0},
                "arrival_time": 450.0,
                "tensor_sizes": list(tensor_sizes("vgg16") or ()),
            },
            {"id": "small", "scale_factor": 1, "throughput": {"gpu": 1.0}, "arrival_time": 460.0},
        ],
    }


def check(body: dict[str, Any]) -> None:
    """The 4-GPU VGG job needs a whole node, and none is free while ResNet runs on both: it
    waits (no node shape fits), and the 1-GPU job takes a hole."""
    jobs = {j["id"]: j for j in body["jobs"]}
    assert body["status"] == "optimal"
    assert jobs["vgg"]["metrics"]["wait_reason"] == "shape"
    assert "no node shape fits" in jobs["vgg"]["reason"]
    assert jobs["vgg"]["metrics"]["sensitive"] is True
    assert jobs["resnet"]["placement"] == {"a": 2, "b": 1}
    assert sum(jobs["small"]["placement"].values()) == 1


@pytest.mark.parametrize("policy", ["tiresias_las", "tiresias_gittins", "2d_gittins"])
def test_library(policy: str) -> None:
    check(solve(snapshot(), policy=policy).model_dump(mode="json"))


def test_command_line(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot()))
    ran = invoke([str(path), "--policy", "tiresias_gittins", "--format", "json"])
    assert ran.exit_code == 0, ran.output
    check(json.loads(ran.stdout))
    ran = invoke([str(path), "--policy", "tiresias_las", "-o", "thresholds=[100]", "-o", "x=1"])
    assert ran.exit_code == 2
    assert "x" in ran.stderr


def test_http_service() -> None:
    with running_service() as service:
        body = {"policy": "tiresias_gittins", "snapshot": snapshot()}
        response = httpx.post(f"{service.base}/v1/solve", json=body, timeout=60)
        assert response.status_code == 200, response.text
        check(response.json())
        missing = {**snapshot(), "service_distribution": None}
        response = httpx.post(
            f"{service.base}/v1/solve",
            json={"policy": "tiresias_gittins", "snapshot": missing},
            timeout=60,
        )
        assert response.status_code == 422
        assert response.json()["errors"][0]["loc"][-1] == "service_distribution"
        listed = httpx.get(f"{service.base}/v1/policies", timeout=10).json()["policies"]
        options = next(p for p in listed if p["name"] == "tiresias_las")["options"]
        assert {"thresholds", "promote_knob", "preemption_cost", "max_preemptions"} <= set(
            options["properties"]
        )


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"service_distribution": {"samples": [1.0], "histogram": []}}, "service_distribution"),
        ({"service_distribution": {"samples": []}}, "samples"),
        ({"nodes": None}, "nodes"),
    ],
)
def test_bad_input_names_the_field(change: dict[str, Any], where: str) -> None:
    document = {**snapshot(), **change}
    if document["nodes"] is None:
        document.pop("nodes")
        for job in document["jobs"]:
            job.pop("placement", None)
        document["gpu_types"] = [{"name": "gpu", "count": 8}]
    with pytest.raises(InputError) as caught:
        solve(document, policy="tiresias_gittins")
    assert where in caught.value.errors[0].loc


def test_bad_thresholds_are_refused() -> None:
    with pytest.raises(InputError) as caught:
        solve(snapshot(), policy="tiresias_las", options={"thresholds": [7200.0, 3200.0]})
    assert caught.value.errors[0].loc[-1] == "thresholds"
