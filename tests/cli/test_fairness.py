"""The new policies from the command line: chosen by name, options with -o KEY=VALUE."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_runner import invoke
from tests.formulations.fairness.test_space_sharing import pair_snapshot


def test_water_filling_with_space_sharing_from_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(pair_snapshot(0.8, 0.6)))
    result = invoke(
        [str(path), "--policy", "water_filling", "--format", "json", "-o", "space_sharing=true"],
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["policy"] == "water_filling"
    assert abs(body["objective"] - 2 / 3) < 1e-9
    assert body["summary"]["space_sharing"]["pair_columns"] == 1


def test_hierarchical_without_entities_is_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(pair_snapshot(0.8, 0.6)))
    result = invoke([str(path), "--policy", "hierarchical"])
    assert result.exit_code == 2
    assert "entities" in result.output
