"""The rehearsal's own logic, without its binaries: what it derives from the plan (nodes, key material), how it
replays pulumi-kubernetes and Helm, how it maps images to built programs, and how it judges. The runs on real
binaries are tests/test_rehearsal_runs.py (make rehearsal-test)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID
from rich.console import Console

from components.domain.waves import Wave, rollout_waves
from tests.harness import plan_for
from tools.rehearsal import helm, kubelet, nodes, pulumi_k8s, releases
from tools.rehearsal.charts import CHART_SOURCES, VENDORED, VENDORED_CONFIG_FILES, chart_key
from tools.rehearsal.karmada_checks import _pointer_get
from tools.rehearsal.kube import ApiError, KindNotServed
from tools.rehearsal.pki import TlsResources
from tools.rehearsal.report import Check, Limit, Report


def _nodes(env: str, region: str) -> list[dict]:
    plan = plan_for(env)
    spec = plan.spec
    return list(nodes.region_nodes(plan, spec, env, spec.region(region), lambda n: f"10.0.{n}.0/24"))


@pytest.mark.plan
def test_prod_use1_nodes_are_its_pools_at_max_size():
    found = _nodes("prod", "use1")
    by_pool: dict[str, int] = {}
    for node in found:
        pool = node["metadata"]["labels"]["inference-platform.io/pool"]
        by_pool[pool] = by_pool.get(pool, 0) + 1
    # Pulumi.prod.yaml use1: systemPool maxSize 6, h100 maxSize 4, l40s maxSize 8.
    assert by_pool == {"system": 6, "h100": 4, "l40s": 8}


@pytest.mark.plan
def test_an_h100_node_advertises_what_a_p5_does():
    h100 = next(n for n in _nodes("prod", "use1") if n["metadata"]["labels"]["inference-platform.io/pool"] == "h100")
    labels, status = h100["metadata"]["labels"], h100["status"]
    # The plan's node group labels (DESIGN.md §4) and the cloud's own: EKS node group, instance type, zone.
    assert labels["inference-platform.io/fabric"] == "efa"
    assert labels["inference-platform.io/placement-group"] == "prod-use1-h100"
    assert labels["node.kubernetes.io/instance-type"] == "p5.48xlarge"
    assert labels["eks.amazonaws.com/nodegroup"] == "prod-use1-h100"
    assert labels["topology.kubernetes.io/zone"] == "us-east-1a"  # Pulumi.prod.yaml: the h100 pool's only zone
    assert "topology.k8s.aws/network-node-layer-1" in labels
    assert h100["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    # p5.48xlarge: 8 H100 and 32 EFA interfaces (aws.amazon.com/ec2/instance-types/p5), 192 vCPU, 2048 GiB.
    assert status["capacity"]["nvidia.com/gpu"] == "8"
    assert status["capacity"]["vpc.amazonaws.com/efa"] == "32"
    assert status["capacity"]["cpu"] == "192"
    assert status["allocatable"]["cpu"] == "172800m"  # 90 % (components/domain/host.py ALLOCATABLE_SHARE)


@pytest.mark.plan
def test_a_pool_without_efa_advertises_none():
    l40s = next(n for n in _nodes("prod", "use1") if n["metadata"]["labels"]["inference-platform.io/pool"] == "l40s")
    assert "vpc.amazonaws.com/efa" not in l40s["status"]["capacity"]
    assert l40s["status"]["capacity"]["nvidia.com/gpu"] == "1"  # g6e.4xlarge: one L40S
    assert "topology.k8s.aws/network-node-layer-1" not in l40s["metadata"]["labels"]


@pytest.mark.plan
def test_dev_mig_pool_advertises_its_slices():
    mig = next(n for n in _nodes("dev", "use1") if n["metadata"]["labels"]["inference-platform.io/pool"] == "a100-mig")
    capacity = mig["status"]["capacity"]
    # Pulumi.dev.yaml: mixed strategy, per GPU {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}, 8 A100 on a p4de.
    assert {k: v for k, v in capacity.items() if k.startswith("nvidia.com/")} == {
        "nvidia.com/mig-3g.40gb": "8",
        "nvidia.com/mig-2g.20gb": "8",
        "nvidia.com/mig-1g.10gb": "16",
    }
    # The pool does not ask for EFA: the EFA device plugin runs on fabric=efa nodes only, so nothing is advertised.
    assert "vpc.amazonaws.com/efa" not in capacity


@pytest.mark.plan
def test_gke_nodes_carry_gke_labels():
    h200 = next(n for n in _nodes("prod", "usc1") if n["metadata"]["labels"]["inference-platform.io/pool"] == "h200")
    labels = h200["metadata"]["labels"]
    assert labels["cloud.google.com/gke-nodepool"] == "h200"
    assert labels["cloud.google.com/gke-accelerator"] == "nvidia-h200-141gb"
    assert "cloud.google.com/gce-topology-block" in labels  # compact placement (Pulumi.prod.yaml usc1 h200)
    assert "nvidia.com/gpu.present" not in labels  # GKE's own device plugin: no GPU Operator, no NFD labels


class FakeKube:
    def __init__(self, error: ApiError | None = None):
        self.error = error
        self.calls: list[tuple] = []

    def create(self, obj, *, field_manager):
        self.calls.append(("create", field_manager))
        if self.error:
            raise self.error

    def apply(self, obj, *, field_manager, force=False):
        self.calls.append(("apply", field_manager, force))

    def forget(self):
        pass


CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "y"}}


def test_objects_are_created_as_pulumi_creates_them():
    kube = FakeKube()
    outcome = pulumi_k8s.create_or_patch(kube, CONFIGMAP, urn="urn:a", patch=False)
    assert outcome.ok and kube.calls == [("create", "pulumi-kubernetes")]


def test_an_object_that_exists_fails_the_create():
    kube = FakeKube(ApiError(409, "AlreadyExists", 'configmaps "x" already exists'))
    outcome = pulumi_k8s.create_or_patch(kube, CONFIGMAP, urn="urn:a", patch=False)
    assert not outcome.ok and outcome.detail.startswith("already exists")


def test_a_kind_not_served_is_retried_then_fails():
    kube = FakeKube(KindNotServed("example.io/v1", "Widget"))
    outcome = pulumi_k8s.create_or_patch(kube, CONFIGMAP, urn="urn:a", patch=False, sleep=lambda _: None)
    assert not outcome.ok
    assert len(kube.calls) == 6  # the provider's first try and 5 retries
    assert "does not serve Widget" in outcome.detail


def test_a_patch_applies_with_its_own_field_manager_and_forces_only_when_told():
    kube = FakeKube()
    pulumi_k8s.create_or_patch(kube, CONFIGMAP, urn="urn:pulumi:s::p::t::n", patch=True)
    forced = {**CONFIGMAP, "metadata": {**CONFIGMAP["metadata"], "annotations": {"pulumi.com/patchForce": "true"}}}
    pulumi_k8s.create_or_patch(kube, forced, urn="urn:pulumi:s::p::t::n", patch=True)
    (_, manager, force), (_, _, forced_flag) = kube.calls
    assert manager.startswith("pulumi-kubernetes-") and len(manager) == len("pulumi-kubernetes-") + 8
    assert (force, forced_flag) == (False, True)
    named = {**CONFIGMAP, "metadata": {**CONFIGMAP["metadata"], "annotations": {"pulumi.com/patchFieldManager": "me"}}}
    assert pulumi_k8s.patch_field_manager(named, "urn:x") == "me"


def test_helm_installs_in_its_kind_order():
    kinds = ["ValidatingWebhookConfiguration", "Deployment", "CustomResourceDefinition", "ServiceAccount", "Namespace"]
    ordered = sorted(({"kind": k} for k in kinds), key=helm._install_rank)
    # helm.sh/helm/v3@v3.20.2:pkg/releaseutil/kind_sorter.go InstallOrder; unlisted kinds last.
    assert [o["kind"] for o in ordered] == [
        "Namespace",
        "ServiceAccount",
        "CustomResourceDefinition",
        "Deployment",
        "ValidatingWebhookConfiguration",
    ]


def test_release_values_merge_files_under_values():
    class Asset:
        text = "agent:\n  replicaCount: 1\n  kubeconfig: {key: k}\n"

    merged = helm.merged_values({"valueYamlFiles": [Asset()], "values": {"agent": {"replicaCount": 2}}})
    assert merged == {"agent": {"replicaCount": 2, "kubeconfig": {"key": "k"}}}


@pytest.mark.parametrize(
    ("image", "binary"),
    [
        ("kserve/kserve-controller:v0.20.0", "kserve-manager"),
        ("docker.io/karmada/karmada-agent:v1.18.2", "karmada-agent"),
        ("registry.k8s.io/kube-apiserver:v1.35.2", "karmada-apiserver"),
        ("registry.k8s.io/kube-apiserver:v1.34.0", None),  # not the karmada chart's tag: nothing built for it
        ("ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0", "epp"),
        ("quay.io/brancz/kube-rbac-proxy:v0.18.0", None),
    ],
)
def test_images_map_to_the_built_programs(image, binary):
    assert kubelet.binary_for(image) == binary


@pytest.mark.parametrize(
    ("container", "binary"),
    [
        # envoyproxy/gateway@v1.9.0:charts/gateway-helm/templates/certgen.yaml (the hook Job, with and without args)
        ({"image": "envoyproxy/gateway:v1.9.0", "command": ["envoy-gateway", "certgen"]}, "envoy-gateway"),
        (
            {"image": "docker.io/envoyproxy/gateway:v1.9.0", "command": ["envoy-gateway", "certgen"], "args": ["-o"]},
            "envoy-gateway",
        ),
        # templates/envoy-gateway-deployment.yaml: the controller, which kwok plays
        ({"image": "docker.io/envoyproxy/gateway:v1.9.0", "args": ["server", "--config-path=/config/x"]}, None),
        ({"image": "kserve/kserve-controller:v0.20.0", "command": ["/manager"]}, "kserve-manager"),
        # the picker we render runs the stand-in; KServe's LLMInferenceService picker of the same image is played
        ({"name": "epp", "image": "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0", "args": ["--v=1"]}, "epp"),
        ({"name": "main", "image": "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0", "command": ["/app/epp"]}, None),
    ],
)
def test_a_container_runs_the_binary_of_its_image_or_of_its_subcommand(container, binary):
    assert kubelet.container_binary(container) == binary


@pytest.mark.plan
def test_the_report_names_the_pickers_stand_in_and_the_flags_it_runs_without(monkeypatch):
    """The picker we render runs the v1.5.0 build in place of llm-d-router v0.9.0: the report says so (why, what runs),
    and names a rendered flag the stand-in does not know; a build at the pinned tag would be no stand-in."""
    from tools.rehearsal import cache, serving

    (deployment,) = [
        r.inputs
        for r in plan_for("dev").kubernetes_objects()
        if r.inputs["kind"] == "Deployment" and r.inputs["metadata"]["name"] == "llama-3-1-8b-epp"
    ]
    (picker,) = deployment["spec"]["template"]["spec"]["containers"]
    flags = {f.removeprefix("--").split("=", 1)[0] for f in picker["args"] if f.startswith("--")}
    monkeypatch.setattr(kubelet, "known_flags", lambda binary: frozenset(flags))
    monkeypatch.setattr(cache, "built_versions", lambda: {"epp": {"version": "v1.5.0"}})
    why, what = serving.picker_stand_in(picker)
    assert why.startswith("the pinned version is not built: llm-d-router v0.9.0 cannot be built from the module proxy")
    assert what == f"epp v1.5.0 stands in for {picker['image']}"
    assert picker["image"] == "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0"
    monkeypatch.setattr(kubelet, "known_flags", lambda binary: frozenset(flags - {"tracing"}))
    assert serving.picker_stand_in(picker)[1].endswith(", without --tracing (flags only the pinned version knows)")
    monkeypatch.setattr(cache, "built_versions", lambda: {"epp": {"version": "v0.9.0"}})
    assert serving.picker_stand_in(picker) is None


@pytest.mark.plan
def test_every_release_of_dev_and_prod_has_a_chart_source():
    releases = [r for env in ("dev", "prod") for r in plan_for(env).helm_releases()]
    assert len(releases) == 67  # dev 15, prod 52 (the files of build/<env>/helm)
    missing = {chart_key(r.inputs["chart"], r.inputs["version"]) for r in releases} - CHART_SOURCES.keys()
    assert missing == set()


@pytest.mark.plan
def test_every_config_file_of_dev_and_prod_has_a_source():
    urls = {
        r.inputs["file"]
        for env in ("dev", "prod")
        for r in plan_for(env).resources
        if r.type == "kubernetes:yaml/v2:ConfigFile"
    }
    # prod's two Clusterpedia CRDs (the picker's InferenceObjective CRD comes with KServe's chart)
    assert len(urls) == 2
    assert urls - VENDORED_CONFIG_FILES.keys() == set()
    assert [p for p, _ in VENDORED_CONFIG_FILES.values() if not (VENDORED / p).is_file()] == []


@pytest.mark.plan
def test_an_api_service_no_program_of_the_rehearsal_serves_is_not_applied(monkeypatch):
    """Clusterpedia's APIService calls pods the rehearsal only plays (kwok): applied, its discovery would fail every
    client that lists the API (the rehearsal's own Helm capabilities included), so it is reported instead, as a
    release's is. Near variant: were its image a program the rehearsal runs, it would be applied."""
    plan = plan_for("prod")
    (api,) = plan.of_type("kubernetes:apiregistration.k8s.io/v1:APIService")
    objects = [r.inputs for r in plan.kubernetes_objects() if plan.cluster_of(r) == plan.cluster_of(api)]
    served = releases.served_by_programs(objects, "default")
    assert releases.unserved([api.inputs], served) == [(api.inputs, ["clusterpedia-system/clusterpedia-apiserver"])]
    monkeypatch.setattr(releases, "runnable", lambda c: "binary" if "/clusterpedia/apiserver:" in c["image"] else None)
    assert releases.unserved([api.inputs], releases.served_by_programs(objects, "default")) == []


def test_tls_resources_are_real_certificates():
    tls = TlsResources()
    ca_key = tls.outputs("tls:index/privateKey:PrivateKey", {"algorithm": "RSA", "rsaBits": 2048})["privateKeyPem"]
    ca = tls.outputs(
        "tls:index/selfSignedCert:SelfSignedCert",
        {
            "privateKeyPem": ca_key,
            "subject": {"commonName": "karmada-ca"},
            "isCaCertificate": True,
            "allowedUses": ["cert_signing"],
            "validityPeriodHours": 10,
        },
    )["certPem"]
    key = tls.outputs("tls:index/privateKey:PrivateKey", {"algorithm": "ECDSA", "ecdsaCurve": "P256"})["privateKeyPem"]
    csr = tls.outputs(
        "tls:index/certRequest:CertRequest",
        {
            "privateKeyPem": key,
            "subject": {"commonName": "system:karmada:agent:prod-usw2", "organization": "system:karmada:agents"},
        },
    )["certRequestPem"]
    leaf = x509.load_pem_x509_certificate(
        tls.outputs(
            "tls:index/locallySignedCert:LocallySignedCert",
            {
                "certRequestPem": csr,
                "caCertPem": ca,
                "caPrivateKeyPem": ca_key,
                "allowedUses": ["client_auth"],
                "validityPeriodHours": 10,
            },
        )["certPem"].encode()
    )
    authority = x509.load_pem_x509_certificate(ca.encode())
    assert authority.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:karmada:agent:prod-usw2"
    assert leaf.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "system:karmada:agents"
    leaf.verify_directly_issued_by(authority)


def test_override_paths_are_json_pointers():
    obj = {"metadata": {"annotations": {"inference-platform.io/pool": "h200"}}, "spec": {"list": [{"a": 1}]}}
    assert _pointer_get(obj, "/metadata/annotations/inference-platform.io~1pool") == (True, "h200")
    assert _pointer_get(obj, "/spec/list/0/a") == (True, 1)
    assert _pointer_get(obj, "/spec/missing") == (False, None)


def _report(tmp_path: Path) -> Report:
    return Report("dev", Console(file=open(tmp_path / "out.txt", "w"), width=400))


def _limit(obj: str = "release keda (keda 2.20.2)") -> Limit:
    return Limit(
        obj,
        "apply",
        "not rehearsed: the keda chart lives in kedacore/charts, which is not a Go module",
        "its 6 CRD(s), installed from github.com/kedacore/keda/v2@v2.20.2:config/crd/bases",
        "environment",
        "dev",
        cluster="dev-use1",
    )


def test_the_report_says_what_passed_failed_and_was_not_attempted(tmp_path: Path):
    report = _report(tmp_path)
    report.add(Check("ConfigMap a/b", "apply", True, "created", "canary", "dev"))
    report.add(Check("member x", "member-joined", False, "403", "canary", "dev", object="Cluster x"))
    report.add(Check("Role r", "apply", None, "not attempted: it depends on x, which failed", "canary", "dev"))
    report.binaries = {"kube-apiserver": "v1.33.13"}
    assert report.conclude() == 1
    report.write(tmp_path / "rehearsal.json")
    document = json.loads((tmp_path / "rehearsal.json").read_text())
    assert document["ok"] is False
    assert document["binaries"] == {"kube-apiserver": "v1.33.13"}
    checks = document["stacks"][0]["checks"]
    assert [(c["name"], c["category"], c["ok"]) for c in checks] == [
        ("ConfigMap a/b", "apply", True),
        ("member x", "member-joined", False),
        ("Role r", "apply", None),
    ]
    assert document["summary"]["member-joined"] == {"failed": 1}
    assert document["summary"]["apply"] == {"passed": 1, "not-attempted": 1}


def test_a_declared_limit_does_not_fail_the_run_and_is_no_check(tmp_path: Path):
    report = _report(tmp_path)
    report.add(Check("ConfigMap a/b", "apply", True, "created", "environment", "dev"))
    report.limit(_limit())
    report.limit(
        Limit(
            "health: use1 gateway",
            "gate",
            "the rehearsal runs no data plane",
            "the models' Ready conditions",
            "environment",
            "dev",
        )
    )
    assert report.conclude() == 0
    report.write(tmp_path / "rehearsal.json")
    document = json.loads((tmp_path / "rehearsal.json").read_text())
    assert document["ok"] is True and document["limits"] == 2
    stack = document["stacks"][0]
    assert [c["name"] for c in stack["checks"]] == ["ConfigMap a/b"]  # a limit never passes for a check
    assert stack["limits"][0] == {
        "object": "release keda (keda 2.20.2)",
        "category": "apply",
        "rehearsed": False,
        "reason": "not rehearsed: the keda chart lives in kedacore/charts, which is not a Go module",
        "standsIn": "its 6 CRD(s), installed from github.com/kedacore/keda/v2@v2.20.2:config/crd/bases",
        "wave": "environment",
        "stack": "dev",
        "cluster": "dev-use1",
    }
    assert document["summary"]["apply"] == {"passed": 1, "limits": 1}
    assert document["summary"]["gate"] == {"limits": 1}
    shown = (tmp_path / "out.txt").read_text()
    assert "limit [apply] dev-use1: release keda (keda 2.20.2): not rehearsed" in shown
    assert "in its place: its 6 CRD(s)" in shown
    assert "all 1 checks passed; 2 declared limit(s)" in shown


def test_a_failed_check_fails_the_run_beside_limits(tmp_path: Path):
    report = _report(tmp_path)
    report.limit(_limit())
    report.add(Check("Queue research", "apply", False, "refused by the API server: 400", "environment", "dev"))
    assert report.conclude() == 1
    assert report.document()["ok"] is False
    assert "1 of 1 check(s) failed" in (tmp_path / "out.txt").read_text()


def test_every_chart_the_rehearsal_cannot_install_says_what_stands_in():
    assert [key for key, source in CHART_SOURCES.items() if source.files is None and not source.stands_in] == []
    assert [key for key, source in CHART_SOURCES.items() if source.files is None and not source.unavailable] == []


def test_policy_gate_judges_make_plans_verdict(tmp_path: Path):
    from tools.rehearsal.gates import _policy_gate

    class Rehearsal:
        out_dir, env_name = tmp_path, "prod"

    wave = Wave("canary", ("prod.use1",), False)
    missing = _policy_gate(Rehearsal(), wave)  # no policy.json: nothing to judge is no pass
    assert missing.ok is False and "run `make plan ENV=prod` first" in missing.detail
    (tmp_path / "policy.json").write_text(
        json.dumps(
            [
                {
                    "urn": "urn:pulumi:prod.use1::p::t::a",
                    "policy": "p1",
                    "message": "m",
                    "enforcementLevel": "mandatory",
                },
                {
                    "urn": "urn:pulumi:prod.usw2::p::t::b",
                    "policy": "p2",
                    "message": "m",
                    "enforcementLevel": "mandatory",
                },
                {
                    "urn": "urn:pulumi:prod.use1::p::t::c",
                    "policy": "p3",
                    "message": "m",
                    "enforcementLevel": "advisory",
                },
            ]
        )
    )
    gate = _policy_gate(Rehearsal(), wave)
    assert gate.ok is False and "1 mandatory violation(s): prod.use1: policy p1" in gate.detail


class ObjectStore:
    """A cluster's objects in memory, as the cert-manager stand-in reads and writes them."""

    def __init__(self, objects: list[dict]):
        self.objects = {
            self._key(o["apiVersion"], o["kind"], o["metadata"]["name"], o["metadata"].get("namespace")): o
            for o in objects
        }

    @staticmethod
    def _key(api_version, kind, name, namespace):
        return (api_version, kind, namespace or "", name)

    def get(self, api_version, kind, name, namespace=None):
        return self.objects.get(self._key(api_version, kind, name, namespace))

    def create(self, obj, *, field_manager):
        meta = obj["metadata"]
        self.objects[self._key(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))] = obj

    def patch_status(self, api_version, kind, namespace, name, patch):
        self.get(api_version, kind, name, namespace)["status"] = patch["status"]

    def list(self, api_version, kind, namespace=None, *, selector=None):
        wanted = dict(part.split("=", 1) for part in selector.split(",")) if selector else {}
        return [
            o
            for (v, k, ns, _), o in self.objects.items()
            if (v, k) == (api_version, kind)
            and namespace in (None, ns)
            and wanted.items() <= (o["metadata"].get("labels") or {}).items()
        ]


