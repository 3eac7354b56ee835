"""Regenerate conformance/upstream/pulumi-providers/replacement.json: which input changes replace a resource.

    python -m tools.provider_facts \\
        --kubernetes PULUMI_KUBERNETES_GIT_DIR@REF \\
        --terraform aws=TF_AWS_GIT_DIR@REF --terraform gcp=TF_GOOGLE_BETA_GIT_DIR@REF \\
        --terraform random=TF_RANDOM_GIT_DIR@REF --terraform tls=TF_TLS_GIT_DIR@REF \\
        --copied aws=FOLDER --native command=PULUMI_COMMAND_GIT_DIR@REF [--check]

Each source is a git directory (a clone or `fetch` snapshot of the public repository) and the tag or commit to read.
Kubernetes: pulumi-kubernetes decides replacement itself (provider/pkg/provider/diff.go `forceNewProperties`, and
the Helm release's `.name`/`.namespace` in helm_release.go). Terraform-bridged providers (aws, gcp, random, tls):
the bridge replaces when Terraform's plan says RequiresNew, i.e. a changed attribute whose schema has
`ForceNew: true` (SDKv2) or a `RequiresReplace` plan modifier (plugin framework); this reads those from the resource's
Go source and names each attribute as the pinned Python SDK names the input (so a rename shows up as unmatched).
Native providers built with pulumi-go-provider's `infer` (command): with a custom Update, only inputs the published
schema marks `replaceOnChanges` replace (pulumi-go-provider@v1.3.0 infer/resource.go L1132-1152); without one, every
input does. Only the resource types in TYPES and NATIVE are kept: the ones this program creates. Move a pin: point the sources at the
upstream tags the new provider versions build on, run this, review the diff of the JSON, commit it.

A type in COPIED is read from files copied from its public repository at the commit COPIED names, not from the
provider's git directory (that source predates the type). `--copied PROVIDER=FOLDER` gives the folder, holding each
file at its repository path; every resource's facts name the repository and commit they come from. Fill the folder
from the public source, e.g. for the EKS access types:

    for f in internal/service/eks/access_entry.go internal/service/eks/access_policy_association.go; do
        curl -fsSL --create-dirs -o "FOLDER/$f" \\
            "https://raw.githubusercontent.com/hashicorp/terraform-provider-aws/COMMIT/$f"; done
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.vendor_upstream import MANIFEST, VENDORED_DIR

OUTPUT = "pulumi-providers/replacement.json"

# Pulumi type token -> (Terraform resource, Go files that declare its schema, the functions, methods or variables
# holding it, joined by `+`: an IAM member's schema is the shared member schema plus its parent's).
TYPES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "aws:autoscaling/tag:Tag": (
        "aws_autoscaling_group_tag",
        ("internal/service/autoscaling/group_tag.go",),
        "ResourceGroupTag",
    ),
    "aws:cloudwatch/logGroup:LogGroup": (
        "aws_cloudwatch_log_group",
        ("internal/service/logs/group.go",),
        "resourceGroup",
    ),
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": (
        "aws_default_security_group",
        ("internal/service/ec2/vpc_default_security_group.go",),
        "ResourceDefaultSecurityGroup",
    ),
    "aws:ec2/eip:Eip": ("aws_eip", ("internal/service/ec2/ec2_eip.go",), "ResourceEIP"),
    "aws:ec2/internetGateway:InternetGateway": (
        "aws_internet_gateway",
        ("internal/service/ec2/vpc_internet_gateway.go",),
        "ResourceInternetGateway",
    ),
    "aws:ec2/launchTemplate:LaunchTemplate": (
        "aws_launch_template",
        ("internal/service/ec2/ec2_launch_template.go",),
        "ResourceLaunchTemplate",
    ),
    "aws:ec2/natGateway:NatGateway": (
        "aws_nat_gateway",
        ("internal/service/ec2/vpc_nat_gateway.go",),
        "ResourceNATGateway",
    ),
    "aws:ec2/placementGroup:PlacementGroup": (
        "aws_placement_group",
        ("internal/service/ec2/ec2_placement_group.go",),
        "ResourcePlacementGroup",
    ),
    "aws:ec2/routeTable:RouteTable": (
        "aws_route_table",
        ("internal/service/ec2/vpc_route_table.go",),
        "ResourceRouteTable",
    ),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": (
        "aws_route_table_association",
        ("internal/service/ec2/vpc_route_table_association.go",),
        "ResourceRouteTableAssociation",
    ),
    "aws:ec2/securityGroup:SecurityGroup": (
        "aws_security_group",
        ("internal/service/ec2/vpc_security_group.go",),
        "ResourceSecurityGroup",
    ),
    "aws:ec2/subnet:Subnet": ("aws_subnet", ("internal/service/ec2/vpc_subnet.go",), "ResourceSubnet"),
    "aws:ec2/vpc:Vpc": ("aws_vpc", ("internal/service/ec2/vpc_.go",), "ResourceVPC"),
    "aws:eks/accessEntry:AccessEntry": (
        "aws_eks_access_entry",
        ("internal/service/eks/access_entry.go",),
        "resourceAccessEntry",
    ),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": (
        "aws_eks_access_policy_association",
        ("internal/service/eks/access_policy_association.go",),
        "resourceAccessPolicyAssociation",
    ),
    "aws:eks/addon:Addon": ("aws_eks_addon", ("internal/service/eks/addon.go",), "ResourceAddon"),
    "aws:eks/cluster:Cluster": ("aws_eks_cluster", ("internal/service/eks/cluster.go",), "ResourceCluster"),
    "aws:eks/nodeGroup:NodeGroup": ("aws_eks_node_group", ("internal/service/eks/node_group.go",), "ResourceNodeGroup"),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": (
        "aws_iam_openid_connect_provider",
        ("internal/service/iam/openid_connect_provider.go",),
        "ResourceOpenIDConnectProvider",
    ),
    "aws:iam/role:Role": ("aws_iam_role", ("internal/service/iam/role.go",), "ResourceRole"),
    "aws:iam/rolePolicy:RolePolicy": (
        "aws_iam_role_policy",
        ("internal/service/iam/role_policy.go",),
        "ResourceRolePolicy",
    ),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": (
        "aws_iam_role_policy_attachment",
        ("internal/service/iam/role_policy_attachment.go",),
        "ResourceRolePolicyAttachment",
    ),
    "aws:kms/alias:Alias": ("aws_kms_alias", ("internal/service/kms/alias.go",), "ResourceAlias"),
    "aws:kms/key:Key": ("aws_kms_key", ("internal/service/kms/key.go",), "ResourceKey"),
    "aws:route53/zone:Zone": ("aws_route53_zone", ("internal/service/route53/zone.go",), "ResourceZone"),
    "aws:s3/bucket:Bucket": ("aws_s3_bucket", ("internal/service/s3/bucket.go",), "ResourceBucket"),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": (
        "aws_s3_bucket_lifecycle_configuration",
        ("internal/service/s3/bucket_lifecycle_configuration.go",),
        "ResourceBucketLifecycleConfiguration",
    ),
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": (
        "aws_s3_bucket_ownership_controls",
        ("internal/service/s3/bucket_ownership_controls.go",),
        "ResourceBucketOwnershipControls",
    ),
    "aws:s3/bucketPolicy:BucketPolicy": (
        "aws_s3_bucket_policy",
        ("internal/service/s3/bucket_policy.go",),
        "ResourceBucketPolicy",
    ),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": (
        "aws_s3_bucket_public_access_block",
        ("internal/service/s3/bucket_public_access_block.go",),
        "ResourceBucketPublicAccessBlock",
    ),
    "aws:s3/bucketReplicationConfig:BucketReplicationConfig": (
        "aws_s3_bucket_replication_configuration",
        ("internal/service/s3/bucket_replication_configuration.go",),
        "ResourceBucketReplicationConfiguration",
    ),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": (
        "aws_s3_bucket_server_side_encryption_configuration",
        ("internal/service/s3/bucket_server_side_encryption_configuration.go",),
        "ResourceBucketServerSideEncryptionConfiguration",
    ),
    "aws:s3/bucketVersioning:BucketVersioning": (
        "aws_s3_bucket_versioning",
        ("internal/service/s3/bucket_versioning.go",),
        "ResourceBucketVersioning",
    ),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": (
        "aws_vpc_security_group_egress_rule",
        (
            "internal/service/ec2/vpc_security_group_egress_rule.go",
            "internal/service/ec2/vpc_security_group_ingress_rule.go",
        ),
        "Schema",
    ),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": (
        "aws_vpc_security_group_ingress_rule",
        ("internal/service/ec2/vpc_security_group_ingress_rule.go",),
        "Schema",
    ),
    "gcp:compute/address:Address": (
        "google_compute_address",
        ("google-beta/services/compute/resource_compute_address.go",),
        "ResourceComputeAddress",
    ),
    "gcp:compute/firewall:Firewall": (
        "google_compute_firewall",
        ("google-beta/services/compute/resource_compute_firewall.go",),
        "ResourceComputeFirewall",
    ),
    "gcp:compute/network:Network": (
        "google_compute_network",
        ("google-beta/services/compute/resource_compute_network.go",),
        "ResourceComputeNetwork",
    ),
    "gcp:compute/resourcePolicy:ResourcePolicy": (
        "google_compute_resource_policy",
        ("google-beta/services/compute/resource_compute_resource_policy.go",),
        "ResourceComputeResourcePolicy",
    ),
    "gcp:compute/router:Router": (
        "google_compute_router",
        ("google-beta/services/compute/resource_compute_router.go",),
        "ResourceComputeRouter",
    ),
    "gcp:compute/routerNat:RouterNat": (
        "google_compute_router_nat",
        ("google-beta/services/compute/resource_compute_router_nat.go",),
        "ResourceComputeRouterNat",
    ),
    "gcp:compute/subnetwork:Subnetwork": (
        "google_compute_subnetwork",
        ("google-beta/services/compute/resource_compute_subnetwork.go",),
        "ResourceComputeSubnetwork",
    ),
    "gcp:container/cluster:Cluster": (
        "google_container_cluster",
        (
            "google-beta/services/container/resource_container_cluster.go",
            "google-beta/services/container/node_config.go",
        ),
        "ResourceContainerCluster",
    ),
    "gcp:container/nodePool:NodePool": (
        "google_container_node_pool",
        (
            "google-beta/services/container/resource_container_node_pool.go",
            "google-beta/services/container/node_config.go",
        ),
        "ResourceContainerNodePool",
    ),
    "gcp:dns/dnsManagedZoneIamMember:DnsManagedZoneIamMember": (
        "google_dns_managed_zone_iam_member",
        ("google-beta/tpgiamresource/resource_iam_member.go", "google-beta/services/dns/iam_dns_managed_zone.go"),
        "ResourceIamMember+DNSManagedZoneIamSchema",
    ),
    "gcp:dns/managedZone:ManagedZone": (
        "google_dns_managed_zone",
        ("google-beta/services/dns/resource_dns_managed_zone.go",),
        "ResourceDNSManagedZone",
    ),
    "gcp:kms/cryptoKey:CryptoKey": (
        "google_kms_crypto_key",
        ("google-beta/services/kms/resource_kms_crypto_key.go",),
        "ResourceKMSCryptoKey",
    ),
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": (
        "google_kms_crypto_key_iam_member",
        ("google-beta/tpgiamresource/resource_iam_member.go", "google-beta/services/kms/iam_kms_crypto_key.go"),
        "ResourceIamMember+IamKmsCryptoKeySchema",
    ),
    "gcp:kms/keyRing:KeyRing": (
        "google_kms_key_ring",
        ("google-beta/services/kms/resource_kms_key_ring.go",),
        "ResourceKMSKeyRing",
    ),
    "gcp:projects/iAMMember:IAMMember": (
        "google_project_iam_member",
        ("google-beta/tpgiamresource/resource_iam_member.go", "google-beta/services/resourcemanager/iam_project.go"),
        "ResourceIamMember+IamProjectSchema",
    ),
    "gcp:serviceaccount/account:Account": (
        "google_service_account",
        ("google-beta/services/resourcemanager/resource_google_service_account.go",),
        "ResourceGoogleServiceAccount",
    ),
    "gcp:serviceaccount/iAMMember:IAMMember": (
        "google_service_account_iam_member",
        (
            "google-beta/tpgiamresource/resource_iam_member.go",
            "google-beta/services/resourcemanager/iam_service_account.go",
        ),
        "ResourceIamMember+IamServiceAccountSchema",
    ),
    "gcp:storage/bucket:Bucket": (
        "google_storage_bucket",
        ("google-beta/services/storage/resource_storage_bucket.go",),
        "ResourceStorageBucket",
    ),
    "gcp:storage/bucketIAMMember:BucketIAMMember": (
        "google_storage_bucket_iam_member",
        ("google-beta/tpgiamresource/resource_iam_member.go", "google-beta/services/storage/iam_storage_bucket.go"),
        "ResourceIamMember+StorageBucketIamSchema",
    ),
    "gcp:storage/transferJob:TransferJob": (
        "google_storage_transfer_job",
        ("google-beta/services/storagetransfer/resource_storage_transfer_job.go",),
        "ResourceStorageTransferJob",
    ),
    "random:index/randomPassword:RandomPassword": (
        "random_password",
        ("internal/provider/resource_password.go",),
        "passwordSchemaV3",
    ),
    "tls:index/certRequest:CertRequest": (
        "tls_cert_request",
        ("internal/provider/resource_cert_request.go", "internal/provider/common_cert.go"),
        "Schema",
    ),
    "tls:index/locallySignedCert:LocallySignedCert": (
        "tls_locally_signed_cert",
        ("internal/provider/resource_locally_signed_cert.go", "internal/provider/common_cert.go"),
        "Schema",
    ),
    "tls:index/privateKey:PrivateKey": (
        "tls_private_key",
        ("internal/provider/resource_private_key.go",),
        "privateKeyResourceSchemaV1",
    ),
    "tls:index/selfSignedCert:SelfSignedCert": (
        "tls_self_signed_cert",
        ("internal/provider/resource_self_signed_cert.go", "internal/provider/common_cert.go"),
        "Schema",
    ),
}
# Types the provider's git source lacks at its ref, read from files copied from the public repository at a commit:
# token -> (repository, commit). The EKS access types are newer than pulumi/terraform-provider-aws@patched-v5.14.0;
# the pin pulumi-aws 7.51.1 builds on a terraform-provider-aws v6 release (its `upstream` submodule) that neither
# repository snapshot here reaches (hashicorp/terraform-provider-aws and pulumi/pulumi-aws are over the fetch size
# limit and the Go proxy refuses the module), so these are the newest stored versions the public index held.
COPIED: dict[str, tuple[str, str]] = {
    "aws:eks/accessEntry:AccessEntry": (
        "hashicorp/terraform-provider-aws",
        "01f431114674c27cf790fafb67ac274bf8f765e1",
    ),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": (
        "hashicorp/terraform-provider-aws",
        "01f431114674c27cf790fafb67ac274bf8f765e1",
    ),
}
# Native provider types -> (the provider's published schema, the Go file of the resource's controller).
NATIVE: dict[str, tuple[str, str]] = {
    "command:local:Command": (
        "provider/cmd/pulumi-resource-command/schema.json",
        "provider/pkg/provider/local/commandController.go",
    ),
}
PINS = {
    "kubernetes": "pulumi-kubernetes",
    "aws": "pulumi-aws",
    "gcp": "pulumi-gcp",
    "random": "pulumi-random",
    "tls": "pulumi-tls",
    "command": "pulumi-command",
}


class FactsError(Exception):
    pass


def _found(match: re.Match[str] | None, what: str) -> re.Match[str]:
    """A pattern the pinned source must hold; without it the source moved on and the parser must follow."""
    if match is None:
        raise FactsError(f"{what} not found in the pinned source")
    return match


def git_show(git_dir: Path, ref: str, path: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(git_dir), "show", f"{ref}:{path}"], capture_output=True, text=True, check=False
    )
    if result.returncode:
        raise FactsError(f"{git_dir}@{ref}: {path}: {result.stderr.strip()}")
    return result.stdout


def git_commit(git_dir: Path, ref: str) -> str:
    return subprocess.run(
        ["git", "-C", str(git_dir), "rev-parse", f"{ref}^{{commit}}"], capture_output=True, text=True, check=True
    ).stdout.strip()


def git_files(git_dir: Path, ref: str, under: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(git_dir), "ls-tree", "-r", "--name-only", ref, under],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in out.splitlines() if _is_source(line)]


def _is_source(path: str) -> bool:
    return path.endswith(".go") and not path.endswith("_test.go")


@dataclass(frozen=True)
class GitTree:
    """A provider's source: a git directory at a tag or commit."""

    git_dir: Path
    ref: str

    def show(self, path: str) -> str:
        return git_show(self.git_dir, self.ref, path)

    def files(self, under: str) -> list[str]:
        return git_files(self.git_dir, self.ref, under)

    def __str__(self) -> str:
        return f"{self.git_dir}@{self.ref}"


