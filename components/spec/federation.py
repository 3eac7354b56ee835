"""Karmada federation across the environment's clusters."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from pydantic import Field

from components.spec.base import Issue, Spec

if TYPE_CHECKING:
    from components.spec.environment import EnvironmentSpec


class FederationSpec(Spec):
    enabled: bool = Field(False, description="Federate the environment's clusters with Karmada.")
    host: str | None = Field(None, description="Region entry whose cluster hosts the Karmada control plane.")


def check_federation(env: EnvironmentSpec) -> Iterator[Issue]:
    fed = env.federation
    names = [r.name for r in env.regions]
    if fed.host is not None and fed.host not in names:
        yield Issue("federation.host", f"no region named {fed.host!r}; use one of {', '.join(names)}")
    if not fed.enabled:
        return
    if fed.host is None:
        yield Issue("federation.host", "required when federation is enabled; name the hosting region")
    if len(env.regions) < 2:
        yield Issue("federation.enabled", "federation needs at least two clusters; add a region or disable it")
