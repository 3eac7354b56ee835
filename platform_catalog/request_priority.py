"""How the gateway sets a request's priority class: the endpoint picker's control headers and the Lua that names the
objective (components/serving/priority_classes.py tells the whole story).

The program renders them on every Gateway; the policy pack checks that a Gateway drops the headers a client sends
and runs no Lua but this script where pools are shared by several classes.
"""

from __future__ import annotations

# The picker's InferenceObjective (llm-d-router v0.9.0 serves it in llm-d.ai; it ignores the old group's objectives
# when both are served), and the header naming one: v0.9.0 reads `x-llm-d-inference-objective` first, then its
# deprecated alias `x-gateway-inference-objective` (components/catalog/upstream.py GIE_OBJECTIVE_FROM_HEADER).
OBJECTIVE_GROUP = "llm-d.ai"
OBJECTIVE_API = f"{OBJECTIVE_GROUP}/v1alpha2"
OBJECTIVE_HEADER = "x-llm-d-inference-objective"
# Headers the picker obeys whoever sets them, each under its name and its deprecated alias: the objective, the
# fairness flow and the model it writes into the body.
PICKER_CONTROL_HEADERS = (
    OBJECTIVE_HEADER,
    "x-gateway-inference-objective",
    "x-llm-d-inference-fairness-id",
    "x-gateway-inference-fairness-id",
    "x-llm-d-model-name-rewrite",
    "x-gateway-model-name-rewrite",
)

# Runs on every route of the Gateway; acts only on the routes and tenants its filter context names. The client's
# objective headers are already gone (ClientTrafficPolicy); removing them again costs nothing.
PRIORITY_LUA = """\
function envoy_on_request(handle)
  local headers = handle:headers()
  headers:remove("x-llm-d-inference-objective")
  headers:remove("x-gateway-inference-objective")
  local routes = handle:filterContext():get("objectives")
  local model = headers:get("x-ai-eg-model")
  local tenant = headers:get("x-tenant-id")
  if type(routes) ~= "table" or model == nil or tenant == nil then
    return
  end
  local tenants = routes[model]
  local objective = nil
  if type(tenants) == "table" then
    objective = tenants[tenant]
  end
  if type(objective) == "string" then
    headers:replace("x-llm-d-inference-objective", objective)
  end
end
"""
