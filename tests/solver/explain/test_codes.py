"""The reason vocabulary is documented: every code has its row in docs/EXPLANATIONS.md."""

from __future__ import annotations

from pathlib import Path

from apportion.solver.explain import Reason

DOC = Path(__file__).resolve().parents[3] / "docs" / "EXPLANATIONS.md"


def test_every_reason_code_is_documented() -> None:
    text = DOC.read_text()
    missing = [code.value for code in Reason if f"| `{code.value}` |" not in text]
    assert not missing, f"codes without a row in {DOC.name}: {missing}"
