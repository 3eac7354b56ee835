"""The pull request's diff: a base plan.json against this one, per stack, with replacements predicted from the
providers' force-new facts (conformance/upstream/pulumi-providers/replacement.json) and the cost change.

Fixture plans are written by hand; expected actions come from the upstream sources named beside each case.
"""

from __future__ import annotations

import copy
import json

import pytest

from components.config.stackfile import stack_config_from_mapping
from tests.harness import ENVIRONMENTS_DIR, PROJECT, environment_config, ns, plan_for
from tools.plan.artifacts import plan_document
from tools.plan.changes import changes_markdown, compare
from tools.plan.cost_diff import cost_diff_markdown
from tools.plan.replacement import FACTS, facts
from tools.plan.runner import build_plan
from tools.provider_facts import (
    FactsError,
    FolderTree,
    GoPackage,
    attr_name,
    force_new_paths,
    strip_comments,
    terraform_paths,
)
from tools.provider_schema import _members, args_class, properties

STACK = "urn:pulumi:team.use1::inference-platform::"
K8S_PROVIDER = STACK + "pulumi:providers:kubernetes::k8s"
OPTIONS = {
    "protect": False,
    "retainOnDelete": False,
    "dependsOn": [],
    "ignoreChanges": [],
    "deleteBeforeReplace": False,
    "customTimeouts": {},
}


def resource(type_, name, inputs, *, provider=None, options=None, deps=None, secrets=None):
    return {
        "urn": f"{STACK}{type_}::{name}",
        "type": type_,
        "name": name,
        "parent": None,
        "provider": provider,
        "custom": True,
        "inputs": inputs,
        "options": {**OPTIONS, **(options or {})},
        "propertyDependencies": deps or {},
        "secretDigests": secrets or {},
    }


def plan(*resources):
    return {"environment": "team", "project": "inference-platform", "resources": list(resources), "outputs": {}}


def k8s(kind, api, name, **body):
    return resource(
        f"kubernetes:{api}:{kind}",
        name,
        {"apiVersion": api.replace("core/", ""), "kind": kind, "metadata": {"name": name, "namespace": "ns"}, **body},
        provider=K8S_PROVIDER,
    )


def provider(**inputs):
    return resource("pulumi:providers:kubernetes", "k8s", {"kubeconfig": "[secret]", **inputs})


def by_name(changes):
    return {r.name: r for r in changes.resources}


VPC = resource("aws:ec2/vpc:Vpc", "vpc", {"cidrBlock": "10.0.0.0/16", "tags": {"team": "a"}})
ROLE = resource("aws:iam/role:Role", "role", {"assumeRolePolicy": '{"a": 1}', "name": "r"})
KEY = resource("aws:kms/key:Key", "key", {"description": "k"}, options={"protect": True})


def test_create_update_replace_delete():
    # aws_vpc cidr_block is ForceNew; tags and assume_role_policy update in place; the protected key is deleted.
    head_vpc = copy.deepcopy(VPC)
    head_vpc["inputs"]["cidrBlock"] = "10.1.0.0/16"
    head_role = copy.deepcopy(ROLE)
    head_role["inputs"]["assumeRolePolicy"] = '{"a": 2}'
    bucket = resource("aws:s3/bucket:Bucket", "models", {"bucket": "models"})
    changes = compare(plan(VPC, ROLE, KEY), plan(head_vpc, head_role, bucket))
    found = by_name(changes)
    assert {n: r.action for n, r in found.items()} == {
        "vpc": "replace",
        "role": "update",
        "models": "create",
        "key": "delete",
    }
    assert found["vpc"].replaced_by == ["cidrBlock"]
    assert [c.path for c in found["role"].inputs] == ["assumeRolePolicy"]
    assert any(n.startswith("protected") for n in found["key"].notes)
    assert changes.counts() == {"replace": 1, "update": 1, "create": 1, "delete": 1}
    text = changes_markdown(changes)
    assert "| team.use1 | 1 | 1 | **1** | **1** |" in text
    assert "replaced because `cidrBlock` changed" in text
    assert '`cidrBlock`: "10.0.0.0/16" -> "10.1.0.0/16"' in text


