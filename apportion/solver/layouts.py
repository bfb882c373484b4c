"""The two layouts of a document's jobs, in its JSON Schema: a list of objects (rows), or one
array per field with an entry per job (columns). Snapshots take either (`snapshot.columnar`),
results write either (`result.table`)."""

from __future__ import annotations

from pydantic import BaseModel, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema


class RowsOrColumns:
    """JSON Schema marker of a field of jobs: its own schema (the list), or `columns`."""

    def __init__(self, columns: type[BaseModel]) -> None:
        self.columns = columns

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        self.columns.model_rebuild()
        columns = handler(self.columns.__pydantic_core_schema__)
        return {"anyOf": [handler(schema), columns]}
