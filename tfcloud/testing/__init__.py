"""Helpers for tests and benchmarks: real services on loopback (see tfcloud.testing.dockerd)."""
