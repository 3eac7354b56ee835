"""What the Pulumi program and its policy pack both read: GPU and machine facts, the node label schema, the names
the program renders, the priority classes of the pinned charts' pods, the gateway's priority headers.

`components` builds the platform with these and `policies` checks it against them. The pack is published apart
from the program (docs/policy.md), so this package imports only the standard library and the pack's own
requirements, never `components`, `stacks`, `tools` or `policies` (pyproject.toml, the import contracts).
"""
