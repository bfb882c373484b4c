"""Service settings, from APPORTION_* environment variables (e.g. APPORTION_WORKERS=4)."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

CORES = os.cpu_count() or 1


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="APPORTION_")

    host: str = Field(default="127.0.0.1", description="Address `python -m apportion.api` binds.")
    port: int = Field(default=8000, description="Port `python -m apportion.api` binds.")
    workers: int = Field(
        default=CORES,
        ge=1,
        description="Solver processes: solves running at once (default: one per core).",
    )
    queue_size: int = Field(
        default=64,
        ge=0,
        description="Requests that may wait for a busy worker; beyond, 503 + Retry-After.",
    )
    retry_after_seconds: int = Field(
        default=2, ge=1, description="Retry-After of a 503 when saturated."
    )
    solver_threads: int = Field(
        default=1,
        ge=1,
        le=CORES,
        description="Threads a solver may use; a request may ask for fewer, never more.",
    )
    default_time_limit: float = Field(
        default=60.0,
        gt=0,
        description="Seconds a solve gets when the request sets no time_limit and the policy has "
        "no default of its own (deadline_admission: 3 s).",
    )
    max_time_limit: float = Field(
        default=300.0, gt=0, description="The largest time_limit a request may ask for (422 above)."
    )
    stop_grace_seconds: float = Field(
        default=5.0,
        ge=0,
        description="A solve still running this long after its time limit has its worker ended.",
    )
    max_body_bytes: int = Field(
        default=256 * 2**20,
        ge=1024,
        description="Largest request body (413 above); 256 MiB holds a 1,000,000-job snapshot "
        "(about 170 bytes per job).",
    )
    body_timeout: float = Field(
        default=60.0, gt=0, description="Seconds to receive a whole request body (408 after)."
    )
    spool_dir: Path | None = Field(
        default=None,
        description="Where large request bodies and answers wait (in a folder of this service's, "
        "removed at shutdown); default /dev/shm when it can hold upload_budget_bytes, else the "
        "temp folder.",
    )
    upload_budget_bytes: int = Field(
        default=1024 * 2**20,
        ge=1024,
        description="Request-body bytes the service holds at once (being received, waiting or "
        "being solved); a request beyond is refused before its body is read, 503 + Retry-After. "
        "At least max_body_bytes, or the largest bodies are never taken.",
    )
    worker_max_rss_bytes: int = Field(
        default=256 * 2**20,
        ge=0,
        description="A solver process still this large after a request, having given back the "
        "memory it could, is replaced by a fresh one.",
    )
    header_timeout: float = Field(
        default=10.0,
        gt=0,
        description="Seconds a connection has to send a request's headers "
        "(`python -m apportion.api`; 408 and closed after).",
    )
    max_header_bytes: int = Field(
        default=64 * 2**10,
        ge=1024,
        description="Largest request line and headers together, in bytes "
        "(`python -m apportion.api`; 431 and closed above).",
    )
    allow_verbose: bool = Field(
        default=False,
        description="Let requests set options.verbose (solver logs on the server's stderr).",
    )
    log_level: str = Field(default="info", description="Level of the service's structured logs.")

    @model_validator(mode="after")
    def _budget_holds_the_largest_body(self) -> Settings:
        if self.upload_budget_bytes < self.max_body_bytes:
            raise ValueError("upload_budget_bytes must be at least max_body_bytes")
        return self
