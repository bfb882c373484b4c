"""The trace-kind registry: one line per kind, its reader found by name, the command line's
choices read from it."""

from __future__ import annotations

import importlib

import pytest

from apportion.cli.parser import parse
from apportion.simulator.kinds import KINDS, NAMES, find_kind
from apportion.simulator.sources import TraceSpec


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_kind_reads_its_bundled_trace(kind: object) -> None:
    from apportion.simulator.kinds import TraceKind

    assert isinstance(kind, TraceKind)
    source = "4" if kind.generated else None
    trace = TraceSpec(kind.name, source, jobs=5).load_trace()
    assert 0 < len(trace.jobs) <= 5
    assert callable(importlib.import_module(kind.module).from_spec)


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="choose one of gavel, poisson"):
        find_kind("alibaba")
    with pytest.raises(ValueError, match="unknown trace kind"):
        TraceSpec("alibaba")


def test_the_command_line_offers_the_registry_s_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(["simulate", "--help"])
    shown = capsys.readouterr().out
    for kind in KINDS:
        assert kind.name in shown and kind.cluster in shown
    assert set(NAMES) == {k.name for k in KINDS}
