"""Preflight against moto (EC2 offerings/types, S3, STS) and Stubber (quotas, reservations): see aws_fakes."""

from __future__ import annotations

import json

import boto3
import pytest
import yaml
from botocore.stub import Stubber
from moto import mock_aws

from components.checks.loader import load_environment
from platform_catalog.machines import MACHINES
from tests.aws_fakes import CHECKPOINT, FakeAws, client, fresh_client, put_model, reservation
from tests.harness import environment_config
from tools.plan.runner import PROJECT_DIR
from tools.preflight.__main__ import main as preflight_main
from tools.preflight.aws_dns import check_gateway_zone
from tools.preflight.aws_pools import PoolRef, _instance_types, instance_type_finding
from tools.preflight.model_layout import check_layout
from tools.preflight.runner import run_preflight

G_ON_DEMAND, G_SPOT, P_ON_DEMAND = "L-DB2E81BA", "L-3819A6DF", "L-417A185B"
DEV_BUCKET = "acme-inference-dev-use1-models"  # modelStore.bucketPrefix of Pulumi.dev.yaml
DEV_MODEL = "models/llama-3-1-8b/"
H100_POOL = {"name": "h100", "machineType": "p5.48xlarge", "minSize": 0, "maxSize": 2, "zones": ["us-east-1a"]}

_AWS_ENV = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
)