def test_fluids_csi_driver_is_registered_where_its_node_plugin_runs():
    """Volcano offers a CSI claim's resource only on nodes whose CSINode lists the driver (VOLCANO_COUNTS_CSI_CLAIMS):
    the stand-in registers fuse.csi.fluid.io, with no volume limit, on the nodes where the plugin's pod runs."""
    from tools.rehearsal.fluid import FluidStandIn

    def node(name):
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": f"uid-{name}"}}

    def plugin(name, node_name, phase):
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "fluid-system", "labels": {"app": "csi-nodeplugin-fluid"}},
            "spec": {"nodeName": node_name},
            "status": {"phase": phase},
        }

    store = ObjectStore(
        [
            node("l40s-0"),
            node("l40s-1"),
            node("system-0"),
            plugin("a", "l40s-0", "Running"),
            plugin("b", "l40s-1", "Pending"),
        ]
    )
    FluidStandIn(store, "dev-use1", "/runtime-mnt")._register_csi_driver()  # type: ignore[arg-type]
    csi_nodes = store.list("storage.k8s.io/v1", "CSINode")
    assert csi_nodes == [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {
                "name": "l40s-0",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "l40s-0", "uid": "uid-l40s-0"}],
            },
            "spec": {"drivers": [{"name": "fuse.csi.fluid.io", "nodeID": "l40s-0"}]},
        }
    ]


