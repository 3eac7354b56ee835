"""One API key per tenant, generated (never typed into config) and valid at every region's gateway.

Keys exist only as Pulumi secrets: the state holds them encrypted, the stack output `apiKeys` hands
them to the platform team, and each cluster gets them in a Kubernetes Secret the gateway's
SecurityPolicy reads. Replace a tenant's RandomPassword (`pulumi up --replace <urn>`) to rotate it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_random as random

KEY_LENGTH = 48  # letters and digits: ~285 bits, safe in a header without escaping


@dataclass(frozen=True, kw_only=True)
class TenantApiKeysArgs:
    tenants: Sequence[str]


class TenantApiKeys(pulumi.ComponentResource):
    keys: dict[str, pulumi.Output[str]]  # tenant -> key, each a secret

    def __init__(self, name: str, args: TenantApiKeysArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("inference-platform:serving:TenantApiKeys", name, None, opts)
        provider = random.Provider(name, opts=pulumi.ResourceOptions(parent=self))
        self.keys = {
            tenant: pulumi.Output.secret(
                random.RandomPassword(
                    f"{name}-{tenant}",
                    length=KEY_LENGTH,
                    special=False,
                    opts=pulumi.ResourceOptions(parent=self, provider=provider),
                ).result
            )
            for tenant in args.tenants
        }
        self.register_outputs({"tenants": list(self.keys)})
