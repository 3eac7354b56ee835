"""Object storage holding model weights: S3 and GCS buckets private, encrypted, versioned.

An S3 bucket's protections live in companion resources (public-access block, encryption,
versioning, ownership controls, policy), so those checks are stack rules: they pair each
bucket with its companions through the `bucket` input's dependency (known at preview even
when the bucket's id is not) or its literal name.
"""

from __future__ import annotations

from collections.abc import Iterator

from policies.framework import Context, Violation, rule
from policies.model import Resource, as_list, get, json_document, truthy
from policies.rules.iam import public_unpinned

S3_BUCKETS = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")
S3_PUBLIC_ACCESS_BLOCK = ("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",)
S3_ENCRYPTION = (
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
)
S3_VERSIONING = ("aws:s3/bucketVersioning:BucketVersioning", "aws:s3/bucketVersioningV2:BucketVersioningV2")
S3_OWNERSHIP = ("aws:s3/bucketOwnershipControls:BucketOwnershipControls",)
S3_POLICY = ("aws:s3/bucketPolicy:BucketPolicy",)
S3_ACL = ("aws:s3/bucketAcl:BucketAcl", "aws:s3/bucketAclV2:BucketAclV2")
PUBLIC_ACLS = ("public-read", "public-read-write", "authenticated-read")
PUBLIC_GRANTEES = (
    "http://acs.amazonaws.com/groups/global/AllUsers",
    "http://acs.amazonaws.com/groups/global/AuthenticatedUsers",
)
PAB_FLAGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
KMS_ALGORITHMS = ("aws:kms", "aws:kms:dsse")

GCS_BUCKET = "gcp:storage/bucket:Bucket"
GCS_IAM_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
GCS_IAM_BINDING = "gcp:storage/bucketIAMBinding:BucketIAMBinding"
GCS_IAM_POLICY = "gcp:storage/bucketIAMPolicy:BucketIAMPolicy"
GCS_ACL = "gcp:storage/bucketAccessControl:BucketAccessControl"
GCS_DEFAULT_OBJECT_ACL = "gcp:storage/defaultObjectAccessControl:DefaultObjectAccessControl"
PUBLIC_MEMBERS = ("allUsers", "allAuthenticatedUsers")


def _companions(r: Resource, ctx: Context, types: tuple[str, ...]) -> list[Resource]:
    return ctx.require_stack().attached(r, types, "bucket", name_keys=("bucket",))


def _bucket(r: Resource) -> str:
    name = r.props.get("bucket")
    return f"bucket {name if isinstance(name, str) else r.name}"


@rule(
    name="s3-public-access-blocked",
    description="Every S3 bucket has a public-access block with all four settings on.",
    severity="critical",
    remediation="add aws.s3.BucketPublicAccessBlock(bucket=<bucket>.id) with blockPublicAcls, blockPublicPolicy, "
    "ignorePublicAcls and restrictPublicBuckets all true",
    applies_to=S3_BUCKETS,
    scope="stack",
)
def s3_public_access_blocked(r: Resource, ctx: Context) -> Iterator[Violation]:
    blocks = _companions(r, ctx, S3_PUBLIC_ACCESS_BLOCK)
    if not blocks:
        yield Violation(f"{_bucket(r)} has no public-access block")
    for block in blocks:
        off = [flag for flag in PAB_FLAGS if not truthy(get(block.props, flag))]
        if off:
            yield Violation(
                f"{_bucket(r)}: public-access block {block.name} leaves {', '.join(off)} off", urn=block.urn
            )


def _sse_rules(r: Resource, ctx: Context) -> list[tuple[str, dict]]:
    found = []
    inline = get(r.props, "serverSideEncryptionConfiguration", "rule")
    if inline:
        found.append((r.name, inline))
    for config in _companions(r, ctx, S3_ENCRYPTION):
        found.extend((config.name, rule_) for rule_ in as_list(get(config.props, "rules")))
    return found


@rule(
    name="s3-encrypted-with-kms",
    description="Every S3 bucket encrypts objects by default with SSE-KMS under a customer-managed key (not the "
    "AWS-managed alias/aws/s3, by alias or ARN).",
    severity="high",
    remediation="add aws.s3.BucketServerSideEncryptionConfiguration with rules[0].applyServerSideEncryptionByDefault "
    '{sseAlgorithm: "aws:kms", kmsMasterKeyId: <key arn>} and bucketKeyEnabled=true',
    applies_to=S3_BUCKETS,
    scope="stack",
)
def s3_encrypted_with_kms(r: Resource, ctx: Context) -> Iterator[Violation]:
    rules = _sse_rules(r, ctx)
    if not rules:
        yield Violation(f"{_bucket(r)} has no encryption configuration (S3 falls back to SSE-S3 keys it manages)")
    for where, sse in rules:
        default = get(sse, "applyServerSideEncryptionByDefault") or {}
        algorithm = get(default, "sseAlgorithm")
        if algorithm not in KMS_ALGORITHMS:
            yield Violation(f"{_bucket(r)}: {where} uses {algorithm or 'no algorithm'}, not SSE-KMS")
        elif not get(default, "kmsMasterKeyId") or aws_managed_key(str(get(default, "kmsMasterKeyId"))):
            yield Violation(f"{_bucket(r)}: {where} uses the AWS-managed aws/s3 key, not a customer-managed key")