def test_helm_templates_are_the_releases_own_and_crds_files_are_not():
    """What `helm template` prints, split as `helm install` applies it: a chart's crds/ files apart (skipped when
    they exist), the templates' objects, CRDs included, labelled and annotated as the release's (Helm's
    setMetadataVisitor), hooks as they are."""
    text = (
        "---\n# Source: kserve-crd/crds/a.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata:\n  name: a.example.io\n"
        "---\n# Source: kserve-crd/templates/b.yaml\napiVersion: apiextensions.k8s.io/v1\n"
        "kind: CustomResourceDefinition\nmetadata:\n  name: b.example.io\n"
        "---\n# Source: kserve-crd/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
        "  labels:\n    app: x\n"
    )
    assert [(source, doc["metadata"]["name"]) for source, doc in helm.rendered_documents(text)] == [
        ("kserve-crd/crds/a.yaml", "a.example.io"),
        ("kserve-crd/templates/b.yaml", "b.example.io"),
        ("kserve-crd/templates/cm.yaml", "c"),
    ]
    config_map = helm.owned({"metadata": {"name": "c", "labels": {"app": "x"}}}, "kserve-crd", "kserve")
    assert config_map["metadata"] == {
        "name": "c",
        "labels": {"app": "x", "app.kubernetes.io/managed-by": "Helm"},
        "annotations": {"meta.helm.sh/release-name": "kserve-crd", "meta.helm.sh/release-namespace": "kserve"},
    }