def test_an_unchanged_plan_has_no_changes():
    changes = compare(plan(VPC, ROLE), plan(copy.deepcopy(VPC), copy.deepcopy(ROLE)))
    assert changes.resources == []
    assert "No resource changes." in changes_markdown(changes)


def test_a_tag_change_alone_is_an_update():
    head = copy.deepcopy(VPC)
    head["inputs"]["tags"] = {"team": "b"}
    (change,) = compare(plan(VPC), plan(head)).resources
    assert change.action == "update" and change.replaced_by == []


def test_a_secret_change_is_shown_changed_never_its_value():
    # A Secret's data is immutable by default (pulumi-kubernetes diff.go:28, enableSecretMutable false): replaced,
    # and deleted first because it is named (provider.go:1647).
    base = k8s("Secret", "core/v1", "api-key", stringData="[secret]")
    base["secretDigests"] = {"stringData": "aaaaaaaaaaaaaaaa"}
    head = copy.deepcopy(base)
    head["secretDigests"] = {"stringData": "bbbbbbbbbbbbbbbb"}
    changes = compare(plan(provider(), base), plan(provider(), head))
    (change,) = changes.resources
    assert change.action == "replace"
    assert change.inputs[0].secret and change.inputs[0].path == "stringData"
    assert "the Kubernetes provider deletes a named object" in change.delete_first
    text = changes_markdown(changes) + json.dumps(changes.to_json())
    assert "`stringData`: changed (secret, value not shown)" in text
    assert "aaaaaaaaaaaaaaaa" not in text and "bbbbbbbbbbbbbbbb" not in text


def test_a_mutable_secret_updates_in_place():
    base = k8s("Secret", "core/v1", "api-key", stringData="[secret]")
    base["secretDigests"] = {"stringData": "aaaaaaaaaaaaaaaa"}
    head = copy.deepcopy(base)
    head["secretDigests"] = {"stringData": "bbbbbbbbbbbbbbbb"}
    mutable = provider(enableSecretMutable="true")
    (change,) = [r for r in compare(plan(mutable, base), plan(mutable, head)).resources if r.name == "api-key"]
    assert change.action == "update"


def test_the_same_secret_is_no_change():
    base = k8s("Secret", "core/v1", "api-key", stringData="[secret]")
    base["secretDigests"] = {"stringData": "aaaaaaaaaaaaaaaa"}
    assert compare(plan(provider(), base), plan(provider(), copy.deepcopy(base))).resources == []


def _deployment(selector, image):
    return k8s(
        "Deployment",
        "apps/v1",
        "web",
        spec={
            "selector": {"matchLabels": {"app": selector}},
            "template": {"spec": {"containers": [{"name": "c", "image": image}]}},
        },
    )


def test_a_deployment_selector_replaces_its_template_updates():
    # diff.go:171 `var deployment`: .spec.selector (and its matchLabels) force a new Deployment; the pod template not.
    base = _deployment("web", "nginx:1")
    selector = compare(plan(provider(), base), plan(provider(), _deployment("web2", "nginx:1")))
    image = compare(plan(provider(), base), plan(provider(), _deployment("web", "nginx:2")))
    assert [(r.action, r.replaced_by) for r in selector.resources] == [("replace", ["spec.selector.matchLabels.app"])]
    assert [r.action for r in image.resources] == ["update"]


def test_a_job_template_and_a_service_cluster_ip_replace():
    # diff.go:183 (Job .spec.template) and diff.go:159 (Service .spec.clusterIP).
    job = k8s("Job", "batch/v1", "load", spec={"template": {"spec": {"containers": [{"image": "a"}]}}})
    job2 = copy.deepcopy(job)
    job2["inputs"]["spec"]["template"]["spec"]["containers"][0]["image"] = "b"
    svc = k8s("Service", "core/v1", "api", spec={"clusterIP": "10.0.0.10", "ports": [{"port": 80}]})
    svc2 = copy.deepcopy(svc)
    svc2["inputs"]["spec"]["clusterIP"] = "10.0.0.11"
    svc3 = copy.deepcopy(svc)
    svc3["inputs"]["spec"]["ports"] = [{"port": 8080}]
    found = by_name(compare(plan(provider(), job, svc), plan(provider(), job2, svc2)))
    assert found["load"].action == "replace" and found["api"].action == "replace"
    assert [r.action for r in compare(plan(provider(), svc), plan(provider(), svc3)).resources] == ["update"]


