"""Test suite. A regular package so that a stray top-level ``tests`` package installed by a
dependency (draccus, pulled in by lerobot, ships one) cannot shadow it in worker processes."""
