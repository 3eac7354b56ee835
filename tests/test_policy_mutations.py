"""A corpus of single insecure changes to the real dev and prod plans, as an attacker or a careless
engineer would make them: each one must be reported as mandatory, by the rule named for it.

Each mutation changes one thing in a copy of the plan's resources (what `make plan`
hands the pack), near-variants included: lower case, split CIDRs, wildcard ARNs, other
partitions, tokens under unusual keys.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from policies.framework import evaluate_stack
from policies.model import Resource
from policies.offline import plan_resources, plan_settings
from policies.rules import ALL_RULES
from tests.harness import PackBaseline, plan_for

Change = Callable[[list[Resource]], object]


@dataclass(frozen=True)
class Mutation:
    env: str
    rule: str
    what: str
    change: Change

    @property
    def id(self) -> str:
        return f"{self.env}:{self.rule}:{self.what}"


def named(rs: list[Resource], type_suffix: str, name: str) -> Resource:
    [found] = [r for r in rs if r.type.endswith(type_suffix) and r.name == name]
    return found


def props(rs: list[Resource], type_suffix: str, name: str) -> dict:
    return named(rs, type_suffix, name).props


def env_name(env: str, name: str) -> str:
    """Kubernetes objects are named <env>-<region>-<name> in the plan."""
    return f"{env}-{name}"


# --- AWS identity policies ----------------------------------------------------------------------------

GRANTS = [
    ("iam-no-risky-permissions", "all actions", "*", "*"),
    ("iam-no-risky-permissions", "s3:*", "s3:*", "*"),
    ("iam-no-risky-permissions", "lower-case GetObject on *", "s3:getobject", "*"),
    ("iam-no-risky-permissions", "CreateAccessKey", "iam:CreateAccessKey", "*"),
    ("iam-no-risky-permissions", "wildcarded PutBucketPolicy", "s3:PutBucketPol*", "*"),
    ("iam-no-risky-permissions", "secrets read", "secretsmanager:GetSecretValue", "*"),
    ("iam-no-risky-permissions", "ec2:*", "ec2:*", "*"),
    ("iam-passrole-scoped", "PassRole on *", "iam:PassRole", "*"),
    ("iam-passrole-scoped", "lower-case PassRole on role/*", "iam:passrole", "arn:aws:iam::123456789012:role/*"),
    ("iam-passrole-scoped", "Pass* on any account's roles", "iam:Pass*", "arn:aws:iam::*:role/model-*"),
    ("iam-policy-valid", "misspelled action", "s3:GetObjekt", "arn:aws:s3:::acme-models/*"),
    ("iam-policy-valid", "unknown service", "s4:GetObject", "arn:aws:s3:::acme-models/*"),
    ("iam-policy-valid", "resource of another service", "s3:GetObject", "arn:aws:kms:us-east-1:1:key/k"),
]


def grant(policy: str, action: str, resource: str) -> Change:
    def change(rs):
        document = json.loads(props(rs, ":RolePolicy", policy)["policy"])
        document["Statement"].append({"Effect": "Allow", "Action": action, "Resource": resource})
        props(rs, ":RolePolicy", policy)["policy"] = json.dumps(document)

    return change


ADMIN_ARNS = [
    "arn:aws:iam::aws:policy/AdministratorAccess",
    "arn:aws:iam::aws:policy/administratoraccess",
    "arn:aws-cn:iam::aws:policy/AdministratorAccess",
    "arn:aws-us-gov:iam::aws:policy/PowerUserAccess",
    "arn:aws:iam::aws:policy/IAMFullAccess",
    "arn:aws:iam::aws:policy/job-function/AdministratorAccess",
]


def attach(arn: str) -> Change:
    return lambda rs: props(rs, ":RolePolicyAttachment", "use1-node-0").update(policyArn=arn)


TRUSTS = [
    ("Principal *", {"Effect": "Allow", "Principal": "*", "Action": "sts:AssumeRole"}),
    ("AWS *", {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}),
    ("every account's root", {"Effect": "allow", "Principal": {"aws": ["arn:aws:iam::*:root"]}, "Action": "sts:*"}),
    ("NotPrincipal", {"Effect": "Allow", "NotPrincipal": {"AWS": "arn:aws:iam::1:root"}, "Action": "sts:AssumeRole"}),
    (
        "Google without subject",
        {
            "Effect": "Allow",
            "Principal": {"Federated": "accounts.google.com"},
            "Action": "sts:AssumeRoleWithWebIdentity",
        },
    ),
    (
        "CI OIDC with a wildcard subject",
        {
            "Effect": "Allow",
            "Principal": {"Federated": "arn:aws:iam::123456789012:oidc-provider/token.actions.example.com"},
            "Action": "sts:AssumeRoleWithWebIdentity",
            "Condition": {"StringLike": {"token.actions.example.com:sub": "repo:acme/*"}},
        },
    ),
]


def trust(statement: dict) -> Change:
    def change(rs):
        document = json.loads(props(rs, ":Role", "use1-model-server")["assumeRolePolicy"])
        document["Statement"].append(statement)
        props(rs, ":Role", "use1-model-server")["assumeRolePolicy"] = json.dumps(document)

    return change


def irsa(change_statement: Callable[[dict], None]) -> Change:
    def change(rs):
        document = json.loads(props(rs, ":Role", "use1-model-server")["assumeRolePolicy"])
        change_statement(document["Statement"][0])
        props(rs, ":Role", "use1-model-server")["assumeRolePolicy"] = json.dumps(document)

    return change


def _equals(statement: dict) -> dict:
    return statement["Condition"]["StringEquals"]


IRSA = [
    ("subject by StringLike", lambda s: s["Condition"].update(StringLike=s["Condition"].pop("StringEquals"))),
    ("wildcard subject", lambda s: _equals(s).update({k: "system:serviceaccount:*" for k in _equals(s) if "sub" in k})),
    ("no audience", lambda s: [_equals(s).pop(k) for k in list(_equals(s)) if k.endswith(":aud")]),
    ("no subject", lambda s: [_equals(s).pop(k) for k in list(_equals(s)) if k.endswith(":sub")]),
]

PUBLIC_KEY_STATEMENTS = [
    ("Principal *", {"Effect": "Allow", "Principal": "*", "Action": "kms:Decrypt", "Resource": "*"}),
    ("AWS list *", {"Effect": "Allow", "Principal": {"AWS": ["*"]}, "Action": "kms:*", "Resource": "*"}),
    (
        "condition that pins nothing",
        {
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": "kms:Decrypt",
            "Resource": "*",
            "Condition": {"Bool": {"aws:SecureTransport": "true"}},
        },
    ),
]


def key_policy(statement: dict) -> Change:
    return lambda rs: props(rs, ":Key", "use1-models").update(
        policy=json.dumps({"Version": "2012-10-17", "Statement": [statement]})
    )


def bucket_policy(statement: dict) -> Change:
    def change(rs):
        document = json.loads(props(rs, ":BucketPolicy", "use1-models")["policy"])
        document["Statement"].append(statement)
        props(rs, ":BucketPolicy", "use1-models")["policy"] = json.dumps(document)

    return change


PUBLIC_BUCKET_STATEMENTS = [
    ("Principal *", {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"}),
    ("AWS list *", {"Effect": "Allow", "Principal": {"AWS": ["*"]}, "Action": "s3:*", "Resource": "arn:aws:s3:::b"}),
    (
        "lower-case effect",
        {"Effect": "allow", "Principal": "*", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::b"},
    ),
]

# --- network --------------------------------------------------------------------------------------------

INTERNET = [
    ("0.0.0.0/0", ["0.0.0.0/0"]),
    ("host bits set", ["10.20.30.40/0"]),
    ("two halves", ["0.0.0.0/1", "128.0.0.0/1"]),
    ("four quarters", ["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"]),
    ("padded", [" 0.0.0.0/0 "]),
]
INTERNET_V6 = [("::/0", ["::/0"]), ("global unicast", ["2000::/3"]), ("halves of 2000::/3", ["2000::/4", "3000::/4"])]


def default_sg(cidrs: list[str], ipv6: list[str] = ()) -> Change:
    return lambda rs: props(rs, ":DefaultSecurityGroup", "use1-default-sg").update(
        ingress=[{"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": cidrs, "ipv6CidrBlocks": ipv6}]
    )


def eks_public(cidrs: list[str]) -> Change:
    return lambda rs: props(rs, "eks/cluster:Cluster", "use1-cluster")["vpcConfig"].update(
        endpointPublicAccess=True, publicAccessCidrs=cidrs
    )


def efa_rule(cidr: str) -> Change:
    def change(rs):
        rule = props(rs, ":SecurityGroupIngressRule", "use1-h100-efa-in")
        rule.pop("referencedSecurityGroupId", None)
        rule["cidrIpv4"] = cidr

    return change


def firewall(cidrs: list[str]) -> Change:
    return lambda rs: props(rs, ":Firewall", "usc1-h200-gvnic0-internal").update(sourceRanges=cidrs)


def gke_networks(cidrs: list[str]) -> Change:
    def change(rs):
        cluster = props(rs, "container/cluster:Cluster", "usc1-cluster")
        cluster["privateClusterConfig"]["enablePrivateEndpoint"] = False
        cluster["masterAuthorizedNetworksConfig"] = {"cidrBlocks": [{"cidrBlock": c, "displayName": c} for c in cidrs]}

    return change


def service(env: str, **spec) -> Change:
    return lambda rs: props(rs, "core/v1:Service", env_name(env, "use1-ratelimit-redis"))["spec"].update(spec)


def netpol(env: str, rule: dict) -> Change:
    return lambda rs: props(rs, ":NetworkPolicy", env_name(env, "use1-ratelimit-redis"))["spec"]["ingress"].append(rule)


def listener(env: str, protocol: str, port: int) -> Change:
    return lambda rs: props(rs, ":Gateway", env_name(env, "use1-gateway-inference-gateway"))["spec"][
        "listeners"
    ].append({"name": f"plain-{port}", "protocol": protocol, "port": port})


def _redis(rs: list[Resource], env: str) -> dict:
    deployment = props(rs, ":Deployment", env_name(env, "use1-ratelimit-redis"))
    return deployment["spec"]["template"]["spec"]["containers"][0]


def host_port(env: str) -> Change:
    return lambda rs: _redis(rs, env).setdefault("ports", []).append({"containerPort": 6379, "hostPort": 6379})


# --- RBAC -----------------------------------------------------------------------------------------------


def bind_role(env: str, role: str) -> Change:
    return lambda rs: props(rs, ":ClusterRoleBinding", env_name(env, "use1-inference-epp-auth-reviewer"))[
        "roleRef"
    ].update(name=role)


def cluster_rule(env: str, rule: dict) -> Change:
    return lambda rs: props(rs, ":ClusterRole", env_name(env, "use1-inference-epp-auth-reviewer"))["rules"].append(rule)


def role_rule(env: str, rule: dict) -> Change:
    model = "llama-3-1-8b-epp"
    return lambda rs: props(rs, "v1:Role", env_name(env, f"use1-{model}"))["rules"].append(rule)


# --- secrets --------------------------------------------------------------------------------------------

FAKE_AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"  # split so repository scanners do not flag the tests
FAKE_GITHUB = "ghp_" + "x7Kq2mZ9vR4tY8wP1sN6bV3cL5hJ0dF2gA9e"
FAKE_SLACK = "https://hooks.slack.com/services/" + "T0A1B2C3D/B0A1B2C3D/abcdefghijklmnopqrstuvwx"
FAKE_JWT = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiJ0ZW5hbnQifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
FAKE_KEY = "-----BEGIN OPENSSH PRIVATE" + " KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
SECRETS = [
    ("AWS key", "AWS_ACCESS_KEY_ID", FAKE_AWS_KEY),
    ("GitHub token under an odd key", "bootstrap", FAKE_GITHUB),
    ("password", "REDIS_PASSWORD", "Xk29!mQ7zr-redis"),
    ("lower-case api key", "openai_api_key", "sk-live-4f9a8b7c6d5e"),
    ("JWT", "TENANT_TOKEN", FAKE_JWT),
    ("Slack webhook", "ALERT_HOOK", FAKE_SLACK),
    ("credentials in a URL", "REDIS_URL", "redis://admin:S3cretPw@redis:6379"),
]


def env_var(env: str, key: str, value: str) -> Change:
    return lambda rs: _redis(rs, env).setdefault("env", []).append({"name": key, "value": value})


def helm_value(env: str, key: str, value: str) -> Change:
    return lambda rs: (
        props(rs, ":Release", env_name(env, "use1-envoy-gateway"))
        .setdefault("values", {})
        .update({"config": {key: value}})
    )


def configmap(env: str, key: str, value: str) -> Change:
    return lambda rs: props(rs, ":ConfigMap", env_name(env, "use1-cache-dashboard"))["data"].update({key: value})


def dataset_option(env: str, key: str, value: str) -> Change:
    def change(rs):
        spec = props(rs, ":Dataset", env_name(env, "use1-inference-dataset-models"))["spec"]
        spec["mounts"][0].setdefault("options", {})[key] = value

    return change


def tag(key: str, value: str) -> Change:
    return lambda rs: props(rs, "s3/bucket:Bucket", "use1-models").setdefault("tags", {}).update({key: value})


def plain_secret(env: str) -> Change:
    return lambda rs: props(rs, "core/v1:Secret", env_name(env, "use1-tenant-api-keys")).update(
        stringData={"search": "plain-text-api-key"}
    )


def override(policy: str, op: dict) -> Change:
    return lambda rs: props(rs, ":OverridePolicy", policy)["spec"]["overrideRules"][0]["overriders"][
        "plaintext"
    ].append(op)


HELM_VALUES = [
    ("volcano image_tag_version latest", "use1-volcano", {"basic": {"image_tag_version": "latest"}}),
    ("image string without tag", "use1-envoy-gateway", {"deployment": {"envoyGateway": {"image": "envoyproxy/gateway"}}}),
    ("image map tag main", "use1-kserve", {"kserve": {"controller": {"image": {"repository": "kserve/c", "tag": "main"}}}}),
    ("service LoadBalancer", "use1-envoy-gateway", {"service": {"type": "LoadBalancer"}}),
    ("serviceType NodePort", "use1-keda", {"serviceType": "NodePort"}),
    ("hostNetwork in monitoring", "use1-kube-prometheus-stack", {"prometheus": {"prometheusSpec": {"hostNetwork": True}}}),
    ("Grafana anonymous", "use1-kube-prometheus-stack", {"grafana": {"grafana.ini": {"auth.anonymous": {"enabled": True}}}}),
    ("Grafana admin/admin", "use1-kube-prometheus-stack", {"grafana": {"adminPassword": "admin"}}),
]  # fmt: skip


def helm_values(env: str, release: str, values: dict) -> Change:
    return lambda rs: props(rs, ":Release", env_name(env, release)).setdefault("values", {}).update(values)


def _mutations() -> list[Mutation]:
    found: list[Mutation] = []
    for env in ("dev", "prod"):
        for rule, what, action, resource in GRANTS:
            found.append(Mutation(env, rule, what, grant("use1-model-server-inline", action, resource)))
        for arn in ADMIN_ARNS:
            found.append(Mutation(env, "iam-no-admin-managed-policies", arn, attach(arn)))
        for what, statement in TRUSTS:
            found.append(Mutation(env, "iam-trust-restricted", what, trust(statement)))
        for what, change in IRSA:
            found.append(Mutation(env, "irsa-trust-pinned", what, irsa(change)))
        for what, statement in PUBLIC_KEY_STATEMENTS:
            found.append(Mutation(env, "kms-key-policy-not-public", what, key_policy(statement)))
        for what, statement in PUBLIC_BUCKET_STATEMENTS:
            found.append(Mutation(env, "s3-no-public-grants", what, bucket_policy(statement)))
        for what, cidrs in INTERNET:
            found.append(Mutation(env, "network-no-internet-ingress", f"default SG {what}", default_sg(cidrs)))
            found.append(Mutation(env, "eks-endpoint-not-public", what, eks_public(cidrs)))
        for what, cidrs in INTERNET_V6:
            found.append(Mutation(env, "network-no-internet-ingress", f"default SG {what}", default_sg([], cidrs)))
        found += [
            Mutation(env, "k8s-service-not-exposed", "NodePort", service(env, type="NodePort")),
            Mutation(env, "k8s-service-not-exposed", "LoadBalancer", service(env, type="LoadBalancer")),
            Mutation(
                env,
                "k8s-service-not-exposed",
                "lower-case type, split ranges",
                service(env, type="loadbalancer", loadBalancerSourceRanges=["0.0.0.0/1", "128.0.0.0/1"]),
            ),
            Mutation(env, "k8s-netpol-not-allow-all", "empty rule", netpol(env, {})),
            Mutation(
                env,
                "k8s-netpol-not-allow-all",
                "ipBlock internet",
                netpol(env, {"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}),
            ),
            Mutation(env, "k8s-no-host-port", "hostPort", host_port(env)),
            Mutation(env, "rbac-no-admin-for-workloads", "cluster-admin", bind_role(env, "cluster-admin")),
            Mutation(env, "rbac-no-cluster-secret-read", "edit cluster-wide", bind_role(env, "edit")),
            Mutation(
                env,
                "rbac-no-wildcards",
                "verbs *",
                cluster_rule(env, {"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}),
            ),
            Mutation(
                env,
                "rbac-no-cluster-secret-read",
                "capitalised Secrets",
                cluster_rule(env, {"apiGroups": [""], "resources": ["Secrets"], "verbs": ["WATCH"]}),
            ),
            Mutation(
                env,
                "rbac-no-wildcards",
                "namespaced resources *",
                role_rule(env, {"apiGroups": ["apps"], "resources": ["*"], "verbs": ["get"]}),
            ),
            Mutation(env, "secrets-stay-secret", "plain Secret payload", plain_secret(env)),
        ]
        for what, release, values in HELM_VALUES:
            found.append(Mutation(env, "helm-values-hardened", what, helm_values(env, release, values)))
        for what, key, value in SECRETS:
            found.append(Mutation(env, "no-plaintext-secrets", f"env {what}", env_var(env, key, value)))
        for what, key, value in SECRETS[:4]:
            found.append(Mutation(env, "no-plaintext-secrets", f"Helm values {what}", helm_value(env, key, value)))
        found += [
            Mutation(env, "no-plaintext-secrets", "ConfigMap private key", configmap(env, "ssh.key", FAKE_KEY)),
            Mutation(env, "no-plaintext-secrets", "Dataset option AWS key", dataset_option(env, "fs.s3a.access.key",
                                                                                          FAKE_AWS_KEY)),
            Mutation(env, "no-plaintext-secrets", "tag token", tag("deploy", FAKE_GITHUB)),
        ]  # fmt: skip
    # dev's gateway is internal (plain HTTP there is no exposure); prod's use1 gateway faces the internet.
    for protocol, port in (("HTTP", 80), ("http", 8080), ("TCP", 9000)):
        found.append(Mutation("prod", "gateway-no-plain-http", protocol, listener("prod", protocol, port)))
    for what, cidrs in INTERNET:
        found.append(Mutation("prod", "network-no-internet-ingress", f"GCP firewall {what}", firewall(cidrs)))
        found.append(Mutation("prod", "gke-control-plane-not-public", what, gke_networks(cidrs)))
    for what, cidr in (("0.0.0.0/0", "0.0.0.0/0"), ("host bits", "1.2.3.4/0")):
        found.append(Mutation("prod", "network-no-internet-ingress", f"EFA rule {what}", efa_rule(cidr)))
    gke_changes = {
        "legacy ABAC": {"enableLegacyAbac": True},
        "basic auth": {"masterAuth": {"username": "admin", "password": "hunter2hunter2"}},
        "client certificate": {"masterAuth": {"clientCertificateConfig": {"issueClientCertificate": True}}},
        "logging none": {"loggingService": "none"},
        "no system logs": {"loggingConfig": {"enableComponents": ["workloads"]}},
    }
    for what, update in gke_changes.items():
        change = (lambda u: lambda rs: props(rs, "container/cluster:Cluster", "usc1-cluster").update(u))(update)
        found.append(Mutation("prod", "gke-cluster-hardening", what, change))
    for what, update in (("no CMEK", {"encryption": None}), ("unversioned", {"versioning": {"enabled": False}})):
        change = (lambda u: lambda rs: props(rs, "storage/bucket:Bucket", "usc1-models").update(u))(update)
        found.append(Mutation("prod", "gcs-cmek-and-versioning", what, change))
    # Karmada: what an OverridePolicy makes a member run is judged on that member's copy.
    override_ops = [
        ("karmada-overrides-apply", "replace of a missing path", {"operator": "replace", "path": "/spec/x/y", "value": 1}),
        ("no-scale-to-zero-in-production", "usc1 scales to zero",
         {"operator": "replace", "path": "/spec/predictor/minReplicas", "value": 0}),
        ("k8s-no-privileged", "usc1 privileged",
         {"operator": "add", "path": "/spec/predictor/model/securityContext", "value": {"privileged": True}}),
        ("k8s-images-pinned", "usc1 image latest",
         {"operator": "add", "path": "/spec/predictor/model/image", "value": "vllm/vllm-openai:latest"}),
    ]  # fmt: skip
    for rule, what, op in override_ops:
        found.append(
            Mutation("prod", rule, what, override("prod-karmada-inference-overridepolicy-llama-3-1-70b-usc1", op))
        )
    gcp_iam = "usc1-model-server-reader"
    for role in ("roles/owner", "roles/editor", "roles/viewer", "Roles/Editor"):
        change = (lambda value: lambda rs: props(rs, ":BucketIAMMember", gcp_iam).update(role=value))(role)
        found.append(Mutation("prod", "gcp-no-primitive-roles", role, change))
    for member in ("allUsers", "allAuthenticatedUsers", "allusers", "principalSet://goog/public:all"):
        change = (lambda value: lambda rs: props(rs, ":BucketIAMMember", gcp_iam).update(member=value))(member)
        found.append(Mutation("prod", "gcp-iam-not-public", member, change))
    wi = "usc1-model-server-workload-identity"
    for member in (
        "serviceAccount:acme-inference-prod.svc.id.goog[inference/*]",
        "principalSet://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/x/namespace/inference",
        "serviceAccount:acme-inference-prod.svc.id.goog[*/model-server]",
    ):
        change = (lambda value: lambda rs: props(rs, "serviceaccount/iAMMember:IAMMember", wi).update(member=value))(
            member
        )
        found.append(Mutation("prod", "gcp-workload-identity-one-ksa", member.split("[")[-1], change))
    found += _issue_33_mutations()
    return found


def _issue_33_mutations() -> list[Mutation]:
    """The classes issue 33 closed, as a careless change to the real plans."""
    llm = "prod-use1-llminferenceservice-llama-3-1-70b-rag"

    def prefill(rs):
        return props(rs, ":LLMInferenceService", llm)["spec"]["prefill"]["template"]

    def decode(rs):
        return props(rs, ":LLMInferenceService", llm)["spec"]["template"]

    def redis(rs):
        return props(rs, ":Deployment", "prod-use1-ratelimit-redis")["spec"]["template"]["spec"]["containers"][0]

    def route_headers(rs):
        return props(rs, ":AIGatewayRoute", "prod-use1-aigatewayroute-models-1")["spec"]["rules"][0]["matches"][0]

    def trust(rs, sub):
        role = props(rs, "iam/role:Role", "use1-model-cache")
        document = json.loads(role["assumeRolePolicy"])
        condition = document["Statement"][0]["Condition"]["StringEquals"]
        key = next(k for k in condition if k.endswith(":sub"))
        condition[key] = sub
        role["assumeRolePolicy"] = json.dumps(document)

    return [
        Mutation("prod", "k8s-no-privileged", "LLMInferenceService prefill privileged",
                 lambda rs: prefill(rs)["containers"][0].update(securityContext={"privileged": True})),
        Mutation("prod", "k8s-resources-set", "routing sidecar without resources",
                 lambda rs: decode(rs).pop("initContainers")),
        Mutation("prod", "k8s-model-servers-no-token", "prefill mounts a token",
                 lambda rs: prefill(rs).pop("automountServiceAccountToken")),
        Mutation("prod", "k8s-service-not-exposed", "Karmada allowlist patched open",
                 lambda rs: props(rs, ":ServicePatch", "prod-use1-karmada-apiserver-allowlist")["spec"].update(
                     loadBalancerSourceRanges=["0.0.0.0/0"])),
        Mutation("prod", "karmada-agent-identity", "agent in system:masters",
                 lambda rs: props(rs, ":CertRequest", "prod-usw2-karmada-agent-csr")["subject"].update(
                     organization="system:masters")),
        Mutation("prod", "karmada-agent-rbac-scoped", "every agent bound",
                 lambda rs: props(rs, ":ClusterRoleBinding", "prod-karmada-system-karmada-prod-usc1-agent-binding")[
                     "subjects"].append({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                         "name": "system:karmada:agents"})),
        Mutation("prod", "redis-requires-auth", "requirepass dropped",
                 lambda rs: redis(rs).update(args=[a for a in redis(rs)["args"] if a not in
                                                   ("--requirepass", "$(REDIS_PASSWORD)")])),
        Mutation("prod", "k8s-netpol-not-allow-all", "Redis open to every namespace",
                 lambda rs: props(rs, ":NetworkPolicy", "prod-use1-ratelimit-redis")["spec"]["ingress"][0][
                     "from"].append({"namespaceSelector": {}})),
        Mutation("prod", "gateway-tenant-routes", "tenant match dropped",
                 lambda rs: route_headers(rs).update(
                     headers=[h for h in route_headers(rs)["headers"] if h["name"] != "x-tenant-id"])),
        Mutation("prod", "workload-identity-pinned-to-its-user", "IRSA trusts another service account",
                 lambda rs: trust(rs, "system:serviceaccount:model-cache:other")),
        Mutation("prod", "workload-identity-pinned-to-its-user", "WI admits another KSA of the namespace",
                 lambda rs: props(rs, "serviceaccount/iAMMember:IAMMember", "usc1-model-server-workload-identity")
                 .update(member="serviceAccount:acme-inference-prod.svc.id.goog[inference/default]")),
        Mutation("prod", "workload-identity-pinned-to-its-user", "chart's account renamed",
                 lambda rs: props(rs, ":Release", "prod-use1-cluster-autoscaler")["values"]["rbac"][
                     "serviceAccount"].update(name="autoscaler")),
        Mutation("dev", "random-secrets-entropy", "a 12-character tenant key",
                 lambda rs: props(rs, ":RandomPassword", "tenant-api-keys-research").update(length=12)),
        Mutation("dev", "helm-values-hardened", "KEDA useHostNetwork",
                 lambda rs: props(rs, ":Release", "dev-use1-keda")["values"].setdefault("operator", {}).update(
                     useHostNetwork=True)),
    ]  # fmt: skip


MUTATIONS = _mutations()


@dataclass(frozen=True)
class Baseline:
    """An environment's pack baseline, and the copy of its resources the mutations change."""

    pack: PackBaseline
    copy: list[Resource]  # equal to the baseline's resources between two mutations

    @contextmanager
    def mutated(self, change: Change) -> Iterator[list[Resource]]:
        """A copy of the plan's resources (what `make plan` hands the pack) with `change` made to it. The copy is
        reused: afterwards each resource that differs from the baseline's is copied afresh from it."""
        before = self.pack.resources
        assert self.copy == before, "a mutation left the copy changed"
        try:
            change(self.copy)
            yield self.copy
        finally:
            if len(self.copy) != len(before):
                self.copy[:] = copy.deepcopy(before)
            for i, (now, then) in enumerate(zip(self.copy, before, strict=True)):
                if now != then:
                    self.copy[i] = copy.deepcopy(then)


