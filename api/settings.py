"""Service settings, from APPORTION_* environment variables."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="APPORTION_")

    host: str = "127.0.0.1"
    port: int = 8000
    max_time_limit: float = (
        300.0  # seconds; caps options.time_limit so a request cannot hog a worker
    )


settings = Settings()