@dataclass(frozen=True)
class FolderTree:
    """Files copied from a public repository at one commit, each at its repository path under `folder`."""

    folder: Path

    def show(self, path: str) -> str:
        file = self.folder / path
        if not file.is_file():
            raise FactsError(f"{file}: missing; copy it from the public repository at the commit COPIED names")
        return file.read_text()

    def files(self, under: str) -> list[str]:
        base = self.folder / under
        found = sorted(base.glob("*.go")) if base.is_dir() else []
        return [str(f.relative_to(self.folder)) for f in found if _is_source(f.name)]

    def __str__(self) -> str:
        return str(self.folder)


# --- Go source scanning (enough for schema literals; not a Go parser) ---------------------------------------------

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`')
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def strip_comments(src: str) -> str:
    """Comments out, string literals kept (a `//` inside a string is not a comment)."""
    out, i = [], 0
    while i < len(src):
        m_str, m_com = _STRING.match(src, i), _COMMENT.match(src, i)
        if m_str:
            out.append(m_str.group())
            i = m_str.end()
        elif m_com:
            out.append(" ")
            i = m_com.end()
        else:
            out.append(src[i])
            i += 1
    return "".join(out)


def _matching(src: str, open_at: int) -> int:
    """Index of the bracket closing the one at open_at (strings skipped)."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    depth, i = 0, open_at
    while i < len(src):
        m = _STRING.match(src, i)
        if m:
            i = m.end()
            continue
        ch = src[i]
        if ch in pairs:
            depth += 1
        elif ch in pairs.values():
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise FactsError("unbalanced brackets")


def _value_end(src: str, start: int, end: int) -> int:
    """End of a composite-literal element's value: the next `,` or the block's end at depth 0."""
    i = start
    while i < end:
        m = _STRING.match(src, i)
        if m:
            i = m.end()
            continue
        if src[i] in "{([":
            i = _matching(src, i) + 1
            continue
        if src[i] == ",":
            return i
        i += 1
    return end


_KEY = re.compile(r'\s*("(?P<lit>[A-Za-z0-9_]+)"|(?P<const>names\.Attr\w+))\s*:(?!=)')
_NESTED = re.compile(r"\bElem:\s*&?schema\.Resource\b|\bElem:\s*\w+\(\)")
_ARG = re.compile(r"\s*(?P<name>[A-Za-z_]\w*)\s*[,)]")
_CALL = re.compile(r"^&?(?P<name>[A-Za-z_]\w*)\((?P<args>[^()]*)\)$|^(?P<var>[A-Za-z_]\w*)$")
_FORCE = re.compile(r"\bForceNew:\s*true\b|\b[Rr]equires?Replace\w*\(")


@dataclass
class GoPackage:
    """The declarations of one Go package, for following a schema into helper functions and variables."""

    sources: dict[str, str]  # path -> comment-free source
    constants: dict[str, str]  # names.AttrX -> "x"
    _found: dict[str, str | None] = field(default_factory=dict)

    def declaration(self, name: str) -> str | None:
        """The body of `func name(...)` (receiver methods included) or the value of `var name =`."""
        if name not in self._found:
            self._found[name] = self._declaration(name) if re.search(rf"\b{re.escape(name)}\b", self._all) else None
        return self._found[name]

    @property
    def _all(self) -> str:
        if "\0all" not in self._found:
            self._found["\0all"] = "\n".join(self.sources.values())
        return self._found["\0all"] or ""

    def _declaration(self, name: str) -> str | None:
        pattern = re.compile(
            rf"\bfunc\s+(\([^)]*\)\s*)?{re.escape(name)}\s*\([^)]*\)[^{{]*\{{|\bvar\s+{re.escape(name)}\s*=\s*"
        )
        for src in self.sources.values():
            m = pattern.search(src)
            if not m:
                continue
            if m.group().rstrip().endswith("{"):
                open_at = m.end() - 1
                return src[open_at + 1 : _matching(src, open_at)]
            brace = src.find("{", m.end())  # a variable holds one composite literal
            return src[m.end() : _matching(src, brace) + 1] if brace >= 0 else None
        return None


def force_new_paths(pkg: GoPackage, body: str, prefix: str = "", depth: int = 0) -> list[str]:
    """Dotted Terraform attribute paths under `body` whose own schema forces a new resource."""
    if depth > 6:
        return []
    found: list[str] = []
    i, end = 0, len(body)
    while i < end:
        m = _STRING.match(body, i)
        if m:
            i = m.end()
            continue
        ch = body[i]
        if ch in "(,":
            arg = _ARG.match(body, i + 1)
            declared = pkg.declaration(arg["name"]) if arg else None
            if declared and declared.lstrip().startswith("map[string]"):  # a schema map held in a variable
                found += force_new_paths(
                    pkg, declared[declared.index("{") : declared.rindex("}") + 1], prefix, depth + 1
                )
        if ch in "{,":
            key = _KEY.match(body, i + 1)
            if key:
                name = key["lit"] or pkg.constants.get(key["const"]) or attr_name(key["const"])
                value_start = key.end()
                value_end = _value_end(body, value_start, end)
                value = body[value_start:value_end].strip()
                path = f"{prefix}.{name}" if prefix else name
                found += _entry(pkg, value, path, depth)
                i = value_end
                continue
        i += 1
    return found


def _entry(pkg: GoPackage, value: str, path: str, depth: int) -> list[str]:
    call = _CALL.match(value)
    if call:  # a helper: func returning the attribute's schema, or a variable holding it
        declared = pkg.declaration(call["name"] or call["var"])
        return _entry(pkg, declared.strip(), path, depth + 1) if declared else []
    brace = value.find("{")
    if brace < 0:
        return []
    inner = value[brace + 1 : _matching(value, brace)]
    children = force_new_paths(pkg, inner, path, depth + 1)
    own = _own_text(inner)
    if not _FORCE.search(own):
        return children
    # SDKv2 gives a nested block's ForceNew to its element count only (helper/schema diffList: countSchema), so
    # only adding or removing the block replaces; a primitive list, a map or a framework modifier covers the value.
    block = bool(children) or bool(_NESTED.search(inner))
    return [f"{path}#" if block and "ForceNew" in own else path, *children]


def _own_text(inner: str) -> str:
    """An attribute's text without its nested attributes (a child's ForceNew is not the parent's)."""
    out, i = [], 0
    while i < len(inner):
        m = _STRING.match(inner, i)
        if m:
            out.append(m.group())
            i = m.end()
            continue
        for field_name in ("Elem:", "Attributes:", "Blocks:", "NestedObject:", "Schema:"):
            if inner.startswith(field_name, i):
                value_end = _value_end(inner, i + len(field_name), len(inner))
                i = value_end
                break
        else:
            out.append(inner[i])
            i += 1
    return "".join(out)


