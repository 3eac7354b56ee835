"""The test suite. Set here, before the suite imports anything: its heap is millions of long-lived objects (the
provider SDKs' classes, plans, parsed CRDs), and at CPython's default threshold (700 allocations) the collector walks
them so often that it took 5.4 of 19.3 CPU-s running test_cel_rules, test_policy_classes and test_preflight (2.5 s
every 50 000 allocations, mostly freeing the evaluations' garbage), and a fifth of each worker's collecting. What
collection imported is then frozen out of every scan (tests/conftest.py)."""

import gc

gc.set_threshold(50_000, 10, 10)
