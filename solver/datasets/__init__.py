"""Loaders that turn the reference systems' published data into snapshots."""
