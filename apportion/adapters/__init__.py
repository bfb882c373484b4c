"""Glue between apportion and the schedulers that enact its decisions."""