def test_a_cluster_issuers_ca_is_read_from_the_cluster_resource_namespace():
    """cert-manager reads a ClusterIssuer's secrets in --cluster-resource-namespace (the release's namespace),
    not in the Certificate's (cert-manager@v1.21.1:pkg/controller/helper.go L26-L29)."""
    import base64

    from tools.rehearsal.certmanager import CertManagerStandIn
    from tools.rehearsal.pki import self_signed

    ca = self_signed("gateway CA", is_ca=True)
    store = ObjectStore(
        [
            {
                "apiVersion": "cert-manager.io/v1",
                "kind": "ClusterIssuer",
                "metadata": {"name": "gateway-ca"},
                "spec": {"ca": {"secretName": "gateway-ca"}},
            },
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "gateway-ca", "namespace": "cert-manager"},
                "data": {
                    "tls.crt": base64.b64encode(ca.cert_pem.encode()).decode(),
                    "tls.key": base64.b64encode(ca.key_pem.encode()).decode(),
                },
            },
        ]
    )
    certificate = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": "gateway", "namespace": "envoy-gateway-system"},
        "spec": {
            "secretName": "gateway-tls",
            "dnsNames": ["use1.llm.example"],
            "issuerRef": {"kind": "ClusterIssuer", "name": "gateway-ca"},
        },
    }
    store.create(certificate, field_manager="test")
    CertManagerStandIn(store, "c", "cert-manager")._issue(certificate)
    issued = store.get("v1", "Secret", "gateway-tls", "envoy-gateway-system")
    assert issued is not None and issued["stringData"]["ca.crt"] == ca.cert_pem
    assert certificate["status"]["conditions"][0]["status"] == "True"
    # Read from the Certificate's namespace, the CA is not there: nothing is issued.
    elsewhere = {**certificate, "metadata": {"name": "other", "namespace": "inference"}}
    elsewhere["spec"] = {**certificate["spec"], "secretName": "other-tls"}
    CertManagerStandIn(store, "c", "inference")._issue(elsewhere)
    assert store.get("v1", "Secret", "other-tls", "inference") is None


@pytest.mark.parametrize(
    ("image", "mode"),
    [
        # the Karmada chart's wait scripts, in the image the catalog pins (busybox sh, bash, kubectl: script)
        ("docker.io/alpine/k8s:1.34.1@sha256:" + "e" * 64, "script"),
        ("cfssl/cfssl:v1.6.5", "script"),
        # distroless: the runtime cannot start /bin/sh (catalog fact registry-k8s-io-kubectl-has-no-shell)
        ("registry.k8s.io/kubectl:v1.35.2", "no-shell"),
        ("quay.io/some/tool:v1", None),  # unknown: played as kwok plays it
    ],
)
def test_a_script_runs_only_in_an_image_with_a_shell(image, mode, monkeypatch):
    monkeypatch.setattr(kubelet.cache, "binary_path", lambda name: Path("/bin/true"))  # every tool built
    container = {"name": "wait", "image": image, "command": ["/bin/sh", "-c", "bash <<EOF\nkubectl get ns\nEOF"]}
    assert kubelet.runnable(container) == mode
    if mode == "no-shell":
        assert 'exec: "/bin/sh": stat /bin/sh: no such file or directory' in kubelet.no_shell_message(container)
        assert "registry-k8s-io-kubectl-has-no-shell" in kubelet.no_shell_message(container)


class WorkloadKube:
    """A Deployment whose status counts a pod available, and that pod as it is now."""

    def __init__(self, pod_ready: str):
        self.deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "controller", "namespace": "system"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "controller"}}},
            "status": {"availableReplicas": 1, "updatedReplicas": 1},
        }
        self.pod = {
            "metadata": {"name": "controller-1", "namespace": "system", "labels": {"app": "controller"}},
            "status": {"conditions": [{"type": "Ready", "status": pod_ready}]},
        }

    def get(self, api_version, kind, name, namespace=None):
        return self.deployment

    def list(self, api_version, kind, namespace=None, *, selector=None):
        assert (kind, namespace, selector) == ("Pod", "system", "app=controller")
        return [self.pod]


@pytest.mark.parametrize(("pod_ready", "ready"), [("True", True), ("False", False)])
def test_a_workload_is_ready_only_when_its_pods_are(pod_ready, ready):
    """The controller's count can still hold kwok's first word for a pod the rehearsal's kubelet runs."""
    kube = WorkloadKube(pod_ready)
    assert pulumi_k8s.probe_ready(kube, kube.deployment) == (
        ready,
        f"{int(ready)}/1 replicas available",
    )


class ServiceKube:
    """The chart's webhook Service, selecting its controller, and the v1 Endpoints the endpoints controller keeps."""

    def __init__(self, subsets, version="1"):
        self.service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "kserve-webhook-server-service", "namespace": "kserve"},
            "spec": {"selector": {"control-plane": "kserve-controller-manager"}, "ports": [{"port": 443}]},
        }
        self.endpoints = None if subsets is None else {"metadata": {"resourceVersion": version}, "subsets": subsets}

    def get(self, api_version, kind, name, namespace=None):
        assert (name, namespace) == ("kserve-webhook-server-service", "kserve")
        return {"Service": self.service, "Endpoints": self.endpoints}[kind]


@pytest.mark.parametrize(
    ("subsets", "ready"),
    [
        (None, True),  # not yet written: ready as far as this test goes; no event, so they never settle (below)
        ([], True),  # upstream's own case: 'Should succeed with no endpoints'
        ([{"addresses": [{"ip": "10.0.0.5"}]}], True),
        ([{"addresses": [{"ip": "10.0.0.5"}], "notReadyAddresses": [{"ip": "10.0.0.6"}]}], False),
    ],
)
def test_a_service_is_awaited_on_its_v1_endpoints_as_the_provider_does(subsets, ready):
    """service.go reads v1 Endpoints (not EndpointSlices) and refuses only a not-ready address."""
    kube = ServiceKube(subsets)
    assert pulumi_k8s.probe_ready(kube, kube.service)[0] is ready


class SecretKube:
    """A Secret as the API server has it: `data` as the token controller left it."""

    def __init__(self, data):
        self.live = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "karmada-member"}, "data": data}

    def get(self, api_version, kind, name, namespace=None):
        assert (api_version, kind, name) == ("v1", "Secret", "karmada-member")
        return self.live


def _secret(type_: str, **annotations: str) -> dict:
    meta = {"name": "karmada-member", "namespace": "karmada-cluster", "annotations": annotations}
    return {"apiVersion": "v1", "kind": "Secret", "type": type_, "metadata": meta}


def test_a_token_secret_is_awaited_five_seconds_for_its_data_as_the_provider_does():
    """awaiters.go untilCoreV1SecretInitialized: only a service-account-token Secret is awaited, until its data map
    is not empty, for 5 s (a timeout fails the create); any other Secret is done once created."""
    token = _secret("kubernetes.io/service-account-token")
    assert pulumi_k8s.awaited(token) and pulumi_k8s.await_seconds(token) == 5.0
    assert not pulumi_k8s.awaited(_secret("Opaque"))
    assert not pulumi_k8s.awaited(_secret("kubernetes.io/service-account-token", **{"pulumi.com/skipAwait": "true"}))
    assert pulumi_k8s.await_seconds(ServiceKube([]).service) == pulumi_k8s.AWAIT_SECONDS
    assert pulumi_k8s.probe_ready(SecretKube({}), token) == (False, "no data yet")
    assert pulumi_k8s.probe_ready(SecretKube(None), token)[0] is False
    assert pulumi_k8s.probe_ready(SecretKube({"token": "ZXk="}), token)[0] is True


def _awaiting(kube, at: float):
    from tools.rehearsal import runner

    return runner.Awaiting(None, type("T", (), {"kube": kube})(), kube.service, at, at + 60)


