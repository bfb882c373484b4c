"""Loaders that turn the reference systems' published data into snapshots, and the builder of
the bundled fixtures. `SOURCE` holds the raw data they read (see its README); `FIXTURES` the
snapshots built from it."""

from __future__ import annotations

from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "source"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