def test_a_helm_release_replaces_on_its_name_only():
    # helm_release.go: forceNewFields := []string{".name", ".namespace"}
    release = resource(
        "kubernetes:helm.sh/v3:Release", "rel", {"name": "a", "namespace": "n", "version": "1"}, provider=K8S_PROVIDER
    )
    renamed, bumped = copy.deepcopy(release), copy.deepcopy(release)
    renamed["inputs"]["name"] = "b"
    bumped["inputs"]["version"] = "2"
    assert compare(plan(release), plan(renamed)).resources[0].action == "replace"
    assert compare(plan(release), plan(bumped)).resources[0].action == "update"


def test_ignore_changes_are_not_applied():
    group = resource(
        "aws:eks/nodeGroup:NodeGroup",
        "pool",
        {"scalingConfig": {"desiredSize": 1, "maxSize": 4, "minSize": 1}},
        options={"ignoreChanges": ["scalingConfig.desiredSize"]},
    )
    moved = copy.deepcopy(group)
    moved["inputs"]["scalingConfig"]["desiredSize"] = 3
    assert compare(plan(group), plan(moved)).resources == []
    moved["inputs"]["scalingConfig"]["maxSize"] = 5
    (change,) = compare(plan(group), plan(moved)).resources
    assert change.action == "update"
    assert [(c.path, c.ignored) for c in change.inputs] == [
        ("scalingConfig.desiredSize", True),
        ("scalingConfig.maxSize", False),
    ]


def test_options_that_change_behaviour():
    subnet = resource("aws:ec2/subnet:Subnet", "a", {"cidrBlock": "10.0.1.0/24"}, options={"retainOnDelete": True})
    moved = copy.deepcopy(subnet)
    moved["inputs"]["cidrBlock"] = "10.0.2.0/24"
    moved["options"]["deleteBeforeReplace"] = True
    (change,) = compare(plan(subnet), plan(moved)).resources
    assert change.action == "replace"
    assert change.options == {"deleteBeforeReplace": (False, True)}
    assert change.delete_first == "deleteBeforeReplace is set"
    assert any(n.startswith("retainOnDelete") for n in change.notes)
    protect = copy.deepcopy(subnet)
    protect["options"]["protect"] = True
    (change,) = compare(plan(subnet), plan(protect)).resources
    assert (change.action, change.options) == ("update", {"protect": (False, True)})


FLUID = "data.fluid.io/v1alpha1"


def _fluid(kind: str, name: str, spec: dict, **options) -> dict:
    return k8s(kind, FLUID, name, spec=spec) | {"options": {**OPTIONS, "replaceOnChanges": [], **options}}


def test_replace_on_changes_replaces_on_a_change_at_or_below_its_paths():
    """The engine replaces on a change at or below a replaceOnChanges path (PULUMI_REPLACES_ON_CHANGES_AS_TOLD); a
    Kubernetes custom resource's spec is otherwise updated in place."""
    runtime = _fluid("AlluxioRuntime", "models", {"replicas": 1, "tieredstore": {"quota": "16Gi"}})
    told = copy.deepcopy(runtime)
    told["options"] |= {"replaceOnChanges": ["spec.tieredstore"], "deleteBeforeReplace": True}
    bigger = copy.deepcopy(told)
    bigger["inputs"]["spec"]["tieredstore"]["quota"] = "32Gi"
    (change,) = compare(plan(told), plan(bigger)).resources
    assert (change.action, change.replaced_by) == ("replace", ["spec.tieredstore.quota"])
    assert change.replacement_source == "its replaceOnChanges option"
    assert change.delete_first == "deleteBeforeReplace is set"
    # Fluid's own note: deleting a runtime takes the FUSE daemons from running model servers
    assert any("stop the cluster's model servers first" in note for note in change.notes)
    # near variants: a change outside the paths updates; without the option the same change updates
    scaled = copy.deepcopy(told)
    scaled["inputs"]["spec"]["replicas"] = 2
    (change,) = compare(plan(told), plan(scaled)).resources
    assert change.action == "update"
    untold = copy.deepcopy(runtime)
    untold["inputs"]["spec"]["tieredstore"]["quota"] = "32Gi"
    (change,) = compare(plan(runtime), plan(untold)).resources
    assert change.action == "update"


