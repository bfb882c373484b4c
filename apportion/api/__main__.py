"""`python -m apportion.api`: the service on APPORTION_HOST:APPORTION_PORT (default 127.0.0.1:8000)."""

from __future__ import annotations

import uvicorn

from apportion.api.settings import Settings


def main() -> None:
    settings = Settings()
    uvicorn.run(
        "apportion.api.main:app",
        host=settings.host,
        port=settings.port,
        # SIGTERM lets every admitted solve finish: each is bounded by the time-limit cap.
        timeout_graceful_shutdown=int(settings.max_time_limit + settings.stop_grace_seconds) + 1,
        log_level=settings.log_level,
    )


if __name__ == "__main__":
    main()
