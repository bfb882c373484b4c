"""`python -m apportion.api`: the service on APPORTION_HOST:APPORTION_PORT (default
127.0.0.1:8000)."""

from __future__ import annotations

import uvicorn

from apportion.api.connections import bounded_headers
from apportion.api.logs import LOG_CONFIG
from apportion.api.settings import Settings


def main() -> None:
    settings = Settings()
    uvicorn.run(
        "apportion.api.main:app",
        host=settings.host,
        port=settings.port,
        http=bounded_headers(settings.header_timeout, settings.max_header_bytes),
        # SIGTERM lets running solves finish, each bounded by the time-limit cap (requests
        # still waiting for a worker are answered 503 at once: api.lifecycle).
        timeout_graceful_shutdown=int(settings.max_time_limit + settings.stop_grace_seconds) + 1,
        log_level=settings.log_level,
        log_config=LOG_CONFIG,  # uvicorn's lines as JSON, as the service's own are
    )


if __name__ == "__main__":
    main()
