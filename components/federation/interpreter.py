"""How Karmada reads a KServe InferenceService: its replicas, their health and its dependencies.

Karmada ships no interpreter for `serving.kserve.io/v1beta1` InferenceService, so without this
customization it could not count replicas (an ISVC has no `spec.replicas`), tell a healthy member from
a failing one (application failover), nor carry the model's PodDisruptionBudget along. The scripts are
Lua 5.1 (Karmada runs gopher-lua); the tests execute them.

- replicas: `spec.predictor.maxReplicas`, the model's ceiling (KServe's default 1), with the pool
  selector, tolerations and GPU resources as the per-replica requirement (the binding's replicas and
  requirement); the binding is Duplicated, so Karmada revises no replicas: each member's OverridePolicy
  sets its placement's own range, which its KEDA ScaledObject scales within;
- health: the member's `Ready` condition;
- status: each member's conditions, URL and model status are reflected, and the template's `Ready`
  condition says how many members are ready;
- dependencies: the PodDisruptionBudget named like the model follows it to every member it runs on.
"""

from __future__ import annotations

from typing import Any

from components.federation.manifests import ISVC_API, ISVC_KIND

CONFIG_API = "config.karmada.io/v1alpha1"

GET_REPLICAS = """\
function GetReplicas(obj)
  local predictor = obj.spec.predictor
  local replica = predictor.maxReplicas
  if replica == nil then
    replica = predictor.minReplicas or 1
  end
  local requirement = {}
  if predictor.nodeSelector ~= nil or predictor.tolerations ~= nil then
    requirement.nodeClaim = {}
    requirement.nodeClaim.nodeSelector = predictor.nodeSelector
    requirement.nodeClaim.tolerations = predictor.tolerations
  end
  if predictor.model ~= nil and predictor.model.resources ~= nil then
    local request = {}
    local found = false
    for _, section in ipairs({"limits", "requests"}) do
      local amounts = predictor.model.resources[section]
      if amounts ~= nil then
        for name, quantity in pairs(amounts) do
          request[name] = quantity
          found = true
        end
      end
    end
    if found then
      requirement.resourceRequest = request
    end
  end
  return replica, requirement
end
"""

INTERPRET_HEALTH = """\
function InterpretHealth(observedObj)
  if observedObj.status == nil or observedObj.status.conditions == nil then
    return false
  end
  for i = 1, #observedObj.status.conditions do
    local condition = observedObj.status.conditions[i]
    if condition.type == "Ready" then
      return condition.status == "True"
    end
  end
  return false
end
"""

REFLECT_STATUS = """\
function ReflectStatus(observedObj)
  local status = {}
  if observedObj == nil or observedObj.status == nil then
    return status
  end
  status.conditions = observedObj.status.conditions
  status.url = observedObj.status.url
  status.address = observedObj.status.address
  status.modelStatus = observedObj.status.modelStatus
  status.observedGeneration = observedObj.status.observedGeneration
  return status
end
"""

AGGREGATE_STATUS = """\
function AggregateStatus(desiredObj, statusItems)
  if statusItems == nil or #statusItems == 0 then
    return desiredObj
  end
  if desiredObj.status == nil then
    desiredObj.status = {}
  end
  local ready = 0
  local waiting = {}
  for i = 1, #statusItems do
    local item = statusItems[i]
    local isReady = false
    if item.status ~= nil and item.status.conditions ~= nil then
      for j = 1, #item.status.conditions do
        local condition = item.status.conditions[j]
        if condition.type == "Ready" and condition.status == "True" then
          isReady = true
        end
      end
    end
    if isReady then
      ready = ready + 1
    else
      table.insert(waiting, item.clusterName)
    end
  end
  local condition = {type = "Ready", status = "True", reason = "MembersReady"}
  condition.message = ready .. " of " .. #statusItems .. " member(s) ready"
  if #waiting > 0 then
    condition.status = "False"
    condition.reason = "MembersNotReady"
    condition.message = condition.message .. "; not ready: " .. table.concat(waiting, ", ")
  end
  desiredObj.status.conditions = {condition}
  return desiredObj
end
"""

GET_DEPENDENCIES = """\
function GetDependencies(desiredObj)
  local dependencies = {}
  dependencies[1] = {
    apiVersion = "policy/v1",
    kind = "PodDisruptionBudget",
    namespace = desiredObj.metadata.namespace,
    name = desiredObj.metadata.name,
  }
  return dependencies
end
"""


def inference_service_interpreter() -> dict[str, Any]:
    """The ResourceInterpreterCustomization for KServe v1beta1 InferenceServices."""
    return {
        "apiVersion": CONFIG_API,
        "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": "kserve-inferenceservice"},
        "spec": {
            "target": {"apiVersion": ISVC_API, "kind": ISVC_KIND},
            "customizations": {
                "replicaResource": {"luaScript": GET_REPLICAS},
                "healthInterpretation": {"luaScript": INTERPRET_HEALTH},
                "statusReflection": {"luaScript": REFLECT_STATUS},
                "statusAggregation": {"luaScript": AGGREGATE_STATUS},
                "dependencyInterpretation": {"luaScript": GET_DEPENDENCIES},
            },
        },
    }
