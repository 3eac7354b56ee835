"""Plausible provider outputs, so that the program's output-dependent logic runs offline.

Values are derived from the resource's name (stable across runs), shaped like the real
thing (ARNs, ids, endpoints, certificates) but pointing at nothing.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi.runtime import mocks, rpc

ACCOUNT_ID = "123456789012"
STACK_REFERENCE = "pulumi:pulumi:StackReference"


@dataclass(frozen=True)
class StackOutputs:
    """A planned stack's outputs as a StackReference reads them: plain values, and which are secret."""

    values: dict
    secret: frozenset[str] = field(default_factory=frozenset)


_FAKE_PEM = "-----BEGIN CERTIFICATE-----\nTU9DSw==\n-----END CERTIFICATE-----\n"
FAKE_CA_DATA = base64.b64encode(_FAKE_PEM.encode()).decode()


def _hex(seed: str, length: int = 17) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:length]


def _uid(seed: str) -> str:
    h = _hex(seed, 32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def read_namespace_uid(resource_name: str) -> str:
    """The UID the offline plan gives a Namespace read by name (`new_resource`): the rehearsal puts the live one
    back (tools/rehearsal/runner.py)."""
    return _uid(resource_name)


def service_account_token(resource_name: str) -> str:
    """The token (base64, as a Secret's `data` holds it) the offline plan gives a service-account-token Secret, which
    its cluster's token controller fills in for real: the rehearsal puts the live one back
    (tools/rehearsal/karmada_push.py)."""
    return base64.b64encode(f"mock-token-{_hex(resource_name, 32)}".encode()).decode()


def _public_ip(seed: str, first_octet: int) -> str:
    n = int(_hex(seed, 6), 16)
    return f"{first_octet}.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


def _aws(typ: str, name: str, inputs: dict, region: str) -> tuple[str, dict]:
    service = typ.split(":")[1].split("/")[0]
    kind = typ.rsplit(":", 1)[-1]
    h = _hex(name)
    physical = inputs.get("name") or f"{name}-{h[:7]}"
    out: dict = {"arn": f"arn:aws:{service}:{region}:{ACCOUNT_ID}:{kind.lower()}/{physical}"}
    rid = physical
    prefixes = {
        "Vpc": "vpc",
        "Subnet": "subnet",
        "SecurityGroup": "sg",
        "InternetGateway": "igw",
        "NatGateway": "nat",
        "RouteTable": "rtb",
        "Eip": "eipalloc",
        "LaunchTemplate": "lt",
        "PlacementGroup": "pg",
        "DefaultSecurityGroup": "sg",
        "NetworkInterface": "eni",
    }
    if kind in prefixes:
        rid = f"{prefixes[kind]}-{h}"
    if typ == "aws:eks/cluster:Cluster":
        oidc = _hex(name, 32).upper()
        out |= {
            "endpoint": f"https://{oidc}.gr7.{region}.eks.amazonaws.com",
            "certificateAuthority": {"data": FAKE_CA_DATA},
            "identities": [{"oidcs": [{"issuer": f"https://oidc.eks.{region}.amazonaws.com/id/{oidc}"}]}],
            "name": physical,
            "vpcConfig": {**inputs.get("vpcConfig", {}), "clusterSecurityGroupId": f"sg-{h}", "vpcId": f"vpc-{h}"},
        }
    elif typ == "aws:iam/role:Role":
        out |= {"arn": f"arn:aws:iam::{ACCOUNT_ID}:role/{physical}", "name": physical}
    elif typ == "aws:iam/policy:Policy":
        out |= {"arn": f"arn:aws:iam::{ACCOUNT_ID}:policy/{physical}", "name": physical}
    elif typ == "aws:iam/openIdConnectProvider:OpenIdConnectProvider":
        host = str(inputs.get("url", "oidc")).removeprefix("https://")
        out["arn"] = rid = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{host}"
    elif typ == "aws:kms/key:Key":
        key_id = f"{h[:8]}-{h[8:12]}-4{h[12:15]}-a{h[15:17]}0-{_hex(name + 'k', 12)}"
        out |= {"keyId": key_id, "arn": f"arn:aws:kms:{region}:{ACCOUNT_ID}:key/{key_id}"}
        rid = key_id
    elif typ == "aws:ec2/launchTemplate:LaunchTemplate":
        out |= {"latestVersion": 1, "defaultVersion": 1}
    elif typ.startswith("aws:s3/bucket"):
        bucket = inputs.get("bucket") or physical
        out |= {
            "bucket": bucket,
            "arn": f"arn:aws:s3:::{bucket}",
            "bucketRegionalDomainName": f"{bucket}.s3.{region}.amazonaws.com",
        }
        rid = bucket
    elif typ == "aws:ec2/eip:Eip":
        out["publicIp"] = _public_ip(name, 3)
    elif typ == "aws:route53/zone:Zone":
        # Route 53 hosted zone ids: "Z" and 13 to 21 capitals and digits.
        out["zoneId"] = rid = "Z" + _hex(name, 20).upper()
    elif typ == "aws:eks/nodeGroup:NodeGroup":
        group = inputs.get("nodeGroupName") or physical
        u = _hex(name + "/uuid", 32)
        uuid = f"{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}"
        # EKS: arn:aws:eks:<region>:<account>:nodegroup/<cluster>/<nodegroup>/<uuid>
        out["arn"] = (
            f"arn:aws:eks:{region}:{ACCOUNT_ID}:nodegroup/{inputs.get('clusterName', 'cluster')}/{group}/{uuid}"
        )
        out["resources"] = [{"autoscalingGroups": [{"name": f"eks-{physical}-{h[:8]}"}]}]
    return rid, out


def _gcp(typ: str, name: str, inputs: dict) -> tuple[str, dict]:
    project = inputs.get("project", "mock-project")
    physical = inputs.get("name") or f"{name}-{_hex(name)[:7]}"
    kind = typ.rsplit(":", 1)[-1]
    rid = f"projects/{project}/{kind.lower()}s/{physical}"
    out: dict = {"name": physical, "selfLink": f"https://www.googleapis.com/compute/v1/{rid}", "project": project}
    if typ == "gcp:container/cluster:Cluster":
        ip = int(_hex(name, 4), 16)
        out |= {
            "endpoint": f"34.{ip % 250}.{(ip // 250) % 250}.{ip % 200 + 10}",
            "masterAuth": {"clusterCaCertificate": FAKE_CA_DATA},
        }
    elif typ == "gcp:serviceaccount/account:Account":
        email = f"{inputs.get('accountId', physical)}@{project}.iam.gserviceaccount.com"
        out |= {"email": email, "member": f"serviceAccount:{email}", "uniqueId": str(int(_hex(name, 12), 16))}
        rid = f"projects/{project}/serviceAccounts/{email}"
    elif typ.startswith("gcp:storage/bucket:Bucket"):
        out["url"] = f"gs://{physical}"
    elif typ == "gcp:compute/address:Address":
        out["address"] = _public_ip(name, 34)
    return rid, out


def _random(typ: str, name: str, inputs: dict) -> tuple[str, dict]:
    length = int(inputs.get("length", 32))
    value = (_hex(name, 64) * 4)[:length]
    return name, {"result": value}


def _tls(typ: str, name: str, inputs: dict) -> tuple[str, dict]:
    pem = _FAKE_PEM
    outputs = {
        "tls:index/privateKey:PrivateKey": {
            "privateKeyPem": "-----BEGIN PRIVATE KEY-----\nTU9DSw==\n-----END PRIVATE KEY-----\n",
            "publicKeyPem": "-----BEGIN PUBLIC KEY-----\nTU9DSw==\n-----END PUBLIC KEY-----\n",
        },
        "tls:index/certRequest:CertRequest": {"certRequestPem": pem},
    }
    return name, outputs.get(typ, {"certPem": pem})


def _kubernetes(typ: str, name: str, inputs: dict) -> tuple[str, dict]:
    """What the API server fills in: a load balancer's address, a service account token."""
    out: dict = {}
    spec = inputs.get("spec") or {}
    if typ == "kubernetes:core/v1:Service" and spec.get("type") == "LoadBalancer":
        ingress = (
            {"ip": spec["loadBalancerIP"]}
            if spec.get("loadBalancerIP")
            else {"hostname": f"{name}-{_hex(name, 10)}.lb"}
        )
        out["status"] = {"loadBalancer": {"ingress": [ingress]}}
    elif typ == "kubernetes:core/v1:Secret" and inputs.get("type") == "kubernetes.io/service-account-token":
        out["data"] = {"token": service_account_token(name), "ca.crt": FAKE_CA_DATA}
    return f"{name}-id", out


def _project_number(project: str) -> int:
    return int(_hex(project, 10), 16) % 10**12


def _gcs_agent(project: str) -> dict:
    email = f"service-{_project_number(project)}@gs-project-accounts.iam.gserviceaccount.com"
    return {"emailAddress": email, "member": f"serviceAccount:{email}", "project": project}


def _transfer_agent(project: str) -> dict:
    email = f"project-{_project_number(project)}@storage-transfer-service.iam.gserviceaccount.com"
    subject = str(int(_hex(project + "sts", 14), 16))
    return {"email": email, "member": f"serviceAccount:{email}", "subjectId": subject, "project": project}


# Google-managed service agents of a project, as the provider's data sources return them.
_GCP_SERVICE_AGENTS: dict[str, Callable[[str], dict]] = {
    "gcp:storage/getProjectServiceAccount:getProjectServiceAccount": _gcs_agent,
    "gcp:storage/getTransferProjectServiceAccount:getTransferProjectServiceAccount": _transfer_agent,
}


def _existing_eks(args: dict, region: str) -> dict:
    """aws.eks.get_cluster of a cluster built elsewhere: what its owner's API would answer."""
    name = str(args.get("name"))
    oidc = _hex(name, 32).upper()
    h = _hex(name)
    return {
        "name": name,
        "endpoint": f"https://{oidc}.gr7.{region}.eks.amazonaws.com",
        "certificateAuthorities": [{"data": FAKE_CA_DATA}],
        "identities": [{"oidcs": [{"issuer": f"https://oidc.eks.{region}.amazonaws.com/id/{oidc}"}]}],
        "vpcConfig": {"clusterSecurityGroupId": f"sg-{h}", "vpcId": f"vpc-{h}"},
    }


def _existing_oidc_provider(args: dict, region: str) -> dict:
    url = str(args.get("url"))
    return {"url": url, "arn": f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{url.removeprefix('https://')}"}


def _existing_gke(args: dict, region: str) -> dict:
    name = str(args.get("name"))
    return {"name": name, "endpoint": _public_ip(name, 34), "masterAuths": [{"clusterCaCertificate": FAKE_CA_DATA}]}


# Data sources reading a cluster that already exists (regions[].cluster.existing).
_EXISTING_CLUSTERS: dict[str, Callable[[dict, str], dict]] = {
    "aws:eks/getCluster:getCluster": _existing_eks,
    "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": _existing_oidc_provider,
    "gcp:container/getCluster:getCluster": _existing_gke,
}


_BY_PACKAGE: dict[str, Callable[..., tuple[str, dict]]] = {
    "gcp": _gcp,
    "random": _random,
    "tls": _tls,
    "kubernetes": _kubernetes,
}


def reveal(value: Any) -> Any:
    """Secret values in plain text (the rehearsal computes and applies them; it writes no plan)."""
    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return reveal(value.get("value"))
        return {k: reveal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [reveal(v) for v in value]
    return value


# Outputs computed for real, in place of the mock, keyed by type token or provider package: (type token, inputs,
# provider reference) -> outputs. The rehearsal's working certificates and the addresses its cloud stand-in gives.
ComputedOutputs = Callable[[str, dict, str], dict]


class PlausibleMocks(mocks.Mocks):
    """Mock outputs per resource type; AWS ARNs carry the region of the resource's provider."""

    def __init__(
        self,
        provider_region: Callable[[str | None], str],
        stack_outputs: Mapping[str, StackOutputs] | None = None,
        computed: Mapping[str, ComputedOutputs] | None = None,
    ):
        self._provider_region = provider_region
        self._stack_outputs = stack_outputs or {}
        self._computed = computed or {}

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict]:
        typ, name, inputs = args.typ, args.name, args.inputs
        if typ == STACK_REFERENCE:
            return self._stack_reference(name, str(inputs.get("name", name)))
        if typ == "kubernetes:core/v1:Namespace" and args.resource_id:  # read by name: the API server's object
            return args.resource_id, {"metadata": {"name": args.resource_id, "uid": read_namespace_uid(name)}}
        package = typ.split(":", 1)[0]
        if package == "pulumi" or not args.custom:
            return f"{name}-id", dict(inputs)
        computed = self._computed.get(typ) or self._computed.get(package)
        if computed is not None:
            return f"{name}-id", {**inputs, **computed(typ, reveal(dict(inputs)), args.provider or "")}
        if package == "aws":
            rid, extra = _aws(typ, name, inputs, self._provider_region(args.provider))
        elif package in _BY_PACKAGE:
            rid, extra = _BY_PACKAGE[package](typ, name, inputs)
        else:
            rid, extra = f"{name}-id", {}
        return rid, {**inputs, **extra}

    def _stack_reference(self, name: str, qualified: str) -> tuple[str, dict]:
        """What the engine reads of a stack of the same environment: the outputs its own plan gave."""
        stack = qualified.rsplit("/", 1)[-1]
        if stack not in self._stack_outputs:
            raise KeyError(f"stack {stack!r} is referenced before it was planned; plan it first")
        referenced = self._stack_outputs[stack]
        return name, {"name": qualified, "outputs": referenced.values, "secretOutputNames": list(referenced.secret)}

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        return self._answer(args), []  # no check failures

    def _answer(self, args: mocks.MockCallArgs) -> dict[str, Any]:
        if args.token == "aws:index/getCallerIdentity:getCallerIdentity":
            return {"accountId": ACCOUNT_ID, "arn": f"arn:aws:iam::{ACCOUNT_ID}:user/plan", "userId": "PLAN"}
        if args.token == "aws:index/getPartition:getPartition":
            return {"partition": "aws", "dnsSuffix": "amazonaws.com"}
        if args.token in _EXISTING_CLUSTERS:
            return _EXISTING_CLUSTERS[args.token](args.args, self._provider_region(args.provider))
        if args.token in _GCP_SERVICE_AGENTS:
            return _GCP_SERVICE_AGENTS[args.token](str(args.args.get("project", "mock-project")))
        return {}
