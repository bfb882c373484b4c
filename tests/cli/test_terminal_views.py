"""The command line's tables as a person at a terminal sees them (a real pseudo-terminal): the
explanation's prices first and each distinct reason once, in full; every job of the bundled
fixture; every option name of every policy whatever the width; one number format; a footer
in words; and the JSON document unchanged by any of it."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from apportion.solver import solve
from tests.terminal import Screen, on_terminal

FIXTURE = "fixtures/gavel_physical_96.json"
# The explanation's own sentence for a job's gain, read independently of the code that writes
# it: "would gain 0.097 per unit of v100 time, none is free".
GAIN = re.compile(
    r"; would gain (?P<gain>[0-9.e+-]+) per unit of (?P<type>\w+) time, none is free$"
)


@pytest.fixture(scope="module")
def explained() -> Screen:
    screen = on_terminal([FIXTURE, "--explain"], columns=400)
    assert screen.exit_code == 0, screen.text
    return screen


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    with open(FIXTURE) as handle:
        data = json.load(handle)
    result = solve(data, policy="max_min_fairness", options={"explain": True})
    return json.loads(result.model_dump_json())


def _job_rows(screen: Screen) -> dict[str, list[str]]:
    """job id → its cells, from the job table's rows (`│ job-3 │ 0.0000 │ ...`)."""
    rows = {}
    for line in screen.lines:
        cells = [cell.strip() for cell in line.strip().strip("│").split("│")]
        if cells and re.fullmatch(r"job-\d+", cells[0]):
            rows[cells[0]] = cells
    return rows


def test_prices_and_binding_rows_come_before_the_jobs(explained: Screen) -> None:
    text = explained.text
    prices, why, table = text.index("prices"), text.index("why: 96 jobs"), text.index("│ job-0 ")
    assert prices < why < table
    for name in ("k80", "p100", "v100"):
        row = next(line for line in explained.lines if f"capacity[{name}]" in line)
        assert "binding" in row and re.search(r"\d\.\d{4}", row), row


def test_each_distinct_reason_is_printed_once_in_full(
    explained: Screen, document: dict[str, Any]
) -> None:
    whys = [job["why"] for job in document["explanation"]["jobs"]]
    reasons = {GAIN.sub("", why) for why in whys}
    assert 1 < len(reasons) < len(set(whys))  # the gains differ, the reasons do not
    assert f"why: 96 jobs, {len(reasons)} distinct reasons" in explained.text
    for reason in reasons:
        assert explained.text.count(reason) == 1, reason
    assert "…" not in explained.text.replace("… ", "")  # nothing cut short


def test_every_job_is_shown_with_its_reason_and_own_gain(
    explained: Screen, document: dict[str, Any]
) -> None:
    rows = _job_rows(explained)
    assert set(rows) == {f"job-{i}" for i in range(96)}
    labels = dict(re.findall(r"^(R\d+) \(\d+ jobs?\) (.+)$", explained.text, re.MULTILINE))
    for job in document["explanation"]["jobs"]:
        cells = rows[job["id"]]
        label, gain = cells[-2], cells[-1]
        found = GAIN.search(job["why"])
        # The JSON sentence is the printed reason plus the job's own gain, to its 2 digits.
        assert job["why"] == labels[label] + (found.group(0) if found else "")
        if found:
            kind, value = gain.split()
            assert kind == found["type"]
            # The sentence rounds to 2 significant digits, the table to 4 decimals.
            assert float(value) == pytest.approx(float(found["gain"]), rel=0.05)


def test_a_100_column_terminal_gets_every_reason_whole_and_nothing_cut(
    document: dict[str, Any],
) -> None:
    screen = on_terminal([FIXTURE, "--explain"], columns=100)
    assert screen.exit_code == 0, screen.text
    assert "…" not in screen.text and max(len(line) for line in screen.lines) <= 100
    flat = " ".join(screen.text.split())  # a reason longer than the line wraps at a space
    for reason in {GAIN.sub("", job["why"]) for job in document["explanation"]["jobs"]}:
        assert flat.count(reason) == 1, reason
    assert set(_job_rows(screen)) == {f"job-{i}" for i in range(96)}


def test_an_80_column_terminal_squeezes_numbers_never_the_job_ids() -> None:
    screen = on_terminal([FIXTURE, "--explain"], columns=80)
    assert screen.exit_code == 0, screen.text
    rows = _job_rows(screen)
    assert set(rows) == {f"job-{i}" for i in range(96)}
    assert all(cells[-2] in ("R1", "R2") for cells in rows.values())


def test_a_gavel_name_is_said_under_the_status_line() -> None:
    screen = on_terminal([FIXTURE, "--policy", "max_min_fairness_packed"], columns=120)
    assert screen.exit_code == 0, screen.text
    status, note = screen.lines[:2]
    assert status.startswith("max_min_fairness  status optimal")
    assert note == (
        "note: 'max_min_fairness_packed' is Gavel's name: solved as max_min_fairness "
        "with space_sharing=true"
    )


def test_the_json_document_keeps_every_why_whole() -> None:
    screen = on_terminal([FIXTURE, "--explain", "--format", "json"], columns=80)
    parsed = json.loads(screen.text)
    whys = [job["why"] for job in parsed["explanation"]["jobs"]]
    assert len(whys) == 96 and all(GAIN.search(why) for why in whys)


def test_numbers_have_one_format(explained: Screen) -> None:
    for cells in _job_rows(explained).values():
        numbers = cells[1:6]  # k80, p100, v100, throughput, norm. share
        assert all(re.fullmatch(r"\d+\.\d{4}", cell) for cell in numbers), cells
    used = next(line for line in explained.lines if line.startswith("│ k80 "))
    assert re.search(r"24\.0000", used)


def test_the_footer_says_what_the_pareto_stage_did(explained: Screen) -> None:
    assert "pareto every job at the level" not in explained.text
    assert "Pareto stage: not needed: every job is held at the max-min level" in explained.text


def test_policies_shows_every_option_name_at_80_columns() -> None:
    screen = on_terminal(["policies"], columns=80)
    assert screen.exit_code == 0, screen.text
    listing = json.loads(on_terminal(["policies", "--json"], columns=80).text)
    assert len(listing) >= 10
    for policy in listing:
        assert f"{policy['name']} (" in screen.text
        for option in policy["options"].get("properties", {}):
            assert re.search(rf"^  -o {option}=", screen.text, re.MULTILINE), option
        for gavel in policy["gavel_names"]:
            assert gavel in screen.text
    assert "…" not in screen.text