def test_a_ready_service_waits_until_its_endpoints_settle(monkeypatch):
    """Each Endpoints event starts a 10 s timer that settles them and unsettles them itself; none is cancelled."""
    from tools.rehearsal import runner

    clock = [100.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])
    kube = ServiceKube([{"addresses": [{"ip": "10.0.0.5"}]}])
    waiting = _awaiting(kube, 100.0)
    assert waiting.settled(True, "ready")[0] is False  # the first listing is an event
    clock[0] = 109.0
    assert waiting.settled(True, "ready") == (
        False,
        "ready, settling (9 s since its last Endpoints change, 10 s needed)",
    )
    kube.endpoints["metadata"]["resourceVersion"] = "2"  # a second pod turned ready, seen at 109
    assert waiting.settled(True, "ready")[0] is False
    clock[0] = 110.0  # the first timer fired at 110, after the event of 109: settled
    assert waiting.settled(True, "ready") == (True, "ready")
    assert waiting.settled(False, "1 not ready")[0] is False  # a not-ready address holds it whatever the timers


def test_a_change_seen_long_after_the_look_before_may_have_come_before_a_timer(monkeypatch):
    """Looks 120 s apart (the stack installed a release meanwhile; the kubelets ran on): the change may have come
    right after the look at 100, before the first timer (110), which then settled it, as the provider would."""
    from tools.rehearsal import runner

    clock = [100.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])
    kube = ServiceKube([])
    waiting = _awaiting(kube, 100.0)
    waiting.settled(True, "ready")
    clock[0] = 220.0
    kube.endpoints["metadata"]["resourceVersion"] = "2"
    assert waiting.settled(True, "ready") == (True, "ready")


def test_a_change_seen_at_the_look_its_earlier_timer_fires_at_is_taken_as_settled(monkeypatch):
    """The look cannot tell the change from the timer (each second's look sees both); the provider settles on any
    timer that fires after the latest change, so Endpoints that keep changing settle 10 s after the first change."""
    from tools.rehearsal import runner

    clock = [100.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])
    kube = ServiceKube([])
    waiting = _awaiting(kube, 100.0)
    for second in range(100, 110):  # a change at every look
        clock[0] = float(second)
        kube.endpoints["metadata"]["resourceVersion"] = str(second)
        assert waiting.settled(True, "ready")[0] is False
    clock[0] = 110.0
    kube.endpoints["metadata"]["resourceVersion"] = "110"
    assert waiting.settled(True, "ready") == (True, "ready")


def test_the_next_timer_is_the_earliest_still_pending(monkeypatch):
    from tools.rehearsal import runner

    clock = [100.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])
    kube = ServiceKube([])
    waiting = _awaiting(kube, 100.0)
    waiting.settled(True, "ready")  # the first listing at 100: its timer at 110
    for second, version in ((101.0, "2"), (102.0, "3")):
        clock[0] = second
        kube.endpoints["metadata"]["resourceVersion"] = version
        waiting.settled(True, "ready")
    assert waiting.next_settle_timer(105.0) == 110.0
    assert waiting.next_settle_timer(110.5) == 111.0


def test_a_later_event_unsettles_until_a_timer_after_it_fires(monkeypatch):
    from tools.rehearsal import runner

    clock = [100.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])
    kube = ServiceKube([])
    waiting = _awaiting(kube, 100.0)
    for second in range(100, 111):  # a look each second; the timer fires at 110, before anything changed: ready
        clock[0] = float(second)
        waiting.settled(False, "1 not ready")
    clock[0] = 111.0
    kube.endpoints["metadata"]["resourceVersion"] = "2"  # changed after the look at 110, after the first timer
    assert waiting.settled(True, "ready")[0] is False
    clock[0] = 120.9
    assert waiting.settled(True, "ready")[0] is False
    clock[0] = 121.0
    assert waiting.settled(True, "ready")[0] is True


def test_without_an_endpoints_object_a_service_never_settles_and_selector_less_ones_are_not_waited(monkeypatch):
    from tools.rehearsal import runner

    clock = [100.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])
    kube = ServiceKube(None)
    waiting = _awaiting(kube, 100.0)
    clock[0] = 150.0
    assert waiting.settled(True, "ready")[0] is False
    kube.service["spec"].pop("selector")
    assert _awaiting(kube, 150.0).settled(True, "ready") == (True, "ready")


def test_a_stand_in_runs_without_the_flags_only_the_pinned_version_knows(monkeypatch):
    """Volcano v1.14.1 stands in for v1.15.1 (README, "Rehearsal tools"): v1.15.1's chart passes
    --sharding-configmap, which v1.14.1's controller manager refuses (`unknown flag`)."""
    monkeypatch.setattr(kubelet.cache, "built_versions", lambda: {"volcano-controller-manager": {"version": "v1.14.1"}})
    monkeypatch.setattr(kubelet, "known_flags", lambda binary: frozenset({"leader-elect", "logtostderr"}))
    container = {
        "name": "volcano-controllers",
        "image": "docker.io/volcanosh/vc-controller-manager:v1.15.1",
        "args": ["--leader-elect=false", "--sharding-configmap=volcano-sharding", "--logtostderr"],
    }
    assert kubelet.unknown_flags(container) == ["--sharding-configmap"]
    at_pin = {**container, "image": "docker.io/volcanosh/vc-controller-manager:v1.14.1"}
    assert kubelet.unknown_flags(at_pin) == []  # the program is the image's version: every flag is its own


def test_fluid_volumes_are_made_as_the_alluxio_runtime_controller_makes_them():
    """fluid@v1.0.8:pkg/utils/dataset/volume/create.go: PV <namespace>-<name> pre-bound to the claim <name>, the
    Dataset's access modes, 100Pi, the fuse CSI driver, and the runtime's fuse nodeSelector as node affinity."""
    from tools.rehearsal.fluid import volume_objects

    runtime = {
        "metadata": {"name": "models", "namespace": "inference"},
        "spec": {"fuse": {"nodeSelector": {"inference-platform.io/gpu": "true"}}},
    }
    dataset = {"metadata": {"name": "models", "namespace": "inference"}, "spec": {}}
    volume, claim = volume_objects(runtime, dataset, "/var/lib/docker/runtime-mnt")
    assert volume["metadata"]["name"] == "inference-models" == claim["spec"]["volumeName"]
    assert volume["spec"]["claimRef"] == {"namespace": "inference", "name": "models"}
    assert volume["spec"]["accessModes"] == claim["spec"]["accessModes"] == ["ReadOnlyMany"]
    assert volume["spec"]["capacity"] == {"storage": "100Pi"}
    assert volume["spec"]["csi"]["driver"] == "fuse.csi.fluid.io"
    assert volume["spec"]["csi"]["volumeAttributes"]["fluid_path"] == (
        "/var/lib/docker/runtime-mnt/alluxio/inference/models/alluxio-fuse"
    )
    assert volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "inference-platform.io/gpu", "operator": "In", "values": ["true"]}]}
    ]
    assert claim["metadata"] == {
        "name": "models",
        "namespace": "inference",
        "labels": {"fluid.io/s-inference-models": "true", "fluid.io/dataset-id": "inference-models"},
        "annotations": {"CreatedBy": "fluid"},
    }
    unpinned, _ = volume_objects({**runtime, "spec": {}}, dataset, "/runtime-mnt")
    assert "nodeAffinity" not in unpinned["spec"]  # no fuse nodeSelector: any node


def test_inputs_set_to_none_are_kept_as_the_engine_keeps_them():
    """A Helm value set to None reaches Helm as null, which deletes the chart's default (the karmada agent's
    `strategy.rollingUpdate` under `type: Recreate`); the SDK's deserializer alone would drop it."""
    from google.protobuf import struct_pb2
    from pulumi.runtime import rpc

    from tools.plan.engine import with_nulls

    struct = struct_pb2.Struct()
    struct.update(
        {
            "values": {"agent": {"strategy": {"type": "Recreate", "rollingUpdate": None}}, "list": [{"a": None}]},
            "secret": {rpc._special_sig_key: rpc._special_secret_sig, "value": {"key": None, "kept": "x"}},
        }
    )
    plain = rpc.deserialize_properties(struct, keep_unknowns=True)
    assert plain["values"]["agent"]["strategy"] == {"type": "Recreate"}  # what the SDK gives the mocks
    with_nulls(struct, plain)
    kept = plain
    assert kept["values"]["agent"]["strategy"] == {"type": "Recreate", "rollingUpdate": None}
    assert kept["values"]["list"] == [{"a": None}]
    assert kept["secret"] == {rpc._special_sig_key: rpc._special_secret_sig, "value": {"key": None, "kept": "x"}}


