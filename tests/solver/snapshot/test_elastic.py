"""The elastic part of the snapshot: valid documents parse, bad ones name the field."""

from __future__ import annotations

from typing import Any

import pytest

from apportion.solver import InputError
from apportion.solver.snapshot import parse_snapshot

BASE: dict[str, Any] = {"gpu_types": [{"name": "a", "count": 4}]}


def _errors(job: dict[str, Any], **more: Any) -> list[tuple[tuple[Any, ...], str]]:
    with pytest.raises(InputError) as caught:
        parse_snapshot({**BASE, **more, "jobs": [job]})
    return [(e.loc, e.msg) for e in caught.value.errors]


def test_an_elastic_job_parses_and_v1_documents_stay_valid() -> None:
    snap = parse_snapshot(
        {
            **BASE,
            "jobs": [
                {"id": "plain", "throughput": {"a": 1.0}},
                {
                    "id": "e",
                    "elastic": {
                        "configurations": [
                            {"gpu_type": "a", "gpus": 2, "batch_size": 256, "local_batch": 64,
                             "accumulation_steps": 1, "throughput": 900.0, "goodput": 700.0}
                        ],
                        "current": {"gpu_type": "a", "gpus": 2},
                        "age": 120.0, "restarts": 1, "restart_seconds": 30.0, "remaining": 1e6,
                    },
                },
            ],
        }
    )  # fmt: skip
    assert snap.jobs[0].elastic is None
    spec = snap.jobs[1].elastic
    assert spec is not None and spec.configurations is not None
    assert spec.configurations[0].value == 700.0


def test_bad_configurations_name_their_fields() -> None:
    errors = _errors(
        {
            "id": "e",
            "elastic": {
                "configurations": [
                    {"gpu_type": "b", "gpus": 2, "goodput": 1.0},
                    {"gpu_type": "a", "gpus": 2, "nodes": 3, "goodput": 1.0},
                    {"gpu_type": "a", "gpus": 2, "batch_size": 100, "local_batch": 32},
                ],
                "pinned": True,
            },
        }
    )
    where = "jobs", 0, "elastic"
    assert ((*where, "configurations", 0, "gpu_type"), "unknown GPU type 'b'") in [
        (loc[1:], msg) for loc, msg in errors
    ]
    locs = [e[0][1:] for e in errors]
    assert (*where, "configurations", 1, "nodes") in locs
    assert (*where, "configurations", 2, "batch_size") in locs  # 2 × 32 ≠ 100
    assert (*where, "configurations", 2) in locs  # neither goodput nor throughput
    assert (*where, "pinned") in locs  # pinned without a current configuration


def test_current_must_be_one_of_the_configurations() -> None:
    errors = _errors(
        {
            "id": "e",
            "elastic": {
                "configurations": [{"gpu_type": "a", "gpus": 2, "goodput": 1.0}],
                "current": {"gpu_type": "a", "gpus": 1},
            },
        }
    )
    assert errors == [
        (("snapshot", "jobs", 0, "elastic", "current"), "matches none of the job's configurations")
    ]


def test_configurations_or_a_model_not_both_nor_neither() -> None:
    errors = _errors({"id": "e", "elastic": {"restarts": 1}})
    assert errors[0][0] == ("snapshot", "jobs", 0, "elastic")


def test_a_goodput_model_needs_nodes_and_sane_limits() -> None:
    model = {
        "init_batch": 256,
        "max_batch": 128,
        "grad_sqr": 1.0,
        "grad_var": 1.0,
        "types": {
            "a": {"alpha_c": 0.1, "beta_c": 0.01, "alpha_n": 0.1, "beta_n": 0.01,
                  "alpha_r": 0.1, "beta_r": 0.01, "gamma": 11.0,
                  "min_local_batch": 64, "max_local_batch": 32},
        },
    }  # fmt: skip
    errors = _errors({"id": "e", "elastic": {"model": model}})
    locs = [e[0][4:] for e in errors]
    assert ("model", "types", "a", "gamma") in locs  # γ within 1 … 10
    model["types"]["a"]["gamma"] = 2.0
    errors = _errors({"id": "e", "elastic": {"model": model}})
    locs = [e[0][4:] for e in errors]
    assert ("model",) in locs  # no nodes
    assert ("model", "max_batch") in locs
    assert ("model", "types", "a", "max_local_batch") in locs