def _constants(tree: GitTree | FolderTree) -> dict[str, str]:
    try:
        text = tree.show("names/attr_consts_gen.go")
    except FactsError:
        return {}
    return {f"names.{name}": value for name, value in re.findall(r'(Attr\w+)\s*=\s*"([^"]*)"', text)}


def attr_name(const: str) -> str:
    """`names.AttrClusterName` -> "cluster_name": names/attr_consts_gen.go is generated from names/attr_consts.csv,
    each constant the attribute in snake case (acronyms kept whole: AttrKMSKeyID -> "kms_key_id"); used where the
    constants file is not in the source read."""
    words = re.findall(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+", const.removeprefix("names.Attr"))
    return "_".join(w.lower() for w in words)


def terraform_paths(tree: GitTree | FolderTree, files: tuple[str, ...], entry: str) -> list[str]:
    directories = {f.rsplit("/", 1)[0] for f in files}
    names = {p for d in sorted(directories) for p in tree.files(d)}
    # The listed files first: a method name such as Schema is declared by every resource of a package.
    sources = {p: strip_comments(tree.show(p)) for p in [*files, *sorted(names - set(files))]}
    pkg = GoPackage(sources, _constants(tree))
    found: set[str] = set()
    for name in entry.split("+"):
        body = pkg.declaration(name)
        if body is None:
            raise FactsError(f"{tree}: {name} not found in {', '.join(files)}")
        found.update(force_new_paths(pkg, body))
    return sorted(found)


# --- Naming: Terraform attribute paths as the pinned Python SDK names the inputs -----------------------------------


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def sdk_path(token: str, tf_path: str) -> str | None:
    """`launch_template.id` -> `launchTemplate.id` as the SDK's Args classes name it; None when a segment has no
    input of that name (an output-only attribute, or a rename the generator does not know)."""
    from tools.provider_schema import _members, args_class, properties

    cls = args_class(token)
    names = []
    for segment in tf_path.split("."):
        if cls is None:
            return None
        props = properties(cls)
        camel = _camel(segment)
        name = next((n for n in (camel, camel + "s", camel + "es", camel[:-1] + "ies") if n in props), None)
        if name is None:
            return None
        names.append(name)
        cls = _input_class(_members(props[name].hint)[0])
    return ".".join(names)


def _input_class(members: tuple[Any, ...]) -> type | None:
    import typing

    from pulumi._types import is_input_type

    for member in members:
        for candidate in (member, *typing.get_args(member)):
            for inner in (candidate, *typing.get_args(candidate)):
                if isinstance(inner, type) and is_input_type(inner):
                    return inner
    return None


# --- Kubernetes: pulumi-kubernetes' own force-new table -------------------------------------------------------------


def _go_tokens(src: str) -> list[str]:
    return re.findall(r'"(?:[^"\\]|\\.)*"|\.\.\.|[A-Za-z_][\w.]*|[{}(),:+]', src)


class _GoExpr:
    """Evaluates diff.go's declarations: properties{...}, append(a, b...), _kinds{"K": v}, helper calls."""

    def __init__(self, src: str):
        self.src = strip_comments(src)
        self.vars = {m[0]: m[1] for m in self._declarations(r"\bvar\s+(\w+)\s*=\s*")}

    def _declarations(self, pattern: str) -> list[tuple[str, str]]:
        out = []
        for m in re.finditer(pattern, self.src):
            end = _value_end(self.src, m.end(), len(self.src))
            newline = self.src.find("\nvar ", m.end())
            end = min(end, newline) if newline > 0 else end
            out.append((m.group(1), self.src[m.end() : end].strip()))
        return out

    def helper(self, name: str, args: list[str]) -> list[str]:
        m = _found(re.search(rf"func {name}\([^)]*\)\s*properties\s*\{{", self.src), f"func {name}")
        body = self.src[m.end() : _matching(self.src, m.end() - 1)]
        suffixes = re.findall(r'prefix\s*\+\s*"([^"]*)"', body)
        return [a + s for a in args for s in suffixes]

    def value(self, tokens: list[str], i: int = 0) -> tuple[Any, int]:
        tok = tokens[i]
        if tok.startswith('"'):
            return json.loads(tok), i + 1
        if tok == "append":
            appended: list[Any] = []
            i += 2
            while tokens[i] != ")":
                part, i = self.value(tokens, i)
                appended += part
                i += 1 if tokens[i] == "..." else 0
                i += 1 if tokens[i] == "," else 0
            return appended, i + 1
        if tokens[i + 1 : i + 2] == ["{"]:  # a composite literal: a list or a map
            i += 2
            items: list[Any] = []
            mapping: dict[str, Any] = {}
            while tokens[i] != "}":
                part, i = self.value(tokens, i)
                if tokens[i] == ":":
                    mapping[part], i = self.value(tokens, i + 1)
                else:
                    items.append(part)
                i += 1 if tokens[i] == "," else 0
            return (mapping if mapping else items), i + 1
        if tokens[i + 1 : i + 2] == ["("]:  # a helper call
            args, i = [], i + 2
            while tokens[i] != ")":
                arg, i = self.value(tokens, i)
                args.append(arg)
                i += 1 if tokens[i] == "," else 0
            return self.helper(tok, args), i + 1
        return self.evaluate(tok), i + 1

    def evaluate(self, name: str) -> Any:
        return self.value(_go_tokens(self.vars[name]))[0]


def kubernetes_facts(git_dir: Path, ref: str) -> dict[str, Any]:
    diff_go = git_show(git_dir, ref, "provider/pkg/provider/diff.go")
    release_go = git_show(git_dir, ref, "provider/pkg/provider/helm_release.go")
    expr = _GoExpr(diff_go)
    strip = lambda paths: sorted({p.lstrip(".").replace("[*]", "") for p in paths})  # noqa: E731
    kinds: dict[str, list[str]] = {}
    for group, versions in expr.evaluate("forceNew").items():
        for version, kind_map in versions.items():
            for kind, paths in kind_map.items():
                key = f"{group or 'core'}/{version}/{kind}"
                kinds[key] = strip([*kinds.get(key, []), *paths])
    body = strip_comments(diff_go)
    secret = _found(re.search(r"IsSecret\(obj\).*?properties\{([^}]*)\}", body, re.S), "diff.go's Secret fields")
    config_map = _found(
        re.search(r"IsConfigMap\(obj\).*?properties\{([^}]*)\}", body, re.S), "diff.go's ConfigMap fields"
    )
    helm = _found(
        re.search(r"forceNewFields := \[\]string\{([^}]*)\}", strip_comments(release_go)), "helm_release.go's fields"
    )
    identity = _found(re.search(r"metadataForceNewProperties\(\"([^\"]+)\"\)", body), "diff.go's metadata fields")
    return {
        "identity": strip(expr.helper("metadataForceNewProperties", [identity.group(1)])),
        "kinds": dict(sorted(kinds.items())),
        "immutableData": {
            "core/v1/Secret": strip(json.loads(f"[{secret.group(1)}]")),
            "core/v1/ConfigMap": strip(json.loads(f"[{config_map.group(1)}]")),
        },
        "helmRelease": strip(json.loads(f"[{helm.group(1)}]")),
    }


# --- The fact file ------------------------------------------------------------------------------------------------


def _source(spec: str) -> tuple[Path, str]:
    path, _, ref = spec.rpartition("@")
    if not path or not ref:
        raise FactsError(f"{spec}: expected GIT_DIR@REF")
    return Path(path), ref


def _installed(package: str) -> str:
    from importlib.metadata import version

    return version(package.replace("-", "_"))


def _origin(git_dir: Path) -> str:
    """owner/name of a git directory: its remote, else the `owner+name` folder `fetch` names."""
    url = subprocess.run(
        ["git", "-C", str(git_dir), "config", "--get", "remote.origin.url"], capture_output=True, text=True
    ).stdout.strip()
    m = re.search(r"github\.com[:/]([^/]+/[^/.]+)", url)
    if m:
        return m.group(1)
    folder = next((p.name for p in (git_dir, *git_dir.parents) if "+" in p.name), git_dir.name)
    return folder.replace("+", "/")


def native_force_new(git_dir: Path, ref: str, token: str) -> list[str]:
    """The inputs of a native (pulumi-go-provider `infer`) resource whose change replaces it: those its schema marks
    `replaceOnChanges` when its controller has a custom Update, else all of them."""
    schema_path, controller = NATIVE[token]
    resource = json.loads(git_show(git_dir, ref, schema_path))["resources"].get(token)
    if resource is None:
        raise FactsError(f"{schema_path} declares no resource {token}")
    inputs = resource.get("inputProperties") or {}
    if "infer.CustomUpdate[" not in git_show(git_dir, ref, controller):
        return sorted(inputs)
    return sorted(name for name, spec in inputs.items() if spec.get("replaceOnChanges"))


def generate(
    kubernetes: str,
    terraform: dict[str, str],
    copied: dict[str, str] | None = None,
    native: dict[str, str] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """(the fact document, problems: types or attributes the sources or the SDKs do not match)."""
    problems: list[str] = []
    copied = copied or {}
    k8s_dir, k8s_ref = _source(kubernetes)
    providers = {
        "kubernetes": {
            "package": PINS["kubernetes"],
            "pin": _installed(PINS["kubernetes"]),
            "repo": _origin(k8s_dir),
            "ref": k8s_ref,
            "commit": git_commit(k8s_dir, k8s_ref),
            "paths": ["provider/pkg/provider/diff.go", "provider/pkg/provider/helm_release.go"],
        }
    }
    resources: dict[str, Any] = {}
    for provider, spec in sorted(terraform.items()):
        git_dir, ref = _source(spec)
        providers[provider] = {
            "package": PINS[provider],
            "pin": _installed(PINS[provider]),
            "repo": _origin(git_dir),
            "ref": ref,
            "commit": git_commit(git_dir, ref),
        }
        for token, (tf_name, files, entry) in sorted(TYPES.items()):
            if not token.startswith(provider + ":"):
                continue
            tree, source = _type_source(token, GitTree(git_dir, ref), providers[provider], copied.get(provider))
            if tree is None:
                problems.append(f"{token}: {source['missing']}")
                continue
            try:
                tf_paths = terraform_paths(tree, files, entry)
            except FactsError as exc:
                problems.append(f"{token}: {exc}")
                continue
            named: list[str] = []
            unmatched: list[str] = []
            for tf_path in tf_paths:
                block = "#" if tf_path.endswith("#") else ""
                name = sdk_path(token, tf_path.removesuffix("#"))
                (named if name else unmatched).append(f"{name}{block}" if name else tf_path)
            resources[token] = {
                "terraform": tf_name,
                "files": list(files),
                "source": source,
                "forceNew": sorted(set(named)),
                **({"notInputs": sorted(unmatched)} if unmatched else {}),
            }
    for provider, spec in sorted((native or {}).items()):
        git_dir, ref = _source(spec)
        providers[provider] = {
            "package": PINS[provider],
            "pin": _installed(PINS[provider]),
            "repo": _origin(git_dir),
            "ref": ref,
            "commit": git_commit(git_dir, ref),
        }
        source = {k: providers[provider][k] for k in ("repo", "ref", "commit")}
        for token in sorted(t for t in NATIVE if t.startswith(provider + ":")):
            try:
                force_new = native_force_new(git_dir, ref, token)
            except (FactsError, subprocess.CalledProcessError) as exc:
                problems.append(f"{token}: {exc}")
                continue
            resources[token] = {"files": list(NATIVE[token]), "source": source, "forceNew": force_new}
    document = {
        "about": "Input paths whose change makes the provider replace the resource (list indices dropped; a change "
        "at or below a path counts; a path ending in # replaces only when that block is added or removed, or its "
        "element count changes). Generated by `python -m tools.provider_facts` from each provider's source; "
        "`source`: the repository and commit each type's facts were read at (the provider's, or files copied at "
        "another commit where its source lacks the type); `notInputs`: force-new Terraform attributes with no input "
        "of that name in the pinned SDK (computed, or renamed).",
        "providers": providers,
        "kubernetes": kubernetes_facts(k8s_dir, k8s_ref),
        "resources": resources,
    }
    return document, problems


def _type_source(
    token: str, git: GitTree, provider: dict[str, Any], folder: str | None
) -> tuple[GitTree | FolderTree | None, dict[str, Any]]:
    """Where a type's facts are read: the provider's git source, or the folder of files COPIED at another commit."""
    if token not in COPIED:
        return git, {"repo": provider["repo"], "ref": provider["ref"], "commit": provider["commit"]}
    repo, commit = COPIED[token]
    if folder is None:
        provider_name = token.split(":", 1)[0]
        return None, {"missing": f"read from {repo}@{commit}: pass --copied {provider_name}=FOLDER (see --help)"}
    return FolderTree(Path(folder)), {"repo": repo, "ref": commit, "commit": commit, "copied": True}


def _text(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1, sort_keys=True) + "\n"


def manifest_entry(document: dict[str, Any], text: str) -> dict[str, Any]:
    k8s = document["providers"]["kubernetes"]
    copies = sorted(
        {
            f"{r['source']['repo']}@{r['source']['commit']}"
            for r in document["resources"].values()
            if r["source"].get("copied")
        }
    )
    upstream = hashlib.sha256(
        "".join(f"{p['repo']}@{p['commit']}\n" for _, p in sorted(document["providers"].items())).encode()
        + "".join(f"{c}\n" for c in copies).encode()
    ).hexdigest()
    return {
        "path": OUTPUT,
        "repo": k8s["repo"],
        "ref": ", ".join(
            [f"{name} {p['repo']}@{p['ref']}" for name, p in sorted(document["providers"].items())]
            + [f"copied {c}" for c in copies]
        ),
        "source": "GENERATED by tools/provider_facts.py from the providers' force-new declarations",
        "commit": k8s["commit"],
        "license": "Apache-2.0 (pulumi-kubernetes, pulumi-command); MPL-2.0 (terraform providers); facts only",
        "generator": "tools.provider_facts",
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "upstream_sha256": upstream,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="provider_facts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubernetes", required=True, metavar="GIT_DIR@REF")
    parser.add_argument("--terraform", action="append", default=[], metavar="PROVIDER=GIT_DIR@REF")
    parser.add_argument(
        "--copied",
        action="append",
        default=[],
        metavar="PROVIDER=FOLDER",
        help="files of the COPIED types, each at its repository path (see the module docstring)",
    )
    parser.add_argument("--native", action="append", default=[], metavar="PROVIDER=GIT_DIR@REF")
    parser.add_argument("--check", action="store_true", help="fail when the vendored file is not what the sources give")
    args = parser.parse_args(argv)
    terraform = dict(spec.split("=", 1) for spec in args.terraform)
    copied = dict(spec.split("=", 1) for spec in args.copied)
    native = dict(spec.split("=", 1) for spec in args.native)
    try:
        document, problems = generate(args.kubernetes, terraform, copied, native)
    except (FactsError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    text = _text(document)
    target = VENDORED_DIR / OUTPUT
    if args.check:
        same = target.is_file() and target.read_text() == text
        print(f"conformance/upstream/{OUTPUT}: {'matches' if same else 'differs from'} the sources", file=sys.stderr)
        return 0 if same and not problems else 1
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    manifest = json.loads((VENDORED_DIR / MANIFEST).read_text())
    entries = [e for e in manifest["files"] if e["path"] != OUTPUT] + [manifest_entry(document, text)]
    manifest["files"] = sorted(entries, key=lambda e: e["path"])
    (VENDORED_DIR / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    counts = {p: sum(t.startswith(p + ":") for t in document["resources"]) for p in [*terraform, *native]}
    print(f"wrote conformance/upstream/{OUTPUT}: {len(document['kubernetes']['kinds'])} Kubernetes kinds, {counts}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