def test_replace_on_changes_replaces_a_dependent_whose_input_comes_from_a_replaced_resource():
    runtime = _fluid("AlluxioRuntime", "models", {"quota": "16Gi"}, replaceOnChanges=["spec"], deleteBeforeReplace=True)
    serving = _fluid("Dataset", "models", {"mounts": [{"mountPoint": "dataset://c/models"}]})
    serving["propertyDependencies"] = {"spec": [runtime["urn"]]}
    bigger = copy.deepcopy(runtime)
    bigger["inputs"]["spec"]["quota"] = "32Gi"
    told = copy.deepcopy(serving)
    told["options"] |= {"replaceOnChanges": ["spec"], "deleteBeforeReplace": True}
    changes = {r.type.rsplit(":", 1)[-1]: r for r in compare(plan(runtime, told), plan(bigger, told)).resources}
    assert changes["AlluxioRuntime"].action == "replace"
    assert (changes["Dataset"].action, changes["Dataset"].replaced_by) == ("replace", ["spec"])
    assert any("Fluid holds its deletion while a pod mounts its PVC" in note for note in changes["Dataset"].notes)
    # without the option, an input computed from the replaced runtime is only known after apply
    changes = {r.type.rsplit(":", 1)[-1]: r for r in compare(plan(runtime, serving), plan(bigger, serving)).resources}
    assert (changes["Dataset"].action, changes["Dataset"].may_change) == ("update", True)


def test_a_base_plan_without_replace_on_changes_recorded_shows_no_option_change():
    """plan.json records replaceOnChanges since issue 31: an older base plan without the key had the default."""
    head = _fluid("Dataset", "models", {"mounts": []})
    base = copy.deepcopy(head)
    del base["options"]["replaceOnChanges"]
    assert compare(plan(base), plan(head)).resources == []


def test_a_replaced_resource_replaces_what_takes_its_id_in_a_force_new_input():
    # aws_route_table_association subnet_id is ForceNew: a new subnet id replaces the association too.
    subnet = resource("aws:ec2/subnet:Subnet", "a", {"cidrBlock": "10.0.1.0/24"})
    assoc = resource(
        "aws:ec2/routeTableAssociation:RouteTableAssociation",
        "a",
        {"subnetId": "subnet-1", "routeTableId": "rtb-1"},
        deps={"subnetId": [subnet["urn"]]},
    )
    moved = copy.deepcopy(subnet)
    moved["inputs"]["cidrBlock"] = "10.0.2.0/24"
    found = {r.type: r for r in compare(plan(subnet, assoc), plan(moved, copy.deepcopy(assoc))).resources}
    association = found["aws:ec2/routeTableAssociation:RouteTableAssociation"]
    assert association.action == "replace" and association.replaced_by == ["subnetId"]
    assert association.inputs[0].computed_from == subnet["urn"]


def test_a_terraform_block_replaces_only_when_added_or_removed():
    # aws_eks_node_group remote_access: a ForceNew block (count only, helper/schema diffList) with ForceNew fields.
    group = resource("aws:eks/nodeGroup:NodeGroup", "pool", {"clusterName": "c"})
    with_access = copy.deepcopy(group)
    with_access["inputs"]["remoteAccess"] = {"ec2SshKey": "k"}
    assert compare(plan(group), plan(with_access)).resources[0].replaced_by == ["remoteAccess"]
    labels = copy.deepcopy(group)
    labels["inputs"]["labels"] = {"a": "b"}
    assert compare(plan(group), plan(labels)).resources[0].action == "update"


def test_a_type_without_facts_says_replacement_is_not_predicted():
    thing = resource("aws:sqs/queue:Queue", "q", {"name": "a"})
    renamed = copy.deepcopy(thing)
    renamed["inputs"]["name"] = "b"
    (change,) = compare(plan(thing), plan(renamed)).resources
    assert change.action == "update"
    assert change.notes == ["replacement not predicted: no force-new facts for aws:sqs/queue:Queue in replacement.json"]


