"""A small real Ray cluster on this host, for the try-out and the adapter's tests."""
