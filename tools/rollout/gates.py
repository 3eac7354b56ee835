"""The gates of each wave, as `make rollout` runs them and as the dry run and the offline plan list them."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from components.config.environment import EnvironmentSpec
from components.config.model_catalog import read_model_catalog
from components.config.stacks import GLOBAL, StackSlice, region_stack_name
from components.domain.federation_members import search_members
from components.domain.stack_split import environment_stacks
from components.federation.placement import federated_models, member_regions
from components.k8s.names import cluster_name
from stacks.config import environment_file_config
from tools.plan.model import Plan
from tools.rollout.bringup import CATALOG_CRD_CHARTS, Report, check_bring_up, stack_own_configs
from tools.rollout.ci import stack_regions
from tools.rollout.health import (
    Check,
    ClusterProbe,
    HttpGet,
    ProbeError,
    federated_models_check,
    federation_checks,
    gateway_checks,
    region_checks,
    search_checks,
)
from tools.rollout.loadtest import Sample, run_load_test
from tools.rollout.reach import location_of, reaches_gateway
from tools.rollout.slo import NotTested, SloGate, SloResult, SloTarget, region_target, run_target


def stack_health(
    *,
    env: EnvironmentSpec,
    env_name: str,
    cluster_probe: Callable[[Any], ClusterProbe],
    http_get: HttpGet,
    outputs_of: Callable[[str], Mapping[str, Any]],
) -> Callable[[str, Mapping[str, Any]], list[Check]]:
    """stack name, its outputs -> the health checks of what that stack's wave created, as seen from where the wave
    runs (tools/rollout/reach.py: a gateway the runner cannot reach is not waited for). Other stacks' outputs (the
    anchor's tenant keys and Karmada kubeconfig, the members' gateways) come from `outputs_of`."""
    slices = {s.name: s for s in environment_stacks(env, env_name)}
    anchor = environment_stacks(env, env_name)[0].name
    members = [cluster_name(env_name, r) for r in member_regions(env)]
    host = env.federation.host if env.federation.enabled else None
    host_joins_in_its_wave = env.federation.member_mode == "pull" and any(r.name == host for r in member_regions(env))

    def karmada() -> ClusterProbe:
        kubeconfig = outputs_of(anchor).get("karmadaKubeconfig")
        if kubeconfig is None:
            raise ProbeError("no karmadaKubeconfig output in the federation host's stack")
        return cluster_probe(kubeconfig)

    def indexed_in(slice_: StackSlice) -> list[str]:
        """The PediaClusters a stack creates on the host (stacks/search.py): the host's own in the host's stack,
        every other member's in the global stack; all of them in one stack."""
        indexed = [r.name for r in search_members(env)]
        if slice_.kind == "region":
            indexed = [r for r in indexed if r == host == slice_.region]
        elif slice_.kind == "global":
            indexed = [r for r in indexed if r != host]
        return [cluster_name(env_name, env.region(r)) for r in indexed]

    def search(slice_: StackSlice, outputs: Mapping[str, Any]) -> list[Check]:
        members = indexed_in(slice_)
        if host is None or not members:  # before asking the host's stack for its outputs
            return []
        host_cluster = cluster_name(env_name, env.region(host))
        host_stack = region_stack_name(env_name, host) if slice_.kind == "global" else slice_.name
        host_outputs = outputs_of(host_stack) if slice_.kind == "global" else outputs
        probe = _cluster_of(cluster_probe, host_outputs, host, host_stack)
        return search_checks(host_region=host, host_cluster=host_cluster, members=members, host=probe)

    def checks(stack: str, outputs: Mapping[str, Any]) -> list[Check]:
        @functools.cache
        def api_keys() -> Mapping[str, str]:  # asked once per wave, not on every poll
            return outputs.get("apiKeys") or outputs_of(anchor).get("apiKeys") or {}

        @functools.cache
        def gateway_ca() -> str | None:
            return (outputs if stack == anchor else outputs_of(anchor)).get("gatewayCa")

        def trusting_get(url: str, headers: Mapping[str, str]) -> tuple[int, Any]:
            """A gateway's certificate verifies against the environment's CA when cert-manager issued it."""
            ca = gateway_ca()
            return http_get(url, headers, ca_pem=ca) if ca else http_get(url, headers)

        reaches = _gateway_reach(env, slices[stack], outputs, env_name, outputs_of)

        def reachable(region: str, gateways: Mapping[str, Any]) -> Mapping[str, Any] | None:
            found = gateways.get(region)
            return found if found is not None and reaches(region) else None

        if slices[stack].kind == "global":
            if not env.federation.enabled:
                return []
            found = federation_checks(members=members, karmada=karmada)
            federated = [m.name for m in federated_models(env)]
            if federated:
                found.append(federated_models_check(names=federated, karmada=karmada))
                for region in member_regions(env):
                    gateways = outputs_of(region_stack_name(env_name, region.name)).get("gateways") or {}
                    found += gateway_checks(
                        env=env,
                        region=region.name,
                        gateway=reachable(region.name, gateways),
                        api_keys=api_keys,
                        http_get=trusting_get,
                        federated=True,
                    )
            return found + search(slices[stack], outputs)

        gateways = outputs.get("gateways") or {}

        def cluster(region: str) -> Callable[[], ClusterProbe]:
            return _cluster_of(cluster_probe, outputs, region, stack)

        found = [
            check
            for region in stack_regions(env, slices[stack])
            for check in region_checks(
                env=env,
                region=region,
                gateway=reachable(region, gateways),
                api_keys=api_keys,
                cluster=cluster(region),
                http_get=trusting_get,
            )
        ]
        if (
            host_joins_in_its_wave
            and host is not None
            and slices[stack].kind == "region"
            and slices[stack].region == host
        ):
            host_cluster = cluster_name(env_name, env.region(host))
            found += federation_checks(members=[host_cluster], karmada=karmada, name="karmada host member")
        return found + search(slices[stack], outputs)

    return checks


