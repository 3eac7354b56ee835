"""The test suite. Set here, before the suite imports anything: its heap is millions of long-lived objects (the
provider SDKs' classes, plans, parsed CRDs), and at CPython's default threshold (700 allocations) the collector walks all
of it again so often that it costs a sixth of a worker's CPU, collection included. Every 50 000 instead; what collection
imported is then frozen out of every scan (tests/conftest.py)."""

import gc

gc.set_threshold(50_000, 10, 10)