@pytest.fixture
def no_ambient_aws(monkeypatch, tmp_path):
    """No credential from this machine can leak in, and no instance-metadata lookups (fast)."""
    for var in (*_AWS_ENV, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def aws(no_ambient_aws, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")  # preflight reads no AMI; loading them is slow
    with mock_aws():
        yield


def _config(env: str = "dev") -> dict:
    """The environment's config; dev keeps only its L40S pool (and model) so each check has one subject."""
    config = environment_config(env)
    if env == "dev":
        region = config["inference-platform:regions"][0]
        region["gpuPools"] = [p for p in region["gpuPools"] if p["name"] == "l40s"]
        models = [m for m in config["inference-platform:models"] if m["placements"][0]["pool"] == "l40s"]
        config["inference-platform:models"] = models
        config["inference-platform:tenants"][0]["models"] = [m["name"] for m in models]
        config["inference-platform:tenants"][0]["gpuQuotas"][0]["capability"] = {"nvidia.com/gpu": 2}  # no MIG
    return config


def _raw(env: str = "dev") -> dict:
    return {k.split(":", 1)[1]: v for k, v in _config(env).items() if k.startswith("inference-platform:")}


def _preflight(raw: dict, fake: FakeAws, stack: str = "dev"):
    report = run_preflight(load_environment(raw), stack, fake)
    fake.verify()  # every stubbed quota / reservation answer was asked for, no other
    return report


def _only(report, check: str, subject_start: str = ""):
    found = [f for f in report.findings if f.check == check and f.subject.startswith(subject_start)]
    assert len(found) == 1, found
    return found[0]


def _dev_fake(**kwargs) -> FakeAws:
    """Quotas for `_raw()`'s dev: l40s (g6e.4xlarge, 16 vCPUs x 2) on the G quota."""
    return FakeAws(quotas={("us-east-1", G_ON_DEMAND): 64}, **kwargs)


# --- passing environments -----------------------------------------------------------------------


@pytest.mark.slow
def test_dev_passes_and_reports_json_for_ci(aws, capsys, fixture_project):
    put_model("us-east-1", DEV_BUCKET, DEV_MODEL, CHECKPOINT)
    put_model("us-east-1", DEV_BUCKET, "models/qwen2-5-7b/", CHECKPOINT)
    # the whole dev: l40s on the G quota, a100-mig (p4de.24xlarge, 96 vCPUs x 1) on the P quota
    fake = FakeAws(quotas={("us-east-1", G_ON_DEMAND): 64, ("us-east-1", P_ON_DEMAND): 96})
    assert preflight_main(["dev", "--project-dir", str(fixture_project), "--json"], client_for=fake) == 0
    fake.verify()
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True and report["awsAccount"] == "123456789012"
    [region] = report["regions"]
    assert (region["name"], region["cloud"], region["location"]) == ("use1", "aws", "us-east-1")
    rows = {(f["check"], f["subject"]): f for f in region["findings"]}
    assert {f["status"] for f in rows.values()} == {"pass"}
    assert set(rows) == {
        ("offering", "pool l40s (g6e.4xlarge)"),
        ("instance type", "pool l40s (g6e.4xlarge)"),
        ("offering", "pool a100-mig (p4de.24xlarge)"),
        ("instance type", "pool a100-mig (p4de.24xlarge)"),
        ("quota", "Running On-Demand G and VT instances (L-DB2E81BA)"),
        ("quota", "Running On-Demand P instances (L-417A185B)"),
        ("model files", "model llama-3-1-8b"),
        ("model files", "model qwen2-5-7b"),
    }
    assert rows["offering", "pool l40s (g6e.4xlarge)"]["detail"] == "offered in us-east-1a, us-east-1b"
    assert rows["quota", "Running On-Demand G and VT instances (L-DB2E81BA)"]["data"]["maxVcpus"] == 2 * 16
    model = rows["model files", "model llama-3-1-8b"]["data"]
    assert model["bytes"] == sum(CHECKPOINT.values())
    assert model["weightBytes"] == 5_000
    assert model["uri"] == f"s3://{DEV_BUCKET}/{DEV_MODEL}"


def test_prod_passes_on_aws_and_says_gcp_is_not_checked(aws):
    served = {"use1": ("llama-3-1-70b", "llama-3-1-8b", "llama-3-1-70b-rag"), "usw2": ("llama-3-1-70b", "llama-3-1-8b")}
    for region, name in (("us-east-1", "use1"), ("us-west-2", "usw2")):
        for model in served[name]:
            put_model(
                region,
                f"{_raw('prod')['modelStore']['bucketPrefix']}-prod-{name}-models",
                f"models/{model}/",
                CHECKPOINT,
            )
    quotas = {(r, code): 1000 for r in ("us-east-1", "us-west-2") for code in (G_ON_DEMAND, P_ON_DEMAND)}
    raw = _raw("prod")
    raw["gateway"]["dns"]["route53ZoneId"] = _public_zone("llm.acme.example")
    report = _preflight(raw, FakeAws(quotas=quotas), "prod")

    assert not report.failed
    zone = _only(report, "gateway dns zone")
    assert (zone.region, zone.status) == ("use1", "pass")
    assert zone.detail == "public zone llm.acme.example serves use1.llm.acme.example, usw2.llm.acme.example"
    use1 = [f for f in report.of_region("use1") if f.check != "gateway dns zone"]
    assert len(use1) == 2 * 2 + 2 + 3  # per pool: offering + instance type; two quotas; three models
    assert {f.status for f in use1 + report.of_region("usw2")} == {"pass"}
    p5 = next(f for f in use1 if f.check == "instance type" and "p5.48xlarge" in f.subject)
    assert p5.detail == "192 vCPUs, EFA: 32 interfaces"
    p_quota = next(f for f in use1 if f.subject.endswith("(L-417A185B)"))
    assert p_quota.data["maxVcpus"] == 4 * 192 and p_quota.data["minVcpus"] == 192

    [gcp] = report.of_region("usc1")
    assert gcp.status == "not checked"
    assert "google-cloud-compute" in gcp.detail and "mistral-7b-trt" in gcp.detail
    assert (
        '--filter="zone:(us-central1-a us-central1-b us-central1-c) AND name:(nvidia-a100-80gb nvidia-h200-141gb nvidia-l4)"'
        in gcp.hint
    )
    # The h200 pool's reservation must hold its maxSize.
    assert gcp.data["commands"][-1] == (
        "gcloud compute reservations describe acme-prod-a3u-usc1b --project acme-inference-prod --zone us-central1-b "
        '--format="value(specificReservation.count,specificReservation.instanceProperties.machineType)" '
        "(want >= 2 x a3-ultragpu-8g)"
    )


def _public_zone(name: str, private: bool = False) -> str:
    route53 = client("route53", "us-east-1")
    vpc = {
        "VPC": {
            "VPCRegion": "us-east-1",
            "VPCId": client("ec2", "us-east-1").create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"],
        }
    }
    zone = route53.create_hosted_zone(
        Name=name, CallerReference=name, HostedZoneConfig={"PrivateZone": private}, **(vpc if private else {})
    )
    return zone["HostedZone"]["Id"].rsplit("/", 1)[-1]


@pytest.mark.parametrize(
    ("zone", "detail"),
    [
        (None, "no such hosted zone: ExternalDNS could publish no gateway name"),
        (("acme.example", True), "a private zone: the public gateways' names would not resolve"),
        (("other.example", False), "other.example does not serve use1.llm.acme.example, usw2.llm.acme.example: the"),
    ],
)
def test_the_gateways_public_zone_must_exist_serve_their_names_and_be_public(aws, zone, detail):
    raw = _raw("prod")
    raw["gateway"]["dns"]["route53ZoneId"] = _public_zone(*zone) if zone else "Z0000000000NONE"
    (finding,) = check_gateway_zone(load_environment(raw), FakeAws())
    assert (finding.region, finding.check, finding.status) == ("use1", "gateway dns zone", "fail")
    assert finding.detail.startswith(detail), finding.detail


# --- failure kinds --------------------------------------------------------------------------------


def test_type_not_offered_in_a_zone_fails_and_names_the_zones_to_use(aws):
    put_model("us-east-1", DEV_BUCKET, DEV_MODEL, CHECKPOINT)
    raw = _raw()
    raw["regions"][0]["zones"] = ["us-east-1a", "us-east-1e"]  # moto's data: no g6e in us-east-1e
    finding = _only(_preflight(raw, _dev_fake()), "offering")
    assert finding.status == "fail"
    assert finding.detail == (
        "g6e.4xlarge is not offered in us-east-1e (offered in: us-east-1a, us-east-1b, us-east-1c, us-east-1d)"
    )
    assert finding.hint == "set regions[0].gpuPools[0].zones to [us-east-1a] or choose another machine type"


def test_cli_exits_1_on_a_failed_check_and_prints_a_table_per_region(aws, tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text((PROJECT_DIR / "Pulumi.yaml").read_text())
    config = _config("dev")
    config["inference-platform:regions"][0]["gpuPools"][0]["zones"] = ["us-east-1a"]
    (tmp_path / "Pulumi.staging.yaml").write_text(yaml.safe_dump({"config": config}))
    fake = FakeAws(quotas={("us-east-1", G_ON_DEMAND): 4})
    assert preflight_main(["staging", "--project-dir", str(tmp_path)], client_for=fake) == 1
    out = capsys.readouterr().out
    assert "use1: aws us-east-1" in out
    assert "FAIL: 2 pass, 1 warn, 1 fail" in out  # quota fails; the bucket does not exist yet (warn)


def test_quota_below_max_size_fails_with_the_increase_command(aws):
    put_model("us-east-1", DEV_BUCKET, DEV_MODEL, CHECKPOINT)
    finding = _only(_preflight(_raw(), FakeAws(quotas={("us-east-1", G_ON_DEMAND): 4})), "quota")
    assert finding.status == "fail"
    assert finding.detail == ("quota 4 vCPUs is below what pools l40s need 0 vCPUs at min size, 32 at max size")
    assert finding.hint == (
        "aws service-quotas request-service-quota-increase --region us-east-1 --service-code ec2 "
        "--quota-code L-DB2E81BA --desired-value 32"
    )


def test_quotas_sum_pools_of_one_quota_and_spot_has_its_own(aws):
    raw = _raw()
    raw["models"] = raw["tenants"] = []
    raw["regions"][0]["gpuPools"] += [
        {"name": "l40s-2x", "machineType": "g6e.2xlarge", "maxSize": 3},
        {"name": "l40s-spot", "machineType": "g6e.xlarge", "maxSize": 4, "capacity": {"type": "spot"}},
    ]
    fake = FakeAws(quotas={("us-east-1", G_ON_DEMAND): 56, ("us-east-1", G_SPOT): 8})
    report = _preflight(raw, fake)
    on_demand = _only(report, "quota", "Running On-Demand G")
    assert (on_demand.status, on_demand.data["maxVcpus"], on_demand.data["pools"]) == (
        "pass",
        2 * 16 + 3 * 8,
        ["l40s", "l40s-2x"],
    )
    spot = _only(report, "quota", "All G and VT Spot")
    assert (spot.status, spot.data["maxVcpus"], spot.data["pools"]) == ("fail", 4 * 4, ["l40s-spot"])


def test_quota_without_an_applied_value_uses_the_aws_default(aws):
    raw = _raw()
    raw["models"] = raw["tenants"] = []
    fake = FakeAws(quotas={("us-east-1", G_ON_DEMAND): 32}, default_only=frozenset({G_ON_DEMAND}))
    assert _only(_preflight(raw, fake), "quota").status == "pass"


def test_denied_quota_api_is_a_warning_naming_the_iam_action(aws):
    raw = _raw()
    raw["models"] = raw["tenants"] = []
    fake = FakeAws()
    denied = fresh_client("service-quotas", "us-east-1")
    stubber = Stubber(denied)
    stubber.add_client_error("get_service_quota", "AccessDeniedException", "User is not authorized")
    stubber.activate()
    report = run_preflight(load_environment(raw), "dev", lambda s, r: denied if s == "service-quotas" else fake(s, r))
    finding = _only(report, "quota")
    assert (finding.status, finding.detail) == ("warn", "not checked: access denied to servicequotas:GetServiceQuota")
    assert not report.failed


@pytest.mark.parametrize(
    ("files", "detail"),
    [
        (
            {k: v for k, v in CHECKPOINT.items() if not k.startswith("tokenizer")},
            "missing tokenizer (tokenizer.json or tokenizer.model) at the root (4 objects, 0.0 GiB)",
        ),
        (
            {"config.json": 700, "tokenizer.json": 9_000},
            "missing weights (*.safetensors at the root) (2 objects, 0.0 GiB)",
        ),
        (
            {"tokenizer.model": 500_000, "weights.safetensors": 10},
            "missing config.json at the root, tokenizer_config.json at the root (needed with tokenizer.model) "
            "(2 objects, 0.0 GiB)",
        ),
        # What the Run:ai streamer cannot read: PyTorch pickles, and safetensors below the root (it lists
        # `<dir>/*.safetensors`, not recursively).
        (
            {**{k: v for k, v in CHECKPOINT.items() if not k.endswith(".safetensors")}, "pytorch_model.bin": 5_000},
            "missing weights (*.safetensors at the root: found 1 PyTorch pickle file(s) such as pytorch_model.bin, "
            "which the streamer cannot read) (5 objects, 0.0 GiB)",
        ),
        (
            {
                **{k: v for k, v in CHECKPOINT.items() if not k.endswith(".safetensors")},
                "hf/model-00001-of-00002.safetensors": 4_000,
                "hf/model-00002-of-00002.safetensors": 1_000,
            },
            "missing weights (*.safetensors at the root: found safetensors only under hf/, which the streamer does "
            "not list) (6 objects, 0.0 GiB)",
        ),
        (
            {"hf/config.json": 700, "hf/tokenizer.json": 9_000, "hf/model.safetensors": 5_000},
            "missing config.json at the root, tokenizer (tokenizer.json or tokenizer.model) at the root, weights "
            "(*.safetensors at the root: found safetensors only under hf/, which the streamer does not list) "
            "(3 objects, 0.0 GiB)",
        ),
    ],
)
def test_missing_model_files_fail(aws, files, detail):
    put_model("us-east-1", DEV_BUCKET, DEV_MODEL, files)
    finding = _only(_preflight(_raw(), _dev_fake()), "model files")
    assert (finding.status, finding.detail) == ("fail", detail)
    assert (
        finding.hint
        == f"upload the checkpoint to s3://{DEV_BUCKET}/{DEV_MODEL}, or set models[0].storagePath to where it is"
    )


def test_a_checkpoint_with_adapters_and_a_draft_below_it_passes():
    model = load_environment(_raw()).models[0]
    files = {**CHECKPOINT, "adapters/legal/adapter_model.safetensors": 300, "draft/model.safetensors": 900}
    verdict = check_layout([(model.weights_prefix + name, size) for name, size in files.items()], model)
    assert (verdict.missing, verdict.warnings) == ([], [])
    assert verdict.weight_bytes == 4_000 + 1_000 + 300 + 900  # every safetensors file, the root's and below


# A TensorRT-LLM repository as Triton's OpenAI frontend serves it: the tokenizer at the root, the entry model
# (here an ensemble) named after the platform model.
TRTLLM_REPOSITORY = {
    "tokenizer.json": 9_000,
    "tokenizer_config.json": 50_000,
    "llama-3-1-8b/config.pbtxt": 3_000,
    "llama-3-1-8b/1/.keep": 0,
    "preprocessing/config.pbtxt": 3_000,
    "preprocessing/1/model.py": 9_000,
    "tensorrt_llm/config.pbtxt": 9_000,
    "tensorrt_llm/1/config.json": 4_000,
    "tensorrt_llm/1/rank0.engine": 8_000,
    "postprocessing/config.pbtxt": 2_000,
    "postprocessing/1/model.py": 5_000,
}


@pytest.mark.parametrize(
    ("rename", "missing"),
    [
        ({}, []),
        (
            {"tokenizer.json": "preprocessing/1/tokenizer.json"},
            ["tokenizer (tokenizer.json or tokenizer.model) at the repository root"],
        ),
        (
            {"llama-3-1-8b/config.pbtxt": "ensemble/config.pbtxt"},
            ["llama-3-1-8b/config.pbtxt (the entry model, which clients call by the model's name)"],
        ),
    ],
)
def test_a_triton_repository_has_its_tokenizer_at_the_root_and_its_entry_model_named_after_the_model(rename, missing):
    model = load_environment(_raw()).models[0].model_copy(update={"runtime": "triton"})
    files = {rename.get(name, name): size for name, size in TRTLLM_REPOSITORY.items()}
    verdict = check_layout([(model.weights_prefix + name, size) for name, size in files.items()], model)
    assert (verdict.missing, verdict.warnings, verdict.weight_bytes) == (missing, [], 8_000)


def test_empty_model_prefix_fails_and_storage_path_is_honoured(aws):
    put_model("us-east-1", DEV_BUCKET, DEV_MODEL, CHECKPOINT)
    raw = _raw()
    raw["models"][0]["storagePath"] = "models/hf/meta-llama/Llama-3.1-8B-Instruct"
    finding = _only(_preflight(raw, _dev_fake()), "model files")
    assert (finding.status, finding.detail) == (
        "fail",
        f"s3://{DEV_BUCKET}/models/hf/meta-llama/Llama-3.1-8B-Instruct/ is empty",
    )


def test_missing_bucket_is_a_warning_because_pulumi_up_creates_it(aws):
    finding = _only(_preflight(_raw(), _dev_fake()), "model files")
    assert (finding.status, finding.detail) == ("warn", f"bucket {DEV_BUCKET} does not exist yet")


def test_bucket_prefix_flag_names_the_bucket(aws, capsys, fixture_project):
    for prefix in (DEV_MODEL, "models/qwen2-5-7b/"):
        put_model("us-east-1", "acme-dev-use1-models", prefix, CHECKPOINT)
    full_dev = FakeAws(quotas={("us-east-1", G_ON_DEMAND): 64, ("us-east-1", P_ON_DEMAND): 96})
    argv = ["dev", "--project-dir", str(fixture_project), "--json", "--bucket-prefix", "acme"]
    assert preflight_main(argv, client_for=full_dev) == 0
    assert "s3://acme-dev-use1-models/models/llama-3-1-8b/" in capsys.readouterr().out


def _reserved_pool(capacity: dict) -> dict:
    raw = _raw()
    raw["models"] = raw["tenants"] = []
    raw["regions"][0]["gpuPools"] = [{**H100_POOL, "capacity": capacity}]
    return raw


def test_reservation_in_another_zone_fails(aws):
    raw = _reserved_pool({"type": "reservation", "reservationId": "cr-0123456789abcdef0"})
    fake = FakeAws(
        quotas={("us-east-1", P_ON_DEMAND): 384},  # ODCR instances are On-Demand instances
        reservations=[("us-east-1", "cr-0123456789abcdef0", reservation("cr-0123456789abcdef0", zone="us-east-1b"))],
    )
    finding = _only(_preflight(raw, fake), "reservation")
    assert finding.status == "fail"
    assert finding.detail == "it is in us-east-1b, the pool runs in us-east-1a"
    assert finding.hint == "set regions[0].gpuPools[0].zones to [us-east-1b] (a reservation serves one zone only)"


@pytest.mark.parametrize(
    ("item", "status", "detail"),
    [
        (
            reservation("cr-0fedcba9876543210", kind="capacity-block"),
            "pass",
            "active in us-east-1a, 4 x p5.48xlarge until 2026-12-15 11:30 UTC",
        ),
        (
            reservation("cr-0fedcba9876543210", kind="capacity-block", state="scheduled"),
            "warn",
            "cr-0fedcba9876543210 is scheduled (starts 2026-12-01 11:30 UTC): nodes cannot launch before it is active",
        ),
        (
            reservation("cr-0fedcba9876543210", kind="capacity-block", total=1),
            "fail",
            "it holds 1 instances, the pool may grow to 2",
        ),
        (
            reservation("cr-0fedcba9876543210", kind="capacity-block", state="expired", instance_type="p5en.48xlarge"),
            "fail",
            "it reserves p5en.48xlarge, the pool runs p5.48xlarge; it is expired",
        ),
        (
            reservation("cr-0fedcba9876543210"),
            "fail",
            "cr-0fedcba9876543210 is a Capacity Reservation, the pool says capacityBlock",
        ),
        (None, "fail", "cr-0fedcba9876543210 not found in us-east-1 for this account"),
    ],
)
def test_capacity_block_checks(aws, item, status, detail):
    raw = _reserved_pool({"type": "capacityBlock", "reservationId": "cr-0fedcba9876543210"})
    # No quota is stubbed: a Capacity Block pool is sized by its block, not the On-Demand quota.
    finding = _only(_preflight(raw, FakeAws(reservations=[("us-east-1", "cr-0fedcba9876543210", item)])), "reservation")
    assert (finding.status, finding.detail) == (status, detail)


def test_efa_count_above_what_ec2_allows_fails():
    ref = PoolRef(
        0, 0, load_environment(_reserved_pool({"type": "onDemand"})).regions[0].gpu_pools[0], MACHINES["p5.48xlarge"]
    )
    info = {
        "VCpuInfo": {"DefaultVCpus": 192},
        "NetworkInfo": {"EfaSupported": True, "EfaInfo": {"MaximumEfaInterfaces": 16}},
    }
    finding = instance_type_finding("use1", ref, info)
    assert (finding.status, finding.detail) == (
        "fail",
        "the pool creates 32 EFA interfaces but p5.48xlarge allows at most 16",
    )
    no_efa = {"VCpuInfo": {"DefaultVCpus": 192}, "NetworkInfo": {"EfaSupported": False}}
    assert instance_type_finding("use1", ref, no_efa).detail == (
        "the pool creates 32 EFA interfaces but EC2 reports no EFA support for p5.48xlarge"
    )


def test_catalog_efa_and_vcpus_agree_with_ec2_for_every_aws_type(aws):
    """moto bundles EC2's real DescribeInstanceTypes data: catalog drift shows up here first."""
    pool = load_environment(_raw()).regions[0].gpu_pools[0]
    types = sorted(name for name, m in MACHINES.items() if m.cloud == "aws")
    assert {"g6e.4xlarge", "p4de.24xlarge", "p5.48xlarge"} <= set(types), "the AWS GPU types dev and prod run"
    described = _instance_types(client("ec2", "us-east-1"), types)
    verdicts = {t: instance_type_finding("use1", PoolRef(0, 0, pool, MACHINES[t]), described[t]) for t in types}
    assert {t: (f.status, f.detail) for t, f in verdicts.items() if f.status != "pass"} == {}


def test_a_type_the_region_lacks_is_left_out_not_raised(aws):
    ec2 = fresh_client("ec2", "us-east-1")
    stubber = Stubber(ec2)  # EC2 rejects a whole DescribeInstanceTypes batch for one unknown type
    stubber.add_client_error(
        "describe_instance_types",
        "InvalidInstanceType",
        expected_params={"InstanceTypes": ["g6e.xlarge", "p5en.48xlarge"]},
    )
    stubber.add_response(
        "describe_instance_types",
        {"InstanceTypes": [{"InstanceType": "g6e.xlarge", "VCpuInfo": {"DefaultVCpus": 4}}]},
        {"InstanceTypes": ["g6e.xlarge"]},
    )
    stubber.add_client_error(
        "describe_instance_types", "InvalidInstanceType", expected_params={"InstanceTypes": ["p5en.48xlarge"]}
    )
    with stubber:
        assert list(_instance_types(ec2, ["g6e.xlarge", "p5en.48xlarge"])) == ["g6e.xlarge"]
    stubber.assert_no_pending_responses()


# --- credentials and config -----------------------------------------------------------------------


def test_missing_credentials_are_one_line(no_ambient_aws, capsys, fixture_project):
    assert preflight_main(["dev", "--project-dir", str(fixture_project)]) == 3
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "error: AWS credentials not found; set AWS_PROFILE (and run `aws sso login` for SSO profiles) or "
        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or run where a role is attached"
    ]


def test_expired_credentials_are_one_line(no_ambient_aws, capsys, fixture_project):
    sts = boto3.client("sts", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(sts)
    stubber.add_client_error(
        "get_caller_identity", "ExpiredToken", "The security token included in the request is expired", 403
    )
    stubber.activate()
    argv = ["dev", "--project-dir", str(fixture_project)]
    assert preflight_main(argv, client_for=lambda service, region: sts) == 3
    assert capsys.readouterr().err.splitlines() == [
        "error: AWS credentials have expired (ExpiredToken); refresh them (`aws sso login --profile <profile>`, "
        "or re-assume the role) and run preflight again"
    ]


def test_invalid_config_exits_2_with_the_plan_s_lines(tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text((PROJECT_DIR / "Pulumi.yaml").read_text())
    config = environment_config("dev")
    config["inference-platform:regions"][0]["cloud"] = "azure"
    (tmp_path / "Pulumi.broken.yaml").write_text(yaml.safe_dump({"config": config}))
    assert preflight_main(["broken", "--project-dir", str(tmp_path)], client_for=FakeAws()) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: Pulumi.broken.yaml: regions[0].cloud: 'azure' is not allowed; use one of 'aws' or 'gcp'"
    ]


def test_a_public_gcp_gateways_cloud_dns_zone_is_named_with_the_command_that_checks_it():
    """ExternalDNS's Google provider keeps a zone by name only here; preflight cannot read Cloud DNS, so it says so."""
    from tools.preflight.gcp import gcp_gateway_zone_not_checked

    raw = _raw("prod")
    assert gcp_gateway_zone_not_checked(load_environment(raw)) == []  # usc1's gateway is internal: its own zone
    usc1 = next(r for r in raw["regions"] if r["name"] == "usc1")
    usc1["gateway"] = {**usc1.get("gateway", {}), "exposure": "public", "allowedCidrs": ["198.51.100.0/24"]}
    raw["gateway"]["dns"]["cloudDnsZone"] = "llm-acme-example"
    (finding,) = gcp_gateway_zone_not_checked(load_environment(raw))
    assert (finding.region, finding.check, finding.status) == ("usc1", "gateway dns zone", "not checked")
    assert finding.hint == (
        "check by hand: gcloud dns managed-zones describe llm-acme-example --project acme-inference-prod "
        '--format="value(dnsName,visibility)" (want: public, and a DNS name that usc1.llm.acme.example end in, '
        "e.g. llm.acme.example.)"
    )