def _cluster_of(
    cluster_probe: Callable[[Any], ClusterProbe], outputs: Mapping[str, Any], region: str, stack: str
) -> Callable[[], ClusterProbe]:
    """A region's cluster through the kubeconfig in `stack`'s `kubeconfigs` output (`outputs`), made when asked."""

    def make() -> ClusterProbe:
        kubeconfigs = outputs.get("kubeconfigs")
        kubeconfig = kubeconfigs.get(region) if isinstance(kubeconfigs, Mapping) else None
        if kubeconfig is None:
            raise ProbeError(f"no kubeconfig for {region} in {stack}'s kubeconfigs output")
        return cluster_probe(kubeconfig)

    return make


def _gateway_reach(
    env: EnvironmentSpec,
    piece: StackSlice,
    outputs: Mapping[str, Any],
    env_name: str,
    outputs_of: Callable[[str], Mapping[str, Any]],
) -> Callable[[str], bool]:
    """region -> can the runner of `piece`'s wave call that region's gateway (tools/rollout/reach.py)?"""
    where = location_of(env, piece)
    # A runner inside a network calls out through that region's NAT (its stack's `egressIps`).
    runner_outputs = outputs
    if piece.kind == "global" and where is not None and where.region is not None:
        runner_outputs = outputs_of(region_stack_name(env_name, where.region))
    egress = list(runner_outputs.get("egressIps") or [])
    return lambda region: where is not None and reaches_gateway(env, where, region, egress)


def slo_gate(
    *,
    env: EnvironmentSpec,
    env_name: str,
    outputs_of: Callable[[str], Mapping[str, Any]],
    load_test: Callable[..., tuple[list[Sample], float]] = run_load_test,
) -> SloGate | None:
    """The SLO gate of each wave (tools/rollout/slo.py), None without `rollout.slo`: the gateways it tests, as seen
    from where the wave runs, and the test of one, with the SLO tenant's key and the gateways' CA from the anchor's
    outputs."""
    slo = env.rollout.slo
    if slo is None:
        return None
    slices = {s.name: s for s in environment_stacks(env, env_name)}
    anchor = environment_stacks(env, env_name)[0].name

    def targets(wave: str, stack: str, outputs: Mapping[str, Any]) -> list[SloTarget | NotTested]:
        piece = slices[stack]
        if piece.kind == "global":
            return [NotTested(None, "the global wave creates no gateway of its own")]
        reaches = _gateway_reach(env, piece, outputs, env_name, outputs_of)
        gateways = outputs.get("gateways") or {}
        return [
            region_target(env, slo, wave, region, gateways.get(region), reaches(region))
            for region in stack_regions(env, piece)
        ]

    def run(wave: str, target: SloTarget) -> SloResult:
        anchor_outputs = outputs_of(anchor)
        return run_target(
            slo=slo,
            wave=wave,
            target=target,
            api_keys=lambda: anchor_outputs.get("apiKeys") or {},
            ca_pem=anchor_outputs.get("gatewayCa"),
            load_test=load_test,
        )

    return SloGate(slo, targets, run)


def offline_slo_gate(env: EnvironmentSpec, env_name: str, plans: Mapping[str, Plan]) -> SloGate | None:
    """The SLO gate as listed from the offline plans (the dry run, plan.md): every stack's outputs are its planned
    ones; no request is sent."""
    return slo_gate(env=env, env_name=env_name, outputs_of=lambda s: plans[s].outputs, load_test=_no_load_test)


def _no_load_test(base_url: str, *_: Any, **__: Any) -> tuple[list[Sample], float]:
    raise ProbeError(f"the dry run sends no request to {base_url}")


def _no_credentials(_: Any) -> ClusterProbe:
    raise ProbeError("the dry run reaches no cluster")


def _no_http(url: str, _: Mapping[str, str]) -> tuple[int, Any]:
    raise ProbeError(f"the dry run sends no request to {url}")


def offline_gates(
    env: EnvironmentSpec, env_name: str, plans: Mapping[str, Plan]
) -> Callable[[str, Mapping], list[Check]]:
    """The gates as listed from the offline plans: every other stack's outputs are its planned ones; no check runs."""
    return stack_health(
        env=env,
        env_name=env_name,
        cluster_probe=_no_credentials,
        http_get=_no_http,
        outputs_of=lambda s: plans[s].outputs,
    )


def bring_up(project_dir: Path, env: EnvironmentSpec, env_name: str, plans: Mapping[str, Plan]) -> Report:
    """The bring-up check (tools/rollout/bringup.py) of an environment's offline plans, with its stacks' own files."""
    return check_bring_up(
        env,
        env_name,
        plans,
        offline_gates(env, env_name, plans),
        own_configs=stack_own_configs(project_dir, env, env_name),
        catalog_files=read_model_catalog(project_dir),
        crd_charts=CATALOG_CRD_CHARTS,
        # What a slice stack's program reads (a single stack's own file is its environment).
        environment_config=(
            environment_file_config(f"{env_name}.{GLOBAL}", project_dir) if env.stack_layout() == "perRegion" else None
        ),
    )
