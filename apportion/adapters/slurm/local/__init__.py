"""A small real Slurm cluster on this host, for the try-out and the tests: the Debian packages
it needs (`packages`) and the cluster itself (`cluster`)."""
