"""GCP regions: said to be unchecked, with the commands that check them by hand.

The equivalent checks need google-cloud-compute (accelerator types per zone, regional GPU
quotas, reservations) and google-cloud-storage (model files), which this project does not
depend on; preflight says so instead of reporting a pass it never verified.
"""

from __future__ import annotations

from components.catalog.machines import machine
from components.config.environment import EnvironmentSpec
from components.config.region import RegionSpec
from components.domain.gateways import gateway_hostname, has_gateway
from tools.preflight.aws_models import models_in
from tools.preflight.findings import Finding


def gcp_not_checked(env: EnvironmentSpec, region: RegionSpec) -> Finding:
    accelerators = sorted({m.accelerator for p in region.gpu_pools if (m := machine(p.machine_type)) and m.accelerator})
    zones = sorted({z for p in region.gpu_pools for z in region.pool_zones(p)}) or region.zones
    models = ", ".join(m.name for _, m in models_in(env, region))
    by_hand = [
        f"gcloud compute accelerator-types list --project {region.project} "
        f'--filter="zone:({" ".join(zones)})' + (f' AND name:({" ".join(accelerators)})"' if accelerators else '"'),
        f"gcloud compute regions describe {region.region} --project {region.project} "
        '--flatten=quotas --filter="quotas.metric~GPUS" --format="table(quotas.metric,quotas.limit,quotas.usage)"',
        f"gcloud compute reservations list --project {region.project}",
    ]
    # A pool consuming a named reservation needs it to hold maxSize VMs of its type in its zone.
    by_hand += [
        f"gcloud compute reservations describe {p.capacity.reservation_id} --project {region.project} "
        f'--zone {region.pool_zones(p)[0]} --format="value(specificReservation.count,'
        f'specificReservation.instanceProperties.machineType)" (want >= {p.max_size} x {p.machine_type})'
        for p in region.gpu_pools
        if p.capacity.type == "reservation"
    ]
    return Finding(
        region.name,
        "gcp",
        f"project {region.project}",
        "not checked",
        "GPU offerings per zone, regional GPU quotas, reservations"
        + (f" and model files ({models})" if models else "")
        + " are not checked: google-cloud-compute and google-cloud-storage are not dependencies of preflight",
        "check by hand: " + "; ".join(by_hand),
        {"commands": by_hand},
    )


ZONE_CHECK = "gateway dns zone"


def gcp_gateway_zone_not_checked(env: EnvironmentSpec) -> list[Finding]:
    """The Cloud DNS zone ExternalDNS writes the public GCP gateways' names into, said unchecked with the command that
    checks it: ExternalDNS filters it by name only (stacks/gateway_names.py), so it must be public and its DNS name
    the domain or a parent of every name (google-cloud-dns is not a dependency of preflight)."""
    zone = env.gateway.dns.cloud_dns_zone
    public = [r for r in env.regions if r.cloud == "gcp" and has_gateway(env, r) and r.gateway.exposure == "public"]
    if env.gateway.dns.publisher != "externalDns" or zone is None or not public:
        return []
    names = [gateway_hostname(env, r) for r in public]
    command = (
        f'gcloud dns managed-zones describe {zone} --project {public[0].project} --format="value(dnsName,visibility)"'
    )
    return [
        Finding(
            public[0].name,
            ZONE_CHECK,
            f"Cloud DNS zone {zone}",
            "not checked",
            "the zone's visibility and DNS name are not checked: google-cloud-dns is not a dependency of preflight",
            f"check by hand: {command} (want: public, and a DNS name that {', '.join(names)} end in, e.g. "
            f"{env.gateway.domain}.)",
            {"commands": [command]},
        )
    ]
