"""Developer and CI tooling: offline plan, preflight, benchmarks."""