def test_changes_are_grouped_per_stack():
    other = "urn:pulumi:team.global::inference-platform::"
    vpc = copy.deepcopy(VPC)
    vpc["urn"] = vpc["urn"].replace(STACK, other)
    base = {**plan(VPC, vpc), "stacks": ["team.use1", "team.global"]}
    head = copy.deepcopy(base)
    head["resources"][1]["inputs"]["cidrBlock"] = "10.9.0.0/16"
    changes = compare(base, head)
    assert [(r.stack, r.action) for r in changes.resources] == [("team.global", "replace")]
    text = changes_markdown(changes)
    assert "| team.use1 | 0 | 0 | **0** | **0** |" in text and "| team.global | 0 | 0 | **1** | **0** |" in text
    assert "### `team.global`" in text and "### `team.use1`" not in text


# --- The cost change -----------------------------------------------------------------------------------------------


def _cost(machine_type, price, nodes=(1, 1, 2)):
    monthly = {
        k: None if price is None else round(n * price * 730, 2)
        for k, n in zip(("min", "alwaysOn", "max"), nodes, strict=True)
    }
    pool = {
        "region": "use1",
        "pool": "gpu",
        "machineType": machine_type,
        "capacityType": "onDemand",
        "price": None if price is None else {"usdPerHour": price, "source": "s", "asOf": "d"},
        "nodes": dict(zip(("min", "alwaysOn", "max"), nodes, strict=True)),
        "monthlyUsd": monthly,
    }
    total = {
        k: {"usd": 0 if v is None else v, "unknown": [] if v is not None else ["use1/gpu"]} for k, v in monthly.items()
    }
    return {"cost": {"pools": [pool], "models": [], "total": total}}


def test_an_unpriced_pool_change_is_unknown_never_no_change():
    text = cost_diff_markdown(base=_cost("x1.large", None), head=_cost("x2.large", None), environment="team")
    assert "No change" not in text
    assert "| pool | use1 | gpu | x1.large -> x2.large; price unknown in base and this change |" in text
    assert "unknown -> unknown (**change unknown**)" in text
    assert "the cost change of use1/gpu is **unknown**" in text


def test_a_priced_pool_change_shows_the_delta():
    # 1 node x $2/h x 730 h = $1,460 -> 1 x $3/h x 730 = $2,190: +$730 at min; 2 nodes at max: +$1,460.
    text = cost_diff_markdown(base=_cost("a", 2.0), head=_cost("b", 3.0), environment="team")
    assert "| pool | use1 | gpu | a -> b; price | $1,460 -> $2,190 (**+$730**) |" in text
    assert "$2,920 -> $4,380 (**+$1,460**)" in text and "unknown" not in text


def test_a_pool_losing_its_price_is_unknown():
    text = cost_diff_markdown(base=_cost("a", 2.0), head=_cost("b", None), environment="team")
    assert "$1,460 -> unknown (**change unknown**)" in text


# --- The facts ------------------------------------------------------------------------------------------------------


def _sdk_has(token: str, path: str) -> bool:
    from tools.provider_facts import _input_class

    cls = args_class(token)
    for segment in path.removesuffix("#").split("."):
        props = properties(cls) if cls else {}
        if segment not in props:
            return False
        cls = _input_class(_members(props[segment].hint)[0])
    return True


@pytest.mark.slow
def test_every_force_new_path_is_an_input_of_the_pinned_sdk():
    """A rename in a provider upgrade leaves a fact naming no input: regenerate (python -m tools.provider_facts)."""
    missing = [
        f"{token}: {path}"
        for token, entry in facts()["resources"].items()
        for path in entry["forceNew"]
        if not _sdk_has(token, path)
    ]
    assert missing == []


def test_the_facts_name_the_installed_provider_versions():
    from importlib.metadata import version

    assert sorted(facts()["providers"]) == ["aws", "command", "gcp", "kubernetes", "random", "tls"]
    for info in facts()["providers"].values():
        assert info["pin"] == version(info["package"].replace("-", "_")), f"{info['package']}: regenerate the facts"


@pytest.mark.plan
@pytest.mark.parametrize("env", ["dev", "prod"])
def test_the_example_environments_use_only_types_the_facts_cover(env, request):
    document = plan_document(request.getfixturevalue(f"{env}_plan"))
    covered = facts()["resources"].keys()
    uncovered = {
        r["type"]
        for r in document["resources"]
        if r["custom"] and not r["type"].startswith(("kubernetes:", "pulumi:providers:")) and r["type"] not in covered
    }
    assert uncovered == set()


