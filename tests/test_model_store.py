"""Model buckets: hardening on each cloud, keyless read identities, and cross-region sync."""

from __future__ import annotations

import json

import pytest

from components.aws.model_store import PUBLIC_ACCESS_BLOCKS
from components.gcp.model_store import KEY_ROTATION, READER_ROLE

S3 = "aws:s3/"
BUCKET = "acme-inference-prod-use1-models"


def _one(plan, type_: str, name: str):
    return plan.named(name, type_)


def _inputs(plan, type_: str, name: str) -> dict:
    return _one(plan, type_, name).inputs


def _statements(document: str) -> list[dict]:
    return json.loads(document)["Statement"]


# --- S3 -------------------------------------------------------------------------------------------


def test_s3_bucket_is_named_from_prefix_env_and_region(prod_plan):
    assert _inputs(prod_plan, f"{S3}bucket:Bucket", "use1-models")["bucket"] == BUCKET


def test_s3_encryption_is_sse_kms_with_a_rotated_customer_key_and_bucket_key(prod_plan):
    key = _inputs(prod_plan, "aws:kms/key:Key", "use1-models")
    assert key["enableKeyRotation"] is True
    rule = _inputs(
        prod_plan, f"{S3}bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration", "use1-models"
    )["rules"][0]
    assert rule["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "aws:kms"
    assert rule["applyServerSideEncryptionByDefault"]["kmsMasterKeyId"].startswith("arn:aws:kms:us-east-1:")
    assert rule["bucketKeyEnabled"] is True


def test_s3_all_four_public_access_blocks(prod_plan):
    block = _inputs(prod_plan, f"{S3}bucketPublicAccessBlock:BucketPublicAccessBlock", "use1-models")
    assert len(PUBLIC_ACCESS_BLOCKS) == 4
    assert {
        k: block[k] for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
    } == {
        "blockPublicAcls": True,
        "blockPublicPolicy": True,
        "ignorePublicAcls": True,
        "restrictPublicBuckets": True,
    }


def test_s3_ownership_enforced_so_acls_are_off(prod_plan):
    controls = _inputs(prod_plan, f"{S3}bucketOwnershipControls:BucketOwnershipControls", "use1-models")
    assert controls["rule"] == {"objectOwnership": "BucketOwnerEnforced"}


def test_s3_bucket_policy_denies_everything_without_tls(prod_plan):
    (statement,) = _statements(_inputs(prod_plan, f"{S3}bucketPolicy:BucketPolicy", "use1-models")["policy"])
    assert statement["Effect"] == "Deny"
    assert statement["Principal"] == "*"
    assert statement["Action"] == "s3:*"
    assert statement["Resource"] == [f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/*"]
    assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_s3_versioning_and_lifecycle_expire_old_versions_and_aborted_uploads(prod_plan):
    versioning = _inputs(prod_plan, f"{S3}bucketVersioning:BucketVersioning", "use1-models")
    assert versioning["versioningConfiguration"]["status"] == "Enabled"
    rules = {
        r["id"]: r
        for r in _inputs(prod_plan, f"{S3}bucketLifecycleConfiguration:BucketLifecycleConfiguration", "use1-models")[
            "rules"
        ]
    }
    assert rules["expire-noncurrent-versions"]["noncurrentVersionExpiration"] == {"noncurrentDays": 30}
    assert rules["abort-incomplete-multipart-uploads"]["abortIncompleteMultipartUpload"] == {"daysAfterInitiation": 7}
    assert all(r["status"] == "Enabled" for r in rules.values())


@pytest.mark.plan
@pytest.mark.parametrize(("env", "protected"), [("dev", False), ("prod", True)])
def test_bucket_and_key_are_protected_and_retained_only_in_production(env, protected, request):
    plan = request.getfixturevalue(f"{env}_plan")
    for type_ in (f"{S3}bucket:Bucket", "aws:kms/key:Key"):
        options = _one(plan, type_, "use1-models").options
        assert options["protect"] is protected
        assert options["retainOnDelete"] is protected


# --- IRSA -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "subject"),
    [
        ("use1-model-server", "system:serviceaccount:inference:model-server"),
        ("use1-model-cache", "system:serviceaccount:model-cache:default"),
    ],
)
def test_irsa_trust_is_pinned_to_one_service_account_and_the_sts_audience(prod_plan, role, subject):
    (statement,) = _statements(_inputs(prod_plan, "aws:iam/role:Role", role)["assumeRolePolicy"])
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Principal"]["Federated"].startswith("arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.")
    (host,) = {key.rsplit(":", 1)[0] for key in statement["Condition"]["StringEquals"]}
    assert host.startswith("oidc.eks.us-east-1.amazonaws.com/id/")
    assert statement["Condition"] == {"StringEquals": {f"{host}:sub": subject, f"{host}:aud": "sts.amazonaws.com"}}


def test_irsa_readers_may_only_list_and_read_the_models_prefix(prod_plan):
    statements = {
        s["Sid"]: s
        for s in _statements(_inputs(prod_plan, "aws:iam/rolePolicy:RolePolicy", "use1-model-server-inline")["policy"])
    }
    assert set(statements) == {"ListPrefix", "ReadPrefix", "DecryptViaS3"}
    assert statements["ListPrefix"]["Action"] == "s3:ListBucket"
    assert statements["ListPrefix"]["Condition"] == {"StringLike": {"s3:prefix": ["models", "models/*"]}}
    assert statements["ReadPrefix"]["Action"] == "s3:GetObject"
    assert statements["ReadPrefix"]["Resource"] == f"arn:aws:s3:::{BUCKET}/models/*"
    assert statements["DecryptViaS3"]["Action"] == "kms:Decrypt"
    assert statements["DecryptViaS3"]["Condition"] == {"StringEquals": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}}


def test_model_server_service_account_carries_its_irsa_role(prod_plan):
    sa = prod_plan.named("prod-use1-model-server", "kubernetes:core/v1:ServiceAccount").inputs
    assert sa["metadata"]["namespace"] == "inference"
    assert sa["metadata"]["annotations"]["eks.amazonaws.com/role-arn"].startswith(
        "arn:aws:iam::123456789012:role/use1-model-server-"
    )
    assert sa["automountServiceAccountToken"] is False


# --- GCS ------------------------------------------------------------------------------------------


def test_gcs_bucket_hardening(prod_plan):
    bucket = _inputs(prod_plan, "gcp:storage/bucket:Bucket", "usc1-models")
    assert bucket["name"] == "acme-inference-prod-usc1-models"
    assert bucket["location"] == "US-CENTRAL1"
    assert bucket["uniformBucketLevelAccess"] is True
    assert bucket["publicAccessPrevention"] == "enforced"
    assert bucket["versioning"] == {"enabled": True}
    actions = {rule["action"]["type"]: rule["condition"] for rule in bucket["lifecycleRules"]}
    assert actions["Delete"] == {"daysSinceNoncurrentTime": 30, "withState": "ARCHIVED"}
    assert actions["AbortIncompleteMultipartUpload"] == {"age": 7}
    options = _one(prod_plan, "gcp:storage/bucket:Bucket", "usc1-models").options
    assert options["protect"] is True and options["retainOnDelete"] is True


def test_gcs_cmek_is_a_rotated_key_the_storage_agent_may_use(prod_plan):
    bucket = _inputs(prod_plan, "gcp:storage/bucket:Bucket", "usc1-models")
    key = _inputs(prod_plan, "gcp:kms/cryptoKey:CryptoKey", "usc1-models")
    assert key["rotationPeriod"] == KEY_ROTATION == "7776000s"
    assert bucket["encryption"]["defaultKmsKeyName"].endswith("/model-weights")
    grant = _inputs(prod_plan, "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", "usc1-models-gcs-agent")
    assert grant["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"
    assert grant["member"].endswith("@gs-project-accounts.iam.gserviceaccount.com")
    assert _one(prod_plan, "gcp:kms/cryptoKey:CryptoKey", "usc1-models").options["protect"] is True


@pytest.mark.parametrize(
    ("label", "subject"), [("model-server", "inference/model-server"), ("model-cache", "model-cache/default")]
)
def test_gke_workload_identity_reads_this_bucket_only(prod_plan, label, subject):
    binding = _inputs(prod_plan, "gcp:storage/bucketIAMMember:BucketIAMMember", f"usc1-{label}-reader")
    assert binding["bucket"] == "acme-inference-prod-usc1-models"
    assert binding["role"] == READER_ROLE == "roles/storage.objectViewer"
    account = _inputs(prod_plan, "gcp:serviceaccount/account:Account", f"usc1-{label}")
    assert binding["member"] == f"serviceAccount:{account['accountId']}@acme-inference-prod.iam.gserviceaccount.com"
    impersonation = _inputs(prod_plan, "gcp:serviceaccount/iAMMember:IAMMember", f"usc1-{label}-workload-identity")
    assert impersonation["role"] == "roles/iam.workloadIdentityUser"
    assert impersonation["member"] == f"serviceAccount:acme-inference-prod.svc.id.goog[{subject}]"
    # No project-level grant of any storage role.
    for member in prod_plan.of_type("gcp:projects/iAMMember:IAMMember"):
        assert not member.inputs["role"].startswith("roles/storage.")


def test_gke_model_server_service_account_names_its_google_account(prod_plan):
    sa = prod_plan.named("prod-usc1-model-server", "kubernetes:core/v1:ServiceAccount").inputs
    assert sa["metadata"]["annotations"] == {
        "iam.gke.io/gcp-service-account": "prod-usc1-model-server@acme-inference-prod.iam.gserviceaccount.com"
    }


# --- sync -----------------------------------------------------------------------------------------


def test_s3_replication_from_the_source_to_every_other_aws_bucket(prod_plan):
    config = _one(prod_plan, f"{S3}bucketReplicationConfig:BucketReplicationConfig", "use1-models-replication-config")
    assert config.inputs["bucket"] == BUCKET
    (rule,) = config.inputs["rules"]
    assert rule["id"] == "models-to-usw2"
    assert rule["status"] == "Enabled"
    assert rule["filter"] == {"prefix": "models/"}
    assert rule["deleteMarkerReplication"] == {"status": "Enabled"}
    assert rule["sourceSelectionCriteria"] == {"sseKmsEncryptedObjects": {"status": "Enabled"}}
    assert rule["destination"]["bucket"] == "arn:aws:s3:::acme-inference-prod-usw2-models"
    assert rule["destination"]["encryptionConfiguration"]["replicaKmsKeyId"].startswith("arn:aws:kms:us-west-2:")
    # Cross-region wiring is the global stack's: it deploys after both buckets' stacks, versioning included.
    versioning = {r.name: r.urn for r in prod_plan.of_type(f"{S3}bucketVersioning:BucketVersioning")}
    assert versioning["use1-models"].startswith("urn:pulumi:prod.use1::")
    assert versioning["usw2-models"].startswith("urn:pulumi:prod.usw2::")
    assert config.urn.startswith("urn:pulumi:prod.global::")
    policy = {
        s["Sid"]: s
        for s in _statements(
            _inputs(prod_plan, "aws:iam/rolePolicy:RolePolicy", "use1-models-replication-role")["policy"]
        )
    }
    assert policy["WriteReplicas0"]["Resource"] == "arn:aws:s3:::acme-inference-prod-usw2-models/*"
    assert policy["EncryptReplicas0"]["Condition"] == {"StringEquals": {"kms:ViaService": "s3.us-west-2.amazonaws.com"}}


def test_gcs_is_fed_by_a_keyless_transfer_job_from_the_source_bucket(prod_plan):
    (trust,) = _statements(_inputs(prod_plan, "aws:iam/role:Role", "usc1-models-transfer-source")["assumeRolePolicy"])
    assert trust["Principal"] == {"Federated": "accounts.google.com"}
    assert trust["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert list(trust["Condition"]["StringEquals"]) == ["accounts.google.com:sub"]
    job = _inputs(prod_plan, "gcp:storage/transferJob:TransferJob", "usc1-models-transfer-job")
    source = job["transferSpec"]["awsS3DataSource"]
    assert source["bucketName"] == BUCKET and source["path"] == "models/"
    assert source["roleArn"].startswith("arn:aws:iam::123456789012:role/usc1-models-transfer-source-")
    assert "awsAccessKey" not in source
    assert job["transferSpec"]["gcsDataSink"] == {"bucketName": "acme-inference-prod-usc1-models", "path": "models/"}
    assert job["transferSpec"]["transferOptions"]["deleteObjectsUniqueInSink"] is True
    assert job["schedule"]["repeatInterval"] == "3600s"
    sink = _inputs(prod_plan, "gcp:storage/bucketIAMMember:BucketIAMMember", "usc1-models-transfer-sink")
    # Storage Transfer Service's agent on a Cloud Storage sink: roles/storage.legacyBucketWriter (GCP docs,
    # "Configure access to a sink: Cloud Storage")
    assert sink["role"] == "roles/storage.legacyBucketWriter"
    assert sink["member"].endswith("@storage-transfer-service.iam.gserviceaccount.com")


def test_single_region_environment_needs_no_sync(dev_plan):
    assert not dev_plan.of_type(f"{S3}bucketReplicationConfig:BucketReplicationConfig")
    assert not dev_plan.of_type("gcp:storage/transferJob:TransferJob")


def test_a_kept_kubernetes_object_sits_in_a_kept_namespace(prod_plan):
    """Deleting a namespace deletes everything in it, a retained object too: each Kubernetes object `pulumi
    destroy` keeps (retainOnDelete) is in a namespace the stack keeps as well, or one it does not manage. A kept
    patch is not such an object: it keeps a field of its object while that object lives (the Karmada allowlist)."""
    managed = {
        (prod_plan.cluster_of(r), r.inputs["metadata"]["name"]): r
        for r in prod_plan.resources
        if r.type == "kubernetes:core/v1:Namespace"
    }
    kept = [
        r
        for r in prod_plan.resources
        if r.type.startswith("kubernetes:")
        and not r.type.endswith("Patch")
        and r.options.get("retainOnDelete")
        and (r.inputs.get("metadata") or {}).get("namespace")
    ]
    assert [r.name for r in kept] == ["prod-use1-clusterpedia-postgres"]  # Clusterpedia's database volume
    unkept = [
        r.name
        for r in kept
        if (ns := managed.get((prod_plan.cluster_of(r), r.inputs["metadata"]["namespace"]))) is not None
        and not ns.options.get("retainOnDelete")
    ]
    assert unkept == []
