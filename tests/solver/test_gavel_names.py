"""Gavel's policy names, read as ours with the options they imply: the same answer as our name
with those options, said so in the result; a contradicting option, or a Gavel policy with no
counterpart, refused naming the field; the HTTP API takes them too."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from apportion.api.main import app
from apportion.solver import solve
from apportion.solver.errors import InputError
from apportion.solver.registry import ENTRIES, GAVEL_MISSING, resolve

with open("fixtures/gavel_physical_96.json") as handle:
    SNAPSHOT: dict[str, Any] = json.load(handle)

GAVEL = [(name, e.name, dict(implied)) for e in ENTRIES for name, implied in e.gavel]


def _answer(result: Any) -> list[tuple[str, dict[str, float]]]:
    return [(job.id, job.allocation) for job in result.jobs]


@pytest.mark.parametrize(("gavel", "ours", "implied"), GAVEL, ids=[g for g, _, _ in GAVEL])
def test_a_gavel_name_solves_as_ours_with_its_options(
    gavel: str, ours: str, implied: dict[str, Any]
) -> None:
    snapshot = {**SNAPSHOT, "now": 0.0}
    theirs = solve(snapshot, policy=gavel)
    mine = solve(snapshot, policy=ours, options=implied)
    assert theirs.policy == ours
    assert theirs.objective == pytest.approx(mine.objective)
    assert _answer(theirs) == _answer(mine)
    assert theirs.policy_note is not None and ours in theirs.policy_note
    assert f"'{gavel}' is Gavel's name" in theirs.policy_note
    for key, value in implied.items():
        assert f"{key}={json.dumps(value)}" in theirs.policy_note
    assert mine.policy_note is None and "policy_note" not in mine.model_dump_json()


def test_an_option_against_the_name_is_refused() -> None:
    with pytest.raises(InputError) as raised:
        solve(SNAPSHOT, policy="max_min_fairness_packed", options={"space_sharing": False})
    assert [e.loc for e in raised.value.errors] == [("options", "space_sharing")]
    assert "implies space_sharing=True" in raised.value.errors[0].msg


@pytest.mark.parametrize("name", sorted(GAVEL_MISSING))
def test_a_gavel_policy_without_a_counterpart_says_why(name: str) -> None:
    assert resolve(name) is None
    with pytest.raises(InputError) as raised:
        solve(SNAPSHOT, policy=name)
    (error,) = raised.value.errors
    assert error.loc == ("policy",) and "has no counterpart here" in error.msg


def test_our_own_names_win_where_gavel_uses_them_too() -> None:
    # Gavel's `max_min_fairness` is type-blind; ours is not, and it stays ours.
    resolved = resolve("max_min_fairness")
    assert resolved is not None and resolved.options == {} and resolved.note == ""


def test_the_http_api_takes_gavel_names_and_says_so() -> None:
    client = TestClient(app)
    body = {"policy": "max_min_fairness_perf", "snapshot": SNAPSHOT}
    answer = client.post("/v1/solve", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["policy"] == "max_min_fairness"
    assert "Gavel's name" in answer.json()["policy_note"]
    refused = client.post("/v1/solve", json={**body, "policy": "gandiva"})
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["loc"][-1] == "policy"