def test_known_force_new_facts():
    resources = facts()["resources"]
    # pulumi/terraform-provider-aws@patched-v5.14.0 internal/service/eks/node_group.go:83 instance_types ForceNew;
    # :117 launch_template.version updates in place; ec2_launch_template.go:618 instance_type updates in place.
    node_group = resources["aws:eks/nodeGroup:NodeGroup"]["forceNew"]
    assert "instanceTypes" in node_group and "launchTemplate.id" in node_group
    assert "launchTemplate.version" not in node_group
    assert resources["aws:ec2/launchTemplate:LaunchTemplate"]["forceNew"] == ["name", "namePrefix"]
    kinds = facts()["kubernetes"]["kinds"]
    assert "spec.selector" in kinds["apps/v1/Deployment"] and "spec.template" not in kinds["apps/v1/Deployment"]
    assert kinds["core/v1/Service"] == ["spec.clusterIP"]
    assert "spec.template" in kinds["batch/v1/Job"]
    assert facts()["kubernetes"]["helmRelease"] == ["name", "namespace"]
    assert FACTS.is_file()


def test_the_eks_access_types_come_from_the_newer_upstream_files_and_say_so():
    # hashicorp/terraform-provider-aws@01f43111 internal/service/eks/access_entry.go: cluster_name, principal_arn and
    # type are ForceNew, kubernetes_groups and user_name update in place; access_policy_association.go: every input
    # is ForceNew (no Update function), access_scope a ForceNew block with ForceNew namespaces and type.
    resources = facts()["resources"]
    entry = resources["aws:eks/accessEntry:AccessEntry"]
    assert entry["forceNew"] == ["clusterName", "principalArn", "type"]
    assert entry["source"] == {
        "repo": "hashicorp/terraform-provider-aws",
        "ref": "01f431114674c27cf790fafb67ac274bf8f765e1",
        "commit": "01f431114674c27cf790fafb67ac274bf8f765e1",
        "copied": True,
    }
    association = resources["aws:eks/accessPolicyAssociation:AccessPolicyAssociation"]["forceNew"]
    assert association == [
        "accessScope#",
        "accessScope.namespaces",
        "accessScope.type",
        "clusterName",
        "policyArn",
        "principalArn",
    ]
    # Every other type is read at its provider's ref, and says so.
    assert resources["aws:route53/zone:Zone"]["source"]["ref"] == "patched-v5.14.0"
    assert all({"repo", "ref", "commit"} <= r["source"].keys() for r in resources.values())
    # The diff names where a replacement fact comes from.
    groups = resource("aws:eks/accessEntry:AccessEntry", "admin", {"clusterName": "c", "principalArn": "arn:a"})
    moved = copy.deepcopy(groups)
    moved["inputs"]["principalArn"] = "arn:b"
    (change,) = compare(plan(groups), plan(moved)).resources
    assert change.action == "replace"
    assert "hashicorp/terraform-provider-aws@01f431114674 (copied files)" in change.replacement_source
    moved["inputs"]["principalArn"] = "arn:a"
    moved["inputs"]["kubernetesGroups"] = ["ops"]
    assert compare(plan(groups), plan(moved)).resources[0].action == "update"


def test_dns_zone_and_its_iam_member_facts():
    # pulumi/terraform-provider-aws@patched-v5.14.0 internal/service/route53/zone.go: name and delegation_set_id
    # ForceNew (comment and tags update). google-beta@v7.45.0 resource_dns_managed_zone.go: dns_name, name,
    # visibility ForceNew; tpgiamresource/resource_iam_member.go:64 role and member ForceNew.
    resources = facts()["resources"]
    assert resources["aws:route53/zone:Zone"]["forceNew"] == ["delegationSetId", "name"]
    assert {"dnsName", "name", "visibility"} <= set(resources["gcp:dns/managedZone:ManagedZone"]["forceNew"])
    member = resources["gcp:dns/dnsManagedZoneIamMember:DnsManagedZoneIamMember"]["forceNew"]
    assert {"managedZone", "member", "role"} <= set(member)


