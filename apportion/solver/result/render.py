"""An answer as JSON bytes, for the command line and the service.

A result whose jobs are written as columns (`JobTable.layout`) has them written by orjson straight
from their numpy arrays, with no Python object per entry; the rest of the document, and every
other answer, is pydantic's own JSON.
"""

from __future__ import annotations

import orjson
from pydantic import BaseModel

from apportion.solver.result.document import SolveResult
from apportion.solver.result.table import JobTable


def answer_json(answer: BaseModel, indent: bool = False) -> bytes:
    """`answer` as JSON (indented by two spaces with `indent`)."""
    jobs = getattr(answer, "jobs", None)
    if not (isinstance(answer, SolveResult) and isinstance(jobs, JobTable)) or (
        jobs.layout == "rows"
    ):
        return answer.__pydantic_serializer__.to_json(answer, indent=2 if indent else None)
    rest = answer.model_dump(mode="json", exclude={"jobs"})
    document = {
        name: jobs.columns() if name == "jobs" else rest[name]
        for name in SolveResult.model_fields
        if name == "jobs" or name in rest
    }
    options = orjson.OPT_SERIALIZE_NUMPY | (orjson.OPT_INDENT_2 if indent else 0)
    return orjson.dumps(document, option=options)