def aws_managed_key(key_id: str) -> bool:
    """`alias/aws/s3` (or its ARN): the key AWS creates and manages per service, whose policy we cannot scope."""
    return key_id.lower().startswith("alias/aws/") or ":alias/aws/" in key_id.lower()


def _bucket_policies(r: Resource, ctx: Context) -> list[tuple[str, dict]]:
    documents = []
    if get(r.props, "policy"):
        documents.append((r.name, json_document(get(r.props, "policy"), "policy")))
    for policy in _companions(r, ctx, S3_POLICY):
        documents.append((policy.name, json_document(get(policy.props, "policy"), "policy")))
    return documents


def _denies_plain_http(statement: dict) -> bool:
    if statement.get("Effect") != "Deny":
        return False
    condition = statement.get("Condition") or {}
    for operator in ("Bool", "BoolIfExists"):
        value = (condition.get(operator) or {}).get("aws:SecureTransport")
        if str(value).lower() == "false":
            return True
    return False


@rule(
    name="s3-tls-only",
    description="Every S3 bucket policy denies requests that do not use TLS (aws:SecureTransport = false), to every "
    "principal, for every action (s3:*), on the bucket and its objects (not another bucket's ARN).",
    severity="high",
    remediation='add a bucket policy statement {Effect: Deny, Principal: "*", Action: "s3:*", Resource: [bucket, '
    'bucket/*], Condition: {Bool: {"aws:SecureTransport": "false"}}}',
    applies_to=S3_BUCKETS,
    scope="stack",
)
def s3_tls_only(r: Resource, ctx: Context) -> Iterator[Violation]:
    documents = _bucket_policies(r, ctx)
    if not documents:
        yield Violation(f"{_bucket(r)} has no bucket policy, so plain-HTTP requests are allowed")
        return
    statements = [s for _, doc in documents for s in as_list(doc.get("Statement")) if isinstance(s, dict)]
    denials = [s for s in statements if _denies_plain_http(s)]
    if not denials:
        yield Violation(f"{_bucket(r)}: its policy does not deny aws:SecureTransport=false")
        return
    name = r.props.get("bucket")
    arn = f"arn:aws:s3:::{name}" if isinstance(name, str) else None
    problems = [_narrowed(s, arn) for s in denials]
    if all(problems):
        yield Violation(f"{_bucket(r)}: its plain-HTTP denial {problems[0]}")


def _narrowed(statement: dict, arn: str | None) -> str:
    """How a TLS-deny statement fails to cover every request to this bucket ('' when it covers them)."""
    principal = statement.get("Principal")
    if not (principal == "*" or (isinstance(principal, dict) and as_list(principal.get("AWS")) == ["*"])):
        return f"applies to {principal!r}, not every principal"
    actions = [str(a).lower() for a in as_list(statement.get("Action"))]
    if "NotAction" in statement or not ({"s3:*", "*"} & set(actions)):
        return f"covers only {statement.get('Action') or statement.get('NotAction')}, not s3:*"
    resources = {str(x) for x in as_list(statement.get("Resource"))}
    if "NotResource" in statement:
        return "uses NotResource"
    if "*" not in resources and arn is not None and not {arn, f"{arn}/*"} <= resources:
        return f"covers {sorted(resources)}, not {arn} and {arn}/*"
    return ""


@rule(
    name="s3-versioning",
    description="Every S3 bucket is versioned, so an overwritten or deleted model can be recovered.",
    severity="medium",
    remediation='add aws.s3.BucketVersioning with versioningConfiguration.status "Enabled" (and a lifecycle rule '
    "expiring noncurrent versions)",
    applies_to=S3_BUCKETS,
    scope="stack",
)
def s3_versioning(r: Resource, ctx: Context) -> Iterator[Violation]:
    if get(r.props, "versioning", "enabled") is True:
        return
    configs = _companions(r, ctx, S3_VERSIONING)
    if not configs:
        yield Violation(f"{_bucket(r)} is not versioned")
    for config in configs:
        status = get(config.props, "versioningConfiguration", "status")
        if status != "Enabled":
            yield Violation(f"{_bucket(r)}: versioning {config.name} is {status}", urn=config.urn)


@rule(
    name="s3-acls-disabled",
    description="Every S3 bucket enforces bucket-owner object ownership, which disables ACLs.",
    severity="medium",
    remediation='add aws.s3.BucketOwnershipControls with rule.objectOwnership "BucketOwnerEnforced"',
    applies_to=S3_BUCKETS,
    scope="stack",
)
def s3_acls_disabled(r: Resource, ctx: Context) -> Iterator[Violation]:
    controls = _companions(r, ctx, S3_OWNERSHIP)
    if not controls:
        yield Violation(f"{_bucket(r)} has no ownership controls; ACLs stay enabled")
    for control in controls:
        ownership = get(control.props, "rule", "objectOwnership")
        if ownership != "BucketOwnerEnforced":
            yield Violation(f"{_bucket(r)}: objectOwnership is {ownership}, ACLs stay enabled", urn=control.urn)