def test_a_read_of_a_clusters_kube_system_is_answered_as_the_cluster_answers_it():
    """The plan's Cluster `spec.id` is its mock read of the member's kube-system UID; the agent checks the live one
    (KARMADA_AGENT_REGISTERS), so the rehearsal replaces the mock's value, and only that value."""
    from tools.plan.mocks import read_namespace_uid
    from tools.rehearsal.runner import _resolved

    mock = read_namespace_uid("prod-use1-kube-system")
    reads = {mock: "4b6bfd4c-1715-4bae-8853-6dc4245b2f7b"}
    cluster = {"kind": "Cluster", "spec": {"id": mock, "syncMode": "Pull", "taints": [{"key": mock}]}}
    resolved = _resolved(cluster, reads)
    assert resolved["spec"] == {
        "id": "4b6bfd4c-1715-4bae-8853-6dc4245b2f7b",
        "syncMode": "Pull",
        "taints": [{"key": "4b6bfd4c-1715-4bae-8853-6dc4245b2f7b"}],
    }
    assert _resolved(cluster, {}) == cluster


def test_a_reference_dataset_claims_the_physical_volume_in_its_own_namespace():
    """fluid@v1.0.8:pkg/ddc/thin/referencedataset/volume.go: the physical PV's spec, claimed by the referring
    Dataset, read-only, with the path below the referred Dataset as fluid_sub_path."""
    from tools.rehearsal.fluid import reference_objects, referred, volume_objects

    runtime = {"metadata": {"name": "models", "namespace": "model-cache"}, "spec": {}}
    physical = {"metadata": {"name": "models", "namespace": "model-cache"}, "spec": {}}
    volume, claim = volume_objects(runtime, physical, "/runtime-mnt")
    dataset = {
        "metadata": {"name": "models", "namespace": "inference"},
        "spec": {"mounts": [{"name": "models", "mountPoint": "dataset://model-cache/models/llama"}]},
    }
    assert referred(dataset) == ("model-cache", "models", "llama")
    ref_volume, ref_claim = reference_objects(dataset, volume, claim)
    assert ref_volume["metadata"]["name"] == "inference-models" == ref_claim["spec"]["volumeName"]
    assert ref_volume["spec"]["claimRef"] == {"namespace": "inference", "name": "models"}
    assert (
        ref_volume["spec"]["csi"]["volumeAttributes"]["fluid_path"]
        == volume["spec"]["csi"]["volumeAttributes"]["fluid_path"]
    )
    assert ref_volume["spec"]["csi"]["volumeAttributes"]["fluid_sub_path"] == "llama"
    assert volume["spec"]["claimRef"] == {"namespace": "model-cache", "name": "models"}  # the physical one untouched
    assert ref_claim["metadata"]["namespace"] == "inference"
    assert ref_claim["metadata"]["labels"]["fluid.io/dataset.referring-namespace"] == "model-cache"
    assert ref_claim["spec"]["accessModes"] == ["ReadOnlyMany"]
    assert referred({"metadata": {}, "spec": {"mounts": [{"mountPoint": "s3://bucket/models"}]}}) is None


def test_a_models_pods_are_its_workloads_not_its_picker():
    """KServe v0.20.0's labels (KSERVE_LLM_WORKLOAD_LABELS, written out from its source): the scheduled check reads
    an LLMInferenceService's decode and prefill pods, never its router-scheduler, which runs on system nodes."""
    from tools.rehearsal.serving import MODEL_POD_SELECTORS

    common = {"app.kubernetes.io/name": "rag", "app.kubernetes.io/part-of": "llminferenceservice"}
    decode = {
        **common,
        "app.kubernetes.io/component": "llminferenceservice-workload",
        "kserve.io/component": "workload",
    }
    prefill = {**decode, "app.kubernetes.io/component": "llminferenceservice-workload-prefill"}
    router = {**common, "app.kubernetes.io/component": "llminferenceservice-router-scheduler"}
    selector = MODEL_POD_SELECTORS["LLMInferenceService"]("rag").items()
    assert selector <= decode.items() and selector <= prefill.items() and not selector <= router.items()
    predictor = {"serving.kserve.io/inferenceservice": "llama", "app": "isvc.llama-predictor"}
    assert MODEL_POD_SELECTORS["InferenceService"]("llama").items() <= predictor.items()


def test_an_override_in_effect_is_told_by_value_and_by_quantity():
    from tools.rehearsal.karmada_checks import _same

    assert _same("2", 2) and _same(2, 2) and _same("2000m", 2) and _same({"a": 1}, {"a": 1})
    assert not _same("2", 4) and not _same("h200", "h100") and not _same("2", "two") and not _same(None, 2)


def test_a_process_is_counted_under_the_program_it_runs(tmp_path: Path):
    """CPU is reported per program (rehearsal.json cpuSeconds): a pod's binary, run through ip netns/unshare/chroot,
    or the executable itself."""
    from tools.rehearsal.processes import Process

    pod = ["ip", "netns", "exec", "rh1-ab", "unshare", "--mount", "/bin/sh", "-c"]
    pod.append('set -e\nexec chroot "$R" /usr/bin/env -C / /rehearsal/bin/epp --pool-name llama')
    assert Process("p", pod, tmp_path / "log", None).program == "epp"  # type: ignore[arg-type]
    server = ["/root/.cache/inference-platform/rehearsal/bin/kube-apiserver", "--secure-port=1"]
    assert Process("s", server, tmp_path / "log", None).program == "kube-apiserver"  # type: ignore[arg-type]


def test_the_store_is_stopped_after_everything_that_writes_to_it(tmp_path: Path):
    """An API server removes its endpoint lease from etcd as it stops: etcd must still answer then, so it gets its
    SIGTERM only once the others have exited (each program here logs the moment of its SIGTERM and of its exit)."""
    from tools.rehearsal.processes import Supervisor

    events = tmp_path / "events"
    for program in ("etcd", "kube-apiserver"):
        script = tmp_path / program
        script.write_text(
            f"#!/bin/sh\ntrap 'echo {program} term >> {events}; sleep 0.3; echo {program} exit >> {events}; exit 0' TERM\n"
            f"echo {program} up >> {events}\nwhile :; do sleep 0.05; done\n"
        )
        script.chmod(0o755)
    with Supervisor(tmp_path / "logs") as supervisor:
        supervisor.start("etcd", [str(tmp_path / "etcd")])
        supervisor.start("apiserver", [str(tmp_path / "kube-apiserver")])
        deadline = time.monotonic() + 5
        while (events.read_text() if events.exists() else "").count(" up") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert events.read_text().splitlines()[2:] == [
        "kube-apiserver term",
        "kube-apiserver exit",
        "etcd term",
        "etcd exit",
    ]


def test_a_large_manifest_is_parsed_once_and_kept_as_json(tmp_path: Path, monkeypatch):
    from tools.rehearsal import charts

    monkeypatch.setenv("INFERENCE_PLATFORM_CACHE", str(tmp_path))
    monkeypatch.setattr(charts, "PARSED_CACHE_MIN_BYTES", 10)
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: '1'\n---\n"
    expected = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": "1"}}]
    assert charts.load_all(text) == expected
    (kept,) = (tmp_path / "rehearsal" / "parsed").iterdir()
    assert json.loads(kept.read_text()) == expected
    kept.write_text(json.dumps([{"kind": "Kept"}]))  # the second read is the kept one
    assert charts.load_all(text) == [{"kind": "Kept"}]
    dated = "kind: Event\nmetadata:\n  name: b\nday: 2026-12-02\n"  # a YAML date: not JSON, parsed, not kept
    assert charts.load_all(dated)[0]["day"].isoformat() == "2026-12-02"
    assert len(list((tmp_path / "rehearsal" / "parsed").iterdir())) == 1