def test_the_generator_reads_copied_files_and_names_constants(tmp_path):
    """A folder of files copied at a commit stands in for a git source; names.AttrX constants without their
    generated file are the attribute in snake case."""
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "thing.go").write_text(
        "package svc\nfunc resourceThing() *schema.Resource {\n\treturn &schema.Resource{Schema: "
        "map[string]*schema.Schema{\n\t\tnames.AttrClusterName: {Type: schema.TypeString, ForceNew: true},\n"
        '\t\tnames.AttrKMSKeyID: {Type: schema.TypeString, ForceNew: true},\n\t\t"free": {Type: schema.TypeString},'
        "\n\t}}\n}\n"
    )
    assert terraform_paths(FolderTree(tmp_path), ("svc/thing.go",), "resourceThing") == ["cluster_name", "kms_key_id"]
    assert attr_name("names.AttrARN") == "arn" and attr_name("names.AttrPrincipalARN") == "principal_arn"
    with pytest.raises(FactsError, match="missing; copy it from the public repository"):
        terraform_paths(FolderTree(tmp_path), ("svc/other.go",), "resourceOther")


GO = """
package x

func ResourceThing() *schema.Resource {
	return &schema.Resource{
		Schema: MergeSchemas(sharedSchema, map[string]*schema.Schema{
			"name": {Type: schema.TypeString, ForceNew: true}, // a comment with ForceNew: true
			"tags": {Type: schema.TypeMap},
			"block": {
				Type: schema.TypeList, ForceNew: true,
				Elem: &schema.Resource{Schema: map[string]*schema.Schema{
					"inner": {Type: schema.TypeString, ForceNew: true},
					"free":  {Type: schema.TypeString},
				}},
			},
			"list": {Type: schema.TypeList, ForceNew: true, Elem: &schema.Schema{Type: schema.TypeString}},
			"helper": helperSchema(),
		}),
	}
}

var sharedSchema = map[string]*schema.Schema{
	"shared": {Type: schema.TypeString, ForceNew: true},
}

func helperSchema() *schema.Schema {
	return &schema.Schema{Type: schema.TypeString, ForceNew: true}
}

func frameworkSchema() schema.Schema {
	return schema.Schema{Attributes: map[string]schema.Attribute{
		"length": schema.Int64Attribute{PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()}},
		"note":   schema.StringAttribute{Optional: true},
	}}
}
"""


def test_the_generator_reads_force_new_from_go_schema_literals():
    pkg = GoPackage({"x.go": strip_comments(GO)}, {})
    assert sorted(force_new_paths(pkg, pkg.declaration("ResourceThing"))) == [
        "block#",
        "block.inner",
        "helper",
        "list",
        "name",
        "shared",
    ]
    assert force_new_paths(pkg, pkg.declaration("frameworkSchema")) == ["length"]


# --- One real change of an example environment ------------------------------------------------------------------


@pytest.fixture(scope="module")
def prod_l40s_bigger():
    """The example prod environment with use1's l40s pool on g6e.12xlarge (4 L40S) instead of g6e.4xlarge (1)."""
    config = environment_config("prod")
    pool = config[ns("regions")][0]["gpuPools"][1]
    assert (pool["name"], pool["machineType"]) == ("l40s", "g6e.4xlarge")
    pool["machineType"] = "g6e.12xlarge"
    # Planned as the session's prod is (plan_for): the config in the fixture file's own key order, which the
    # providers' default tags keep (plan_config's config goes through JSON with its keys sorted).
    return build_plan(stack_config_from_mapping(PROJECT, "prod", config, ENVIRONMENTS_DIR / "Pulumi.prod.yaml"))