def _public_statements(document: dict) -> list[int]:
    statements = as_list(document.get("Statement"))
    return [i for i, s in enumerate(statements) if isinstance(s, dict) and public_unpinned(s)]


@rule(
    name="s3-no-public-grants",
    description="No S3 ACL or bucket policy grants access to everyone (public-read ACLs, AllUsers grants, "
    'Principal "*" without a condition).',
    severity="critical",
    remediation="remove the public ACL/grant or the unconditional Principal '*' Allow; share models through IAM "
    "roles (IRSA) instead",
    applies_to=(*S3_BUCKETS, *S3_ACL, *S3_POLICY),
)
def s3_no_public_grants(r: Resource, ctx: Context) -> Iterator[Violation]:
    acl = get(r.props, "acl")
    if acl in PUBLIC_ACLS:
        yield Violation(f"{r.name} sets the canned ACL {acl}")
    for grant in as_list(get(r.props, "accessControlPolicy", "grants")):
        if get(grant, "grantee", "uri") in PUBLIC_GRANTEES:
            yield Violation(f"{r.name} grants {get(grant, 'permission')} to {get(grant, 'grantee', 'uri')}")
    if r.type in S3_ACL:
        return
    if get(r.props, "policy"):
        for i in _public_statements(json_document(get(r.props, "policy"), "policy")):
            yield Violation(
                f"{r.name}: policy Statement[{i}] allows Principal '*' without a condition pinning the caller"
            )


@rule(
    name="gcs-public-access-prevention",
    description="Every GCS bucket enforces public access prevention.",
    severity="critical",
    remediation='set publicAccessPrevention: "enforced"',
    applies_to=(GCS_BUCKET,),
)
def gcs_public_access_prevention(r: Resource, ctx: Context) -> Iterator[Violation]:
    value = get(r.props, "publicAccessPrevention")
    if value != "enforced":
        yield Violation(f"GCS bucket {r.name}: publicAccessPrevention is {value or 'unset (inherited)'}")


@rule(
    name="gcs-uniform-access",
    description="Every GCS bucket uses uniform bucket-level access (IAM only, no object ACLs).",
    severity="medium",
    remediation="set uniformBucketLevelAccess: true",
    applies_to=(GCS_BUCKET,),
)
def gcs_uniform_access(r: Resource, ctx: Context) -> Iterator[Violation]:
    if get(r.props, "uniformBucketLevelAccess") is not True:
        yield Violation(f"GCS bucket {r.name} allows object ACLs (uniformBucketLevelAccess is not true)")


@rule(
    name="gcs-no-public-members",
    description="No GCS IAM binding or ACL grants a bucket to allUsers or allAuthenticatedUsers.",
    severity="critical",
    remediation="grant roles/storage.objectViewer to the model servers' service account (Workload Identity), "
    "never to allUsers/allAuthenticatedUsers",
    applies_to=(GCS_IAM_MEMBER, GCS_IAM_BINDING, GCS_IAM_POLICY, GCS_ACL, GCS_DEFAULT_OBJECT_ACL),
)
def gcs_no_public_members(r: Resource, ctx: Context) -> Iterator[Violation]:
    if r.type == GCS_IAM_POLICY:
        bindings = as_list(json_document(get(r.props, "policyData"), "policyData").get("bindings"))
        members = [m for b in bindings if isinstance(b, dict) for m in as_list(b.get("members"))]
    elif r.type in (GCS_ACL, GCS_DEFAULT_OBJECT_ACL):
        members = [get(r.props, "entity")]
    else:
        members = as_list(get(r.props, "member")) + as_list(get(r.props, "members"))
    for member in members:
        if member in PUBLIC_MEMBERS:
            yield Violation(f"{r.name} grants {get(r.props, 'role') or 'access'} to {member}")


@rule(
    name="gcs-cmek-and-versioning",
    description="GCS buckets holding model weights match the S3 baseline: encrypted with a customer-managed KMS key "
    "and versioned.",
    severity="medium",
    remediation="set encryption.defaultKmsKeyName to the models CryptoKey (grant the GCS service agent "
    "roles/cloudkms.cryptoKeyEncrypterDecrypter) and versioning.enabled=true",
    applies_to=(GCS_BUCKET,),
)
def gcs_cmek_and_versioning(r: Resource, ctx: Context) -> Iterator[Violation]:
    if not get(r.props, "encryption", "defaultKmsKeyName"):
        yield Violation(f"GCS bucket {r.name} is encrypted with a Google-managed key (no encryption.defaultKmsKeyName)")
    if get(r.props, "versioning", "enabled") is not True:
        yield Violation(f"GCS bucket {r.name} is not versioned: an overwritten or deleted model cannot be restored")


RULES = [
    s3_public_access_blocked,
    s3_encrypted_with_kms,
    s3_tls_only,
    s3_versioning,
    s3_acls_disabled,
    s3_no_public_grants,
    gcs_public_access_prevention,
    gcs_uniform_access,
    gcs_no_public_members,
    gcs_cmek_and_versioning,
]
