"""A rehearsal pod starts only once the Secrets and ConfigMaps it needs exist, as a kubelet v1.33 starts it
(catalog fact `kubelet-waits-for-referenced-objects`): kwok's pod-ready stage waits for the rehearsal kubelet's
word, and a check that times out names the missing object. Without binaries."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tools.rehearsal import kubelet, kwok, runner
from tools.rehearsal.references import Blocked, blocking_reference

NS = "envoy-gateway-system"
EXISTING = {
    ("Secret", NS, "envoy-gateway"): {"ca.crt", "tls.crt", "tls.key"},
    ("ConfigMap", NS, "envoy-gateway-config"): {"envoy-gateway.yaml"},
}


def lookup(kind: str, namespace: str, name: str) -> set[str] | None:
    return EXISTING.get((kind, namespace, name))


def pod(volumes: list[dict[str, Any]] | None = None, **container: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "envoy-gateway-1", "namespace": NS, "uid": "u-1"},
        "spec": {
            "nodeName": "system-us-east-1a-0",
            "volumes": volumes or [],
            "containers": [{"name": "envoy-gateway", "image": "docker.io/envoyproxy/gateway:v1.9.0", **container}],
        },
    }


MOUNT = 'MountVolume.SetUp failed for volume "certs" : '


@pytest.mark.parametrize(
    ("volume", "blocked"),
    [
        ({"name": "certs", "secret": {"secretName": "envoy-gateway"}}, None),
        # Envoy Gateway's controller mounts the Secret its certgen hook makes (templates/envoy-gateway-deployment.yaml)
        (
            {"name": "certs", "secret": {"secretName": "envoy"}},
            Blocked(None, False, "ContainerCreating", MOUNT + 'secret "envoy" not found', f"Secret {NS}/envoy"),
        ),
        ({"name": "certs", "secret": {"secretName": "envoy", "optional": True}}, None),
        (
            {"name": "certs", "secret": {"secretName": "envoy-gateway", "items": [{"key": "ca.pem", "path": "ca"}]}},
            Blocked(
                None,
                False,
                "ContainerCreating",
                MOUNT + "references non-existent secret key: ca.pem",
                f"Secret {NS}/envoy-gateway",
            ),
        ),
        (
            {"name": "certs", "configMap": {"name": "envoy-gateway-config", "items": [{"key": "x.yaml", "path": "x"}]}},
            Blocked(
                None,
                False,
                "ContainerCreating",
                MOUNT + "configmap references non-existent config key: x.yaml",
                f"ConfigMap {NS}/envoy-gateway-config",
            ),
        ),
        (
            {
                "name": "certs",
                "projected": {
                    "sources": [{"serviceAccountToken": {"path": "t"}}, {"configMap": {"name": "kube-root-ca.crt"}}]
                },
            },
            Blocked(
                None,
                False,
                "ContainerCreating",
                MOUNT + 'configmap "kube-root-ca.crt" not found',
                f"ConfigMap {NS}/kube-root-ca.crt",
            ),
        ),
        ({"name": "certs", "projected": {"sources": [{"configMap": {"name": "nope", "optional": True}}]}}, None),
        ({"name": "certs", "emptyDir": {}}, None),
    ],
)
def test_a_volume_waits_for_its_object_and_keys(volume, blocked):
    """pkg/volume/secret/secret.go L176-L207, L259-L285; configmap/configmap.go L180-L211, L263-L292;
    projected/projected.go L245-L300 (k8s.io/kubernetes@v1.33.13)."""
    assert blocking_reference(pod([volume]), lookup) == blocked


@pytest.mark.parametrize(
    ("container", "blocked"),
    [
        ({"envFrom": [{"secretRef": {"name": "envoy-gateway"}}]}, None),
        (
            {"envFrom": [{"configMapRef": {"name": "settings"}}]},
            ('configmap "settings" not found', f"ConfigMap {NS}/settings"),
        ),
        ({"envFrom": [{"configMapRef": {"name": "settings", "optional": True}}]}, None),
        (
            {"env": [{"name": "CA", "valueFrom": {"secretKeyRef": {"name": "envoy", "key": "ca.crt"}}}]},
            ('secret "envoy" not found', f"Secret {NS}/envoy"),
        ),
        (
            {"env": [{"name": "CA", "valueFrom": {"secretKeyRef": {"name": "envoy-gateway", "key": "ca.pem"}}}]},
            (f"couldn't find key ca.pem in Secret {NS}/envoy-gateway", f"Secret {NS}/envoy-gateway"),
        ),
        (
            {
                "env": [
                    {
                        "name": "CA",
                        "valueFrom": {"secretKeyRef": {"name": "envoy-gateway", "key": "ca.pem", "optional": True}},
                    }
                ]
            },
            None,
        ),
        (
            {"env": [{"name": "CA", "valueFrom": {"configMapKeyRef": {"name": "nope", "key": "k", "optional": True}}}]},
            None,
        ),
        ({"env": [{"name": "LEVEL", "value": "info"}]}, None),
    ],
)
def test_a_container_s_environment_waits_for_its_objects_and_keys(container, blocked):
    """pkg/kubelet/kubelet_pods.go L750-L800 (envFrom), L840-L897 (valueFrom): CreateContainerConfigError."""
    expected = (
        None
        if blocked is None
        else Blocked("envoy-gateway", False, "CreateContainerConfigError", blocked[0], blocked[1])
    )
    assert blocking_reference(pod(**container), lookup) == expected


def test_volumes_come_before_init_containers_before_containers():
    """The kubelet mounts volumes before it creates the sandbox (pkg/kubelet/kubelet.go L2047), then starts the
    init containers before the others."""
    spec = pod(
        [{"name": "certs", "secret": {"secretName": "envoy"}}],
        envFrom=[{"secretRef": {"name": "main-only"}}],
    )
    spec["spec"]["initContainers"] = [{"name": "init", "envFrom": [{"secretRef": {"name": "init-only"}}]}]
    assert blocking_reference(spec, lookup).missing == f"Secret {NS}/envoy"  # type: ignore[union-attr]
    spec["spec"]["volumes"] = []
    first = blocking_reference(spec, lookup)
    assert first is not None and (first.container, first.init, first.missing) == (
        "init",
        True,
        f"Secret {NS}/init-only",
    )


# kwok@v0.8.0:kustomize/stage/pod/fast/pod-ready.yaml's selector, by hand.
POD_READY = {
    "apiVersion": "kwok.x-k8s.io/v1alpha1",
    "kind": "Stage",
    "metadata": {"name": "pod-ready"},
    "spec": {
        "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
        "selector": {
            "matchExpressions": [
                {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
                {"key": ".status.phase", "operator": "In", "values": ["Pending"]},
            ]
        },
        "next": {"statusTemplate": "phase: Running\n"},
    },
}


def test_kwok_plays_a_pod_ready_only_once_its_objects_exist():
    original = copy.deepcopy(POD_READY)
    gated = kwok.gated_pod_ready(POD_READY)
    assert original == POD_READY  # kwok's own stage is not changed
    assert gated["spec"]["selector"]["matchExpressions"] == [
        *original["spec"]["selector"]["matchExpressions"],
        {
            "key": '.status.conditions.[] | select( .type == "rehearsal.inference-platform.io/ReferencedObjectsExist" ) | .status',
            "operator": "In",
            "values": ["True"],
        },
    ]
    assert gated["spec"]["next"] == original["spec"]["next"]


class PodsKube:
    """A cluster holding one bound pod and the Secrets the test gives it; status patches recorded."""

    def __init__(self, the_pod: dict[str, Any]):
        self.pod = the_pod
        self.secrets: list[dict[str, Any]] = []
        self.patches: list[dict[str, Any]] = []

    def list(self, api_version: str, kind: str, namespace: str | None = None, *, selector: str | None = None):
        return {"Pod": [self.pod], "Secret": self.secrets, "ConfigMap": []}[kind]

    def patch_status(self, api_version, kind, namespace, name, patch):
        self.patches.append(patch)
        for condition in patch["status"].get("conditions") or []:
            conditions = [
                c for c in self.pod.setdefault("status", {}).get("conditions") or [] if c["type"] != condition["type"]
            ]
            self.pod["status"]["conditions"] = [*conditions, condition]
        return self.pod


def test_the_kubelet_holds_a_pod_until_its_secret_exists_and_says_which():
    """The old rehearsal let kwok mark Envoy Gateway's controller Ready while the Secret its certgen hook makes did
    not exist; a real kubelet keeps it ContainerCreating."""
    the_pod = pod([{"name": "certs", "secret": {"secretName": "envoy-gateway"}}])
    kube = PodsKube(the_pod)
    node = kubelet.Kubelet.__new__(kubelet.Kubelet)  # its loop and processes are not needed for the gate
    node.kube, node.resolved, node.blocked = kube, set(), {}
    node._gate([the_pod])
    (condition,) = the_pod["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        kwok.REFERENCES_CONDITION,
        "False",
        "ContainerCreating",
    )
    assert condition["message"] == (
        f'MountVolume.SetUp failed for volume "certs" : secret "envoy-gateway" not found (waits for Secret {NS}/envoy-gateway)'
    )
    # What a check that times out on the pod's workload says (runner.pending_reason).
    assert runner.pending_reason(kube, NS, "app=envoy-gateway") == (  # type: ignore[arg-type]
        f"pod envoy-gateway-1 Pending: ContainerCreating: {condition['message']}"
    )
    node._gate([the_pod])
    assert len(kube.patches) == 1  # nothing changed: nothing patched again
    kube.secrets.append({"metadata": {"name": "envoy-gateway", "namespace": NS}, "data": {"ca.crt": "eA=="}})
    node._gate([the_pod])
    assert [c["status"] for c in the_pod["status"]["conditions"]] == ["True"]
    assert node.resolved == {"u-1"}