def test_the_ca_is_injected_once_per_version_of_an_object():
    """cainjector's work, done as it would be; a CRD (megabytes) is read again only when it changed."""
    from tools.rehearsal.certmanager import CertManagerStandIn

    class Store(ObjectStore):
        def __init__(self, objects):
            super().__init__(objects)
            self.reads: list[str] = []

        def get(self, api_version, kind, name, namespace=None):
            self.reads.append(f"{kind} {name}")
            return super().get(api_version, kind, name, namespace)

        def list_metadata(self, api_version, kind):
            return [{"metadata": o["metadata"]} for o in self.list(api_version, kind)]

        def apply(self, patch, *, field_manager, force=False):
            live = super().get(patch["apiVersion"], patch["kind"], patch["metadata"]["name"])
            live["spec"]["conversion"] = patch["spec"]["conversion"]
            live["metadata"]["resourceVersion"] = str(int(live["metadata"]["resourceVersion"]) + 1)
            return live

    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": "llminferenceservices.serving.kserve.io",
            "resourceVersion": "7",
            "annotations": {"cert-manager.io/inject-ca-from": "kserve/serving-cert"},
        },
        "spec": {"conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "w"}}}}},
    }
    certificate = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": "serving-cert", "namespace": "kserve"},
        "spec": {"secretName": "serving-cert"},
    }
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "serving-cert", "namespace": "kserve"}}
    secret["data"] = {"ca.crt": "Q0E="}
    store = Store([crd, certificate, secret])
    stand_in = CertManagerStandIn(store, "c", "cert-manager")  # type: ignore[arg-type]
    stand_in.reconcile()
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] == "Q0E="
    assert crd["metadata"]["resourceVersion"] == "8"
    store.reads.clear()
    stand_in.reconcile()
    assert f"CustomResourceDefinition {crd['metadata']['name']}" not in store.reads


def test_a_container_runs_once_its_process_is_its_program(tmp_path: Path, monkeypatch):
    """Before it has changed root into the pod and exec'd the program, the process is the rehearsal's setup
    (ip netns, unshare, mounts, chroot, env): not a running container, so not ready (a probe-less webhook server
    was reported ready before it listened)."""
    import os
    import subprocess
    from types import SimpleNamespace

    from tools.rehearsal.processes import Process

    setup = subprocess.Popen(["sleep", "5"])
    try:
        assert Process("p", ["sleep"], tmp_path / "log", setup).entered() is False  # still in the host's root
    finally:
        setup.kill()
        setup.wait()
    links = {"root": "/work/build/dev/rehearsal/dev-use1/pods/p/root", "exe": "/rehearsal/bin/volcano-webhook-manager"}
    monkeypatch.setattr(os, "readlink", lambda path: links[path.rsplit("/", 1)[-1]])
    process = Process("p", ["ip"], tmp_path / "log", SimpleNamespace(pid=1))  # type: ignore[arg-type]
    assert process.entered() is True
    links["exe"] = "/usr/bin/env"  # chroot'd, not yet exec'd
    assert process.entered() is False


def test_a_stand_in_that_exits_once_is_waited_for_one_that_crash_loops_is_not(monkeypatch):
    from tools.rehearsal import releases

    monkeypatch.setattr(releases, "stand_in", lambda c: "volcano-webhook-manager v1.14.1 stands in")
    deployment = {
        "metadata": {"name": "volcano-admission", "namespace": "volcano-system"},
        "spec": {"selector": {"matchLabels": {"app": "volcano-admission"}}, "template": {"spec": {}}},
    }
    deployment["spec"]["template"]["spec"]["containers"] = [{"name": "admission", "image": "vc-webhook-manager"}]

    def pod(restarts):
        status = {"name": "admission", "restartCount": restarts, "state": {"waiting": {"message": "conflict"}}}
        return {
            "metadata": {"name": "a", "labels": {"app": "volcano-admission"}},
            "status": {"containerStatuses": [status]},
        }

    class Pods:
        def __init__(self, restarts):
            self.restarts = restarts

        def list(self, api_version, kind, namespace=None, *, selector=None):
            return [pod(self.restarts)]

    assert releases._stand_in_crashed(Pods(1), deployment) is None  # type: ignore[arg-type]
    assert "conflict" in releases._stand_in_crashed(Pods(3), deployment)  # type: ignore[arg-type,operator]


@pytest.mark.plan
def test_a_federated_models_picker_is_checked_in_the_wave_that_gives_its_pool_pods():
    """prod: use1's picker of llama-3-1-70b starts in the canary wave, but the model's InferenceService reaches use1
    only through Karmada in the global wave; llama-3-1-8b's is created with its picker."""
    from types import SimpleNamespace

    from tools.rehearsal.serving import _wave_serving

    plan = plan_for("prod")
    rehearsal = SimpleNamespace(plan=plan, env=plan.spec, env_name="prod")
    canary = Wave("canary", ("prod.use1",), False)
    assert _wave_serving(rehearsal, canary, "llama-3-1-70b", "prod-use1") == "global"  # type: ignore[arg-type]
    assert _wave_serving(rehearsal, canary, "llama-3-1-8b", "prod-use1") is None  # type: ignore[arg-type]
    assert _wave_serving(rehearsal, Wave("global", ("prod.global",), False), "llama-3-1-70b", "prod-use1") is None  # type: ignore[arg-type]


@pytest.mark.plan
def test_clusterpedias_crds_come_only_from_the_config_files_the_program_applies():
    """The program renders Clusterpedia itself (no chart) and applies its two CRDs as ConfigFiles, which the rehearsal
    takes from their vendored copies (the module proxy refuses clusterpedia v0.9.0): no release or chart source
    installs them a second time, which would fail the second create (AlreadyExists)."""
    from tools.rehearsal.charts import VENDORED_CONFIG_FILES

    plan = plan_for("prod")
    assert [r.name for r in plan.helm_releases() if "clusterpedia" in str(r.inputs["chart"])] == []
    assert [key for key in CHART_SOURCES if key[0] == "clusterpedia"] == []
    urls = sorted(
        r.inputs["file"]
        for r in plan.resources
        if r.type == "kubernetes:yaml/v2:ConfigFile" and "clusterpedia" in r.inputs["file"]
    )
    # clusterpedia-io/clusterpedia@v0.9.0:kustomize/crds: its two CRDs.
    assert [u.rsplit("/", 1)[1] for u in urls] == [
        "cluster.clusterpedia.io_clustersyncresources.yaml",
        "cluster.clusterpedia.io_pediaclusters.yaml",
    ]
    assert all(url in VENDORED_CONFIG_FILES for url in urls)


@pytest.mark.parametrize(
    ("mode", "region", "knative"), [("Knative", "use1", True), ("Standard", "use1", False), ("Knative", None, False)]
)
def test_a_models_gate_of_a_knative_region_is_a_limit_not_a_check(mode, region, knative):
    """Knative Serving is a prerequisite the platform does not install: the rehearsal, which runs none, declares the
    models of such a region not rehearsed instead of failing them (the Karmada API's check has no region)."""
    from types import SimpleNamespace

    from tools.rehearsal import gates

    env = SimpleNamespace(region=lambda name: SimpleNamespace(serving=SimpleNamespace(deployment_mode=mode)))
    check = SimpleNamespace(target=SimpleNamespace(what="serving", region=region))
    assert gates._knative(SimpleNamespace(env=env), check) is knative  # type: ignore[arg-type]


class _TokenKube:
    """A member's API: its token Secret as its token controller fills it (or not yet)."""

    def __init__(self, token: str | None):
        self.token = token

    def get(self, api_version, kind, name, namespace=None):
        assert (api_version, kind, name, namespace) == (
            "v1",
            "Secret",
            "karmada-controller-manager-token",
            "karmada-cluster",
        )
        return {"data": {"token": self.token} if self.token else {}}


