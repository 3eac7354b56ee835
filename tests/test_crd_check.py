"""Every custom resource of a plan has its kind installed on its cluster (tools/plan/crd_check.py)."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pytest

from tests.harness import evaluate_program
from tools.plan.crd_check import uninstalled_kinds


def test_dev_and_prod_install_every_kind_they_render(env_plan):
    assert uninstalled_kinds(env_plan) == []


def _program(releases: dict[str, dict], objects: list[tuple[str, str]], cluster: str = "test-use1"):
    """A provider named after its cluster, releases (chart -> values) and custom resources (apiVersion, kind)."""

    def program() -> None:
        provider = k8s.Provider(cluster, opts=pulumi.ResourceOptions())
        opts = pulumi.ResourceOptions(provider=provider)
        for chart, values in releases.items():
            k8s.helm.v3.Release(chart, chart=f"oci://example.com/charts/{chart}", values=values, opts=opts)
        for api_version, kind in objects:
            k8s.apiextensions.CustomResource(
                kind.lower(), api_version=api_version, kind=kind, metadata={"name": "x", "namespace": "ns"}, opts=opts
            )

    return evaluate_program(program)


LLMISVC = ("serving.kserve.io/v1alpha2", "LLMInferenceService")
POOL = ("inference.networking.k8s.io/v1", "InferencePool")


def test_an_llm_inference_service_needs_its_crd_chart():
    problems = uninstalled_kinds(_program({"kserve-crd": {}, "kserve-resources": {}}, [LLMISVC]))
    assert problems == [
        "test-use1: LLMInferenceService ns/x (serving.kserve.io/v1alpha2): no release or manifest of cluster test-use1 "
        "installs LLMInferenceService.serving.kserve.io; install kserve-llmisvc-crd on test-use1, or drop the object"
    ]
    assert uninstalled_kinds(_program({"kserve-crd": {}, "kserve-llmisvc-crd": {}}, [LLMISVC])) == []


@pytest.mark.parametrize(
    ("values", "installed"),
    [
        ({}, True),
        ({"kserve": {"llmisvc": {"createGIECRDs": True}}}, True),
        ({"kserve": {"llmisvc": {"createGIECRDs": False}}}, False),
    ],
)
def test_the_inference_pool_crd_follows_the_llmisvc_release_values(values, installed):
    problems = uninstalled_kinds(_program({"kserve-llmisvc-resources": values}, [POOL]))
    assert (problems == []) is installed


def test_a_kind_installed_on_another_cluster_does_not_count():
    def program() -> None:
        east, west = k8s.Provider("test-use1"), k8s.Provider("test-usw2")
        k8s.helm.v3.Release("keda", chart="keda", values={}, opts=pulumi.ResourceOptions(provider=east))
        k8s.apiextensions.CustomResource(
            "so",
            api_version="keda.sh/v1alpha1",
            kind="ScaledObject",
            metadata={"name": "m", "namespace": "serving"},
            opts=pulumi.ResourceOptions(provider=west),
        )

    [problem] = uninstalled_kinds(evaluate_program(program))
    assert (
        problem.startswith("test-usw2: ScaledObject serving/m (keda.sh/v1alpha1)")
        and "install keda on test-usw2" in problem
    )


def test_karmada_host_mode_serves_its_kinds_on_the_karmada_api_server():
    def program(install_mode: str):
        def run() -> None:
            host, karmada = k8s.Provider("test-use1"), k8s.Provider("test-karmada")
            k8s.helm.v3.Release(
                "karmada",
                chart="oci://docker.io/karmada/karmada",
                values={"installMode": install_mode},
                opts=pulumi.ResourceOptions(provider=host),
            )
            k8s.apiextensions.CustomResource(
                "pp",
                api_version="policy.karmada.io/v1alpha1",
                kind="PropagationPolicy",
                metadata={"name": "m", "namespace": "serving"},
                opts=pulumi.ResourceOptions(provider=karmada),
            )

        return run

    assert uninstalled_kinds(evaluate_program(program("host"))) == []
    assert len(uninstalled_kinds(evaluate_program(program("agent")))) == 1


def test_cert_manager_installs_its_crds_only_when_asked():
    certificate = [("cert-manager.io/v1", "Certificate")]
    assert len(uninstalled_kinds(_program({"cert-manager": {}}, certificate))) == 1
    assert uninstalled_kinds(_program({"cert-manager": {"crds": {"enabled": True}}}, certificate)) == []


PEDIA_CLUSTER = ("cluster.clusterpedia.io/v1alpha2", "PediaCluster")
PEDIA_CRDS = "https://raw.githubusercontent.com/clusterpedia-io/clusterpedia/v0.9.0/kustomize/crds/"


@pytest.mark.parametrize(
    ("file", "installed"),
    [
        (f"{PEDIA_CRDS}cluster.clusterpedia.io_pediaclusters.yaml", True),
        (f"{PEDIA_CRDS}cluster.clusterpedia.io_clustersyncresources.yaml", False),  # another kind
        (
            "https://raw.githubusercontent.com/clusterpedia-io/clusterpedia/v0.8.0/kustomize/crds/"
            "cluster.clusterpedia.io_pediaclusters.yaml",
            False,
        ),  # a file the catalog has not read
    ],
)
def test_a_crd_file_applied_on_the_cluster_installs_its_kind(file, installed):
    def program() -> None:
        provider = k8s.Provider("test-use1")
        k8s.yaml.v2.ConfigFile("crds", file=file, opts=pulumi.ResourceOptions(provider=provider))
        k8s.apiextensions.CustomResource(
            "pc",
            api_version=PEDIA_CLUSTER[0],
            kind=PEDIA_CLUSTER[1],
            metadata={"name": "x"},
            opts=pulumi.ResourceOptions(provider=provider),
        )

    assert (uninstalled_kinds(evaluate_program(program)) == []) is installed