@pytest.fixture(scope="module")
def baselines() -> dict[str, Baseline]:
    """Each environment's baseline; the unmutated plan has no mandatory finding, and judging only what changed from
    it finds, on it, what the whole pack finds."""
    found = {}
    for env in ("dev", "prod"):
        plan = plan_for(env)
        resources = plan_resources(plan)
        pack = PackBaseline.of(resources, plan_settings(plan))
        whole = evaluate_stack(ALL_RULES, resources, pack.settings)
        assert not whole.mandatory
        assert pack.judge(resources).findings == whole.findings
        found[env] = Baseline(pack, resources)  # fresh from the plan; the baseline keeps its own copy
    return found


def test_the_corpus_is_large_and_covers_every_area():
    assert len(MUTATIONS) >= 100
    assert len({m.id for m in MUTATIONS}) == len(MUTATIONS)
    assert {m.env for m in MUTATIONS} == {"dev", "prod"}


# Mutations of several areas and both environments on which the partial judgement is checked against the whole pack.
JUDGED_WHOLE = MUTATIONS[::16]


@pytest.mark.plan
@pytest.mark.parametrize("mutation", JUDGED_WHOLE, ids=lambda m: m.id)
def test_judging_what_a_mutation_changed_finds_what_the_whole_pack_finds(baselines, mutation: Mutation):
    baseline = baselines[mutation.env]
    with baseline.mutated(mutation.change) as resources:
        whole = evaluate_stack(ALL_RULES, resources, baseline.pack.settings)
        partial = baseline.pack.judge(resources)
    assert partial.findings == whole.findings
    assert partial.subjects == whole.subjects
    assert partial.levels == whole.levels


@pytest.mark.plan
@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.id)
def test_insecure_change_is_reported_as_mandatory(baselines, mutation: Mutation):
    baseline = baselines[mutation.env]
    with baseline.mutated(mutation.change) as resources:
        assert resources != baseline.pack.resources, "the mutation changed nothing"
        evaluation = baseline.pack.judge(resources)
    reported = {f.policy for f in evaluation.mandatory}
    assert mutation.rule in reported, (reported, [f.message for f in evaluation.findings][:5])
    assert not [f for f in evaluation.findings if f.kind == "error"], [f.message for f in evaluation.findings]