def _push_rehearsal(tmp_path: Path, token: str | None):
    """A rehearsal with push-use1 up (its CA in its pki) and the plan's token Secret on it."""
    from types import SimpleNamespace

    from tools.plan.engine import PlannedResource

    (tmp_path / "pki").mkdir(parents=True)
    (tmp_path / "pki" / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\nlive\n-----END CERTIFICATE-----\n")
    secret = PlannedResource(
        urn="urn:pulumi:push.use1::inference-platform::kubernetes:core/v1:Secret::push-use1-karmada-push-token",
        type="kubernetes:core/v1:Secret",
        name="push-use1-karmada-push-token",
        custom=True,
        inputs={
            "type": "kubernetes.io/service-account-token",
            "metadata": {"name": "karmada-controller-manager-token", "namespace": "karmada-cluster"},
        },
        parent=None,
        provider=None,
        options={},
    )
    plan = SimpleNamespace(resources=[secret], cluster_of=lambda r: "push-use1")
    member = SimpleNamespace(
        name="push-use1",
        region=object(),
        plane=SimpleNamespace(server="https://10.77.0.1:34567", pki=tmp_path / "pki"),
        kube=_TokenKube(token),
    )
    karmada = SimpleNamespace(name="push-karmada", region=None)
    return SimpleNamespace(plan=plan, targets={"push-use1": member, "push-karmada": karmada})


def test_a_push_members_karmada_secret_carries_its_live_ca_and_token(tmp_path: Path):
    """The plan's Secret of a push member holds the mocks' CA and token (tools/plan/mocks.py); the rehearsal applies
    the member's own (tools/rehearsal/karmada_push.py), as `pulumi up` would read them, and only in place of a mock:
    another member's token, or a CA that is not the mocks', stays as the program wired it (helper-89 M1)."""
    import base64

    from tools.plan.mocks import FAKE_CA_DATA, service_account_token
    from tools.rehearsal.karmada_push import live_push_values

    mocked = service_account_token("push-use1-karmada-push-token")
    rehearsal = _push_rehearsal(tmp_path, "bGl2ZS10b2tlbg==")
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "push-use1", "namespace": "karmada-cluster"},
        "data": {"token": mocked, "caBundle": FAKE_CA_DATA},
    }
    ca = base64.b64encode((tmp_path / "pki" / "ca.crt").read_bytes()).decode()
    assert live_push_values(rehearsal, secret)["data"] == {"token": "bGl2ZS10b2tlbg==", "caBundle": ca}
    assert secret["data"] == {"token": mocked, "caBundle": FAKE_CA_DATA}  # the plan's own object is not changed
    # not filled yet: the mock's token stays (Karmada's 401 is then what its Cluster says)
    assert live_push_values(_push_rehearsal(tmp_path / "x", None), secret)["data"]["token"] == mocked
    miswired = {**secret, "data": {"token": service_account_token("push-usw2-karmada-push-token"), "caBundle": "eA=="}}
    assert live_push_values(rehearsal, miswired)["data"] == miswired["data"]


def test_a_clusters_mock_endpoint_is_put_back_as_its_live_server():
    """The plan's push Cluster names the member's endpoint as the cloud reports it (the `clusters` output of the
    member's stack, a mock); `pulumi up` reads the real one. The rehearsal maps each cluster's mock endpoint, by value,
    to its own server, so a Cluster naming another member's endpoint would dial that member."""
    from types import SimpleNamespace

    from tools.rehearsal.runner import Rehearsal, _resolved

    rehearsal = Rehearsal.__new__(Rehearsal)
    rehearsal.reads = {}
    eks = "https://A1329D841BA4960DEF3CD882B92D956C.gr7.us-east-1.eks.amazonaws.com"
    stacks = {
        "push.use1": SimpleNamespace(outputs={"clusters": {"use1": {"endpoint": eks}}}),
        "push.usc1": SimpleNamespace(outputs={"clusters": {"usc1": {"endpoint": "34.118.0.9"}}}),
    }
    rehearsal.plan = SimpleNamespace(stacks=stacks, outputs={})  # type: ignore[assignment]
    kube = SimpleNamespace(get=lambda *_: {"metadata": {"uid": "u"}})
    for name, server in (("use1", "https://10.77.0.1:34567"), ("usc1", "https://10.77.0.1:45678")):
        target = SimpleNamespace(name=f"push-{name}", region=SimpleNamespace(name=name), kube=kube)
        target.plane = SimpleNamespace(server=server)
        rehearsal._resolve_reads(target)  # type: ignore[arg-type]
    assert _resolved({"spec": {"apiEndpoint": eks}}, rehearsal.reads) == {
        "spec": {"apiEndpoint": "https://10.77.0.1:34567"}
    }
    assert rehearsal.reads["https://34.118.0.9"] == "https://10.77.0.1:45678"  # GKE reports a bare address


@pytest.mark.parametrize(
    "obj",
    [
        {  # a push member's Cluster: its endpoint is a read, put back by value (runner.py _resolve_reads)
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": "push-use1"},
            "spec": {"syncMode": "Push", "apiEndpoint": "https://a.gr7.us-east-1.eks.amazonaws.com"},
        },
        {  # the host by its in-cluster API, which the rehearsal's pods reach as they are
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": "push-use1"},
            "spec": {"syncMode": "Push", "apiEndpoint": "https://kubernetes.default.svc"},
        },
        {  # a pull member's Cluster: its agent registers what it reaches
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": "push-use1"},
            "spec": {"syncMode": "Pull", "apiEndpoint": "https://a.gr7.us-east-1.eks.amazonaws.com"},
        },
        {  # a Cluster of no member the rehearsal runs
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": "elsewhere"},
            "spec": {"syncMode": "Push", "apiEndpoint": "https://a.gr7.us-east-1.eks.amazonaws.com"},
        },
        {  # a Secret of another namespace
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "push-use1", "namespace": "karmada-system"},
            "data": {"token": "dA=="},
        },
    ],
    ids=["push member", "host in-cluster", "pull member", "no such member", "other namespace"],
)
def test_other_objects_bound_for_karmada_are_applied_as_planned(tmp_path: Path, obj):
    from tools.rehearsal.karmada_push import live_push_values

    assert live_push_values(_push_rehearsal(tmp_path, "bGl2ZQ=="), obj) is obj


class _ServicesKube:
    """A cluster's API with its `kubernetes` Service (every cluster has one) and one Service of its own."""

    def __init__(self, api_ip: str, own: str):
        self.services = [
            {"metadata": {"namespace": "default", "name": "kubernetes"}, "spec": {"clusterIP": api_ip}},
            {"metadata": {"namespace": "apps", "name": own}, "spec": {"clusterIP": api_ip.rsplit(".", 1)[0] + ".9"}},
        ]

    def list(self, api_version, kind, namespace=None, **_):
        return self.services if kind == "Service" else []


def test_a_pod_resolves_its_own_clusters_services_before_another_clusters_of_the_same_name():
    """Every cluster has `kubernetes.default.svc`: a pod of push-usc1 (a push host naming itself in-cluster) resolves
    usc1's, not whichever cluster started first; a Service only another cluster has is no name in it (helper-89 M2)."""
    import threading
    from types import SimpleNamespace

    from tools.rehearsal.runner import Rehearsal

    rehearsal = Rehearsal.__new__(Rehearsal)
    rehearsal.targets = {
        name: SimpleNamespace(name=name, region=object(), kube=_ServicesKube(ip, own))  # type: ignore[misc]
        for name, ip, own in (("push-use1", "10.100.0.1", "a"), ("push-usc1", "10.68.0.1", "b"))
    }
    rehearsal._dns_lock, rehearsal._dns_names, rehearsal._dns_until = threading.Lock(), {}, 0.0
    assert rehearsal.dns("push-usc1")["kubernetes.default.svc"] == "10.68.0.1"
    assert rehearsal.dns("push-use1")["kubernetes.default.svc"] == "10.100.0.1"
    assert "a.apps.svc" not in rehearsal.dns("push-usc1")  # another cluster's Service is no name there
    assert rehearsal.dns("push-use1")["a.apps.svc"] == "10.100.0.9"
    assert "kubernetes.default.svc" not in rehearsal.dns(fresh=True)  # outside every cluster: public names only


@pytest.mark.plan
def test_push_members_are_checked_in_the_wave_whose_gate_waits_for_them():
    """The rehearsal's member-joined checks a push member where `make rollout`'s members gate waits for it
    (tools/rollout/gates.py): every member, the host among them, in the global wave, none in a region's."""
    from types import SimpleNamespace

    from components.domain.stack_split import environment_stacks
    from components.k8s.names import cluster_name
    from tests.harness import plan_config
    from tests.test_federation import _push_config
    from tools.rehearsal.karmada_checks import joining
    from tools.rollout.gates import offline_gates

    plan = plan_config(_push_config(), stack="push")
    gates = offline_gates(plan.spec, "push", plan.stacks)
    rehearsal = SimpleNamespace(
        env=plan.spec, env_name="push", slices={s.name: s for s in environment_stacks(plan.spec, "push")}
    )
    waves = rollout_waves(plan.spec, "push")
    waited = {
        wave.name: {
            name
            for stack in wave.stacks
            for check in gates(stack, plan.stacks[stack].outputs)
            if check.target is not None and check.target.what == "members"
            for name in check.target.names
        }
        for wave in waves
    }
    joined = {wave.name: {cluster_name("push", r) for r, _ in joining(rehearsal, wave)} for wave in waves}  # type: ignore[arg-type]
    assert joined == waited
    assert {name: members for name, members in joined.items() if members} == {
        "global": {"push-use1", "push-usw2", "push-usc1"}
    }
