"""Every Python and shell snippet of README.md and of the documentation site's pages (docs/),
executed as written.

Python snippets run as script files in a fresh interpreter (as a reader pastes them into a
file: a process pool's workers import that file again), from the repository root. Shell
snippets run in bash, `set -e`, in a scratch folder that sees the repository's `.venv`,
`fixtures`, `apportion`, `tests`, `bench` and `pyproject.toml` (so the files they write land there).
Snippets that call the service at 127.0.0.1:8000 get a real one, started as the README starts
it, on a free port written in place of 8000. A snippet that cannot run here is preceded by a
`<!-- not run: REASON -->` comment; every other `bash` or `python` block runs, so a new snippet
is tested unless its author says why not. The operators' guides to Slurm and Ray are read for
their links (the site's build) but not run: every command in them drives a live cluster as
root, which their adapters' tests start and drive themselves.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.api.service import Service, running_service

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Pages whose commands all drive a live cluster as root, with the tests that do instead.
NOT_RUN_PAGES = {
    "docs/SLURM.md": "tests/adapters/slurm starts a Slurm cluster and drives it",
    "docs/RAY.md": "tests/adapters/ray starts a Ray cluster and drives it",
}
PAGES = [README] + [
    page
    for page in sorted((ROOT / "docs").rglob("*.md"))
    if page.relative_to(ROOT).as_posix() not in NOT_RUN_PAGES
]
SERVICE = "127.0.0.1:8000"
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>.+?) -->")
RUNNABLE = ("bash", "python")
SECONDS = 600


@dataclass(frozen=True)
class Snippet:
    page: str  # relative to the repository's root
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    skipped: str  # the reason given in the comment above it, "" when it runs

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line} ({self.language})"

    @property
    def calls_service(self) -> bool:
        return SERVICE in self.code


def snippets(text: str, page: str = "README.md") -> list[Snippet]:
    """Every fenced block in `text`, with the `not run` reason written just above it."""
    found, lines = [], text.split("\n")
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if fence is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        above = NOT_RUN.search(lines[i - 1]) if i > 0 else None
        skipped = above.group("reason") if above else ""
        code = "\n".join(lines[i + 1 : end])
        found.append(Snippet(page, i + 1, fence.group(1), code, skipped))
        i = end + 1
    return found


ALL = [
    snippet
    for page in PAGES
    for snippet in snippets(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix())
]
RUN = [s for s in ALL if s.language in RUNNABLE and not s.skipped]


def test_every_runnable_snippet_runs_or_says_why_not() -> None:
    runnable = [s for s in ALL if s.language in RUNNABLE]
    assert len(RUN) >= 25, [s.name for s in RUN]
    assert {s.page for s in RUN} >= {"README.md", "docs/authors/index.md"}
    for page in NOT_RUN_PAGES:
        assert (ROOT / page).exists(), page
    for snippet in runnable:
        if snippet.skipped:
            assert len(snippet.skipped.split()) >= 4, f"{snippet.name}: give a reason"
    # A command in a block without a language would escape the test: there are none.
    untagged = [s for s in ALL if not s.language and s.code.lstrip().startswith((".venv", "solve"))]
    assert not untagged, [s.name for s in untagged]


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service(main=True) as running:
        yield running


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where `.venv/bin/...`, `fixtures/...` and `apportion/...` resolve as in the
    repository, and where files the snippets write (result.json, model.lp, ...) land."""
    folder = tmp_path_factory.mktemp("readme")
    (folder / ".venv").symlink_to(Path(sys.prefix))
    for name in ("fixtures", "apportion", "tests", "bench", "pyproject.toml"):
        (folder / name).symlink_to(ROOT / name)
    return folder


@pytest.mark.parametrize("snippet", RUN, ids=lambda s: s.name)
def test_snippet_runs_as_written(
    snippet: Snippet, request: pytest.FixtureRequest, scratch: Path, tmp_path: Path
) -> None:
    code = snippet.code
    if snippet.calls_service:
        service: Service = request.getfixturevalue("service")
        code = code.replace(SERVICE, service.base.removeprefix("http://"))
    if snippet.language == "python":
        script = tmp_path / "snippet.py"
        script.write_text(code, encoding="utf-8")
        command, cwd = [sys.executable, str(script)], ROOT
    else:
        command, cwd = ["bash", "-e", "-o", "pipefail", "-c", code], scratch
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    done = subprocess.run(
        command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=SECONDS
    )
    assert done.returncode == 0, f"{snippet.name}\n{code}\n---\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip(), f"{snippet.name} printed nothing"


#: The page each reader starts from, and the lines of a first screen.
SECTIONS = ("authors", "operators", "researchers", "contributors")
SCREEN = 30


@pytest.mark.parametrize("page", ["README.md", *(f"docs/{s}/index.md" for s in SECTIONS)])
def test_each_reader_finds_a_first_call_on_the_first_screen(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    first = next(s for s in snippets(text, page) if s.language in RUNNABLE)
    assert first.line <= SCREEN, f"{page}: the first command is at line {first.line}"


def test_the_philly_example_shows_what_its_text_says(scratch: Path) -> None:
    """The simulator page says 2D-LAS's average JCT is a fraction of YARN-CS's on the Philly
    sample; its command, run as written (with JSON out), shows it: under half."""
    (command,) = [s.code for s in ALL if "simulate philly" in s.code and s.skipped]
    done = subprocess.run(
        ["bash", "-e", "-c", f"{command} --format json --no-progress"],
        cwd=scratch,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=SECONDS,
    )
    assert done.returncode == 0, done.stderr
    jct = {row["policy"]: row["jct_mean"] for row in json.loads(done.stdout)}
    assert jct["2d_las"] < 0.5 * jct["yarn_cs"], jct


def test_ci_runs_the_readmes_test_command() -> None:
    """CI's script ends with the README's command for the whole suite, so what a newcomer runs
    is what CI runs (the extras it installs included: the docs site's test needs MkDocs)."""
    (command,) = [s.code for s in ALL if s.page == "README.md" and "-m pytest" in s.code]
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert script[-1] == command
    assert "'.[test,docs]'" in command
