"""`solve estimate REQUEST.json`: throughputs estimated from a reference table, profiles and
observed progress, as POST /v1/estimate answers them (the same body, the same document)."""

from __future__ import annotations

import argparse
from pathlib import Path

from apportion.cli.inputs import UsageError, check_writable, read_json, write_stdout, write_text


def add_estimate(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    command = commands.add_parser(
        "estimate",
        help="Estimate throughputs (alone and in pairs) with their uncertainty.",
        description="REQUEST is POST /v1/estimate's body: {estimate, reference, jobs, "
        "observations, forget, pairs, options}. The answer is the estimate document; keep it "
        "and give it back with --estimate next time, with what was observed since.",
    )
    command.add_argument("request", type=Path, help="Request JSON file ('-' reads stdin).")
    command.add_argument(
        "--estimate",
        dest="kept",
        type=Path,
        help="The document a previous run wrote (its evidence is kept; the request adds to it).",
    )
    command.add_argument("--output", type=Path, help="Write the document to this file.")


def estimate_command(args: argparse.Namespace) -> int:
    """Estimate, and write the document as JSON (stdout or --output)."""
    import orjson

    from apportion.estimation import estimate
    from apportion.solver.errors import InputError

    if args.output is not None:
        check_writable(args.output, "--output")
    request = read_json(args.request)
    if args.kept is not None:
        if "estimate" in request:
            raise UsageError("estimate: given both in REQUEST and by --estimate; keep one")
        request = {**request, "estimate": read_json(args.kept)}
    try:
        document = estimate(request)
    except InputError as exc:
        raise UsageError(f"invalid input: {exc.one_line(limit=None)}") from None
    written = orjson.dumps(document.model_dump(mode="json"), option=orjson.OPT_INDENT_2)
    if args.output is not None:
        write_text(args.output, written, "--output")
    else:
        write_stdout(written)
    return 0