@pytest.mark.plan
def test_the_example_prod_diff_of_a_pool_machine_type_change(prod_l40s_bigger):
    base = plan_document(plan_for("prod"))  # planned the same way as the head
    head = plan_document(prod_l40s_bigger)
    changes = compare(base, head)
    found = {(r.stack, r.type, r.name): r for r in changes.resources}
    # aws_launch_template instance_type is not ForceNew (ec2_launch_template.go:618): a new template version; the
    # node group takes it through launch_template.version, not ForceNew (node_group.go:117): EKS rolls the nodes,
    # the node group stays. Nothing of the cloud is replaced or deleted, in any stack.
    template = found[("prod.use1", "aws:ec2/launchTemplate:LaunchTemplate", "use1-l40s")]
    assert template.action == "update"
    assert ("instanceType", "g6e.4xlarge", "g6e.12xlarge") in [(c.path, c.before, c.after) for c in template.inputs]
    group = found[("prod.use1", "aws:eks/nodeGroup:NodeGroup", "use1-l40s")]
    assert (group.action, group.may_change) == ("update", True)
    assert [(c.path, c.computed_from) for c in group.inputs] == [("launchTemplate", template.urn)]
    # Cluster Autoscaler's scale-from-zero hint: 4 GPUs per node now (g6e.12xlarge: 4 x L40S).
    hint = found[("prod.use1", "aws:autoscaling/tag:Tag", "use1-l40s-resources-nvidia.com-gpu")]
    assert [(c.path, c.before, c.after) for c in hint.inputs] == [("tag.value", "1", "4")]
    # The cache's memory tier is 1/8 of the smallest GPU node's memory, which is now larger: Fluid applies a runtime's
    # spec once (FLUID_APPLIES_A_CACHES_SPEC_ONCE), so the runtime is replaced, and with it what is computed from it
    # (the serving Dataset, the prewarms), each with the note that the region's model servers must stop first.
    replaced = {r.name: r for r in changes.resources if r.action == "replace"}
    assert sorted(replaced) == [
        "prod-use1-inference-dataset-models",
        "prod-use1-model-cache-alluxioruntime-models",
        "prod-use1-model-cache-dataload-prewarm-llama-3-1-70b",  # llama-3-1-70b-rag reads these weights too
        "prod-use1-model-cache-dataload-prewarm-llama-3-1-8b",
    ]
    runtime = replaced["prod-use1-model-cache-alluxioruntime-models"]
    assert "spec.tieredstore.levels[0].quota" in runtime.replaced_by
    assert runtime.replacement_source == "its replaceOnChanges option"
    assert runtime.delete_first == "deleteBeforeReplace is set"
    serving = replaced["prod-use1-inference-dataset-models"]
    assert [(c.path, c.computed_from) for c in serving.inputs] == [("spec", runtime.urn)]
    assert any("Fluid holds its deletion while a pod mounts its PVC" in note for note in serving.notes)
    assert changes.counts()["delete"] == 0 and changes.counts()["create"] == 0
    assert {r.stack for r in changes.resources} == {"prod.use1", "prod.global"}
    cost = cost_diff_markdown(base=base, head=head, environment="prod")
    # min 1 node: $3.00424 x 730 = $2,193 -> $10.49264 x 730 = $7,660; max 8 nodes: $17,545 -> $61,277 (+$43,732).
    assert "| pool | use1 | l40s | g6e.4xlarge -> g6e.12xlarge; size; price | $2,193 -> $7,660 (**+$5,467**) |" in cost
    assert "$17,545 -> $61,277 (**+$43,732**) |" in cost


def test_a_local_commands_triggers_replace_it_and_its_script_updates_it():
    # pulumi/pulumi-command@v1.2.1 provider/pkg/provider/common/inputs.go L10: only `triggers` is tagged
    # replaceOnChanges (the schema says so); local/commandController.go L28: the Command has a custom Update, so
    # pulumi-go-provider@v1.3.0 infer/resource.go L1132-1152 replaces it for those inputs only (else for every input).
    entry = facts()["resources"]["command:local:Command"]
    assert entry["forceNew"] == ["triggers"]
    assert (entry["source"]["repo"], entry["source"]["ref"]) == ("pulumi/pulumi-command", "v1.2.1")
    wait = resource("command:local:Command", "wait", {"create": "curl a", "triggers": ["https://a:5443"]})
    moved = copy.deepcopy(wait)
    moved["inputs"]["triggers"] = ["https://b:5443"]
    (change,) = compare(plan(wait), plan(moved)).resources
    assert (
        change.action == "replace" and "pulumi-command 1.2.1: pulumi/pulumi-command@v1.2.1" in change.replacement_source
    )
    moved = copy.deepcopy(wait)
    moved["inputs"]["create"] = "curl b"
    assert compare(plan(wait), plan(moved)).resources[0].action == "update"
