"""uvicorn's own log lines (startup, shutdown, errors, one access line per request) rendered as
the service's are: one JSON object per line on stderr, so that a terminal or a log shipper
reads a single format. `python -m apportion.api` hands `LOG_CONFIG` to uvicorn."""

from __future__ import annotations

import logging
from typing import Any

import structlog
from structlog.typing import EventDict, WrappedLogger

#: uvicorn's access record carries its fields as the message's arguments, in this order.
ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")


def _access_fields(_: WrappedLogger, __: str, event: EventDict) -> EventDict:
    """An access line's client, method, path, HTTP version and status as fields of its own."""
    args = event.pop("positional_args", None)  # already formatted into the message
    record = event.get("_record")
    access = isinstance(record, logging.LogRecord) and record.name == "uvicorn.access"
    if access and isinstance(args, tuple) and len(args) == len(ACCESS_FIELDS):
        event.update(zip(ACCESS_FIELDS, args, strict=True))
        event["event"] = "access"
    return event


def json_formatter() -> logging.Formatter:
    """A stdlib formatter writing what the service's structured logs write (`api.main`)."""
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.stdlib.add_logger_name,
            _access_fields,
        ],
        pass_foreign_args=True,  # for `_access_fields`
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
    )


#: For `uvicorn.run(log_config=...)`: uvicorn's loggers (and any other library's warnings, by
#: the root logger) through `json_formatter` to stderr. uvicorn sets the level from
#: `log_level`.
LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": f"{__name__}.json_formatter"}},
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "stream": "ext://sys.stderr",
        }
    },
    "loggers": {
        "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "uvicorn.error": {"level": "INFO"},
        "uvicorn.access": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
    "root": {"handlers": ["stderr"], "level": "WARNING"},
}
