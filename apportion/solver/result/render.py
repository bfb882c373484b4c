"""An answer as JSON bytes, for the command line and the service.

A result whose jobs the pipeline kept as a `JobTable` is written by orjson: as columns
(`JobTable.layout`) straight from their numpy arrays, with no Python object per entry; as rows
from its `JobResult`s (orjson writes the dataclasses in C, several times faster than pydantic
would). The rest of the document, and every other answer, is pydantic's own JSON.
"""

from __future__ import annotations

import orjson
from pydantic import BaseModel

from apportion.solver.result.document import SolveResult
from apportion.solver.result.table import JobTable


def answer_json(answer: BaseModel, indent: bool = False) -> bytes:
    """`answer` as JSON (indented by two spaces with `indent`)."""
    jobs = getattr(answer, "jobs", None)
    if not (isinstance(answer, SolveResult) and isinstance(jobs, JobTable)):
        return answer.__pydantic_serializer__.to_json(answer, indent=2 if indent else None)
    rest = answer.model_dump(mode="json", exclude={"jobs"})
    written = jobs.columns() if jobs.layout == "columns" else jobs.rows
    document = {
        name: written if name == "jobs" else rest[name]
        for name in SolveResult.model_fields
        if name == "jobs" or name in rest
    }
    options = orjson.OPT_SERIALIZE_NUMPY | (orjson.OPT_INDENT_2 if indent else 0)
    return orjson.dumps(document, option=options, default=_plain)


def _plain(value: object) -> object:
    """What orjson does not write itself (a numpy value it does not take), as Python."""
    tolist = getattr(value, "tolist", None)
    if tolist is None:
        raise TypeError(f"{type(value).__name__} is not JSON serializable")
    return tolist()
