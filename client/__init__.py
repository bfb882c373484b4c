"""Typed clients for a running apportion service: the library's result objects over HTTP."""
