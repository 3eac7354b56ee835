"""How the gateway sets a request's priority class: the endpoint picker's control headers and the Lua that names the
objective (components/serving/priority_classes.py tells the whole story).

The program renders them on every Gateway; the policy pack checks that a Gateway drops the headers a client sends
and runs no Lua but this script where pools are shared by several classes.
"""

from __future__ import annotations

OBJECTIVE_HEADER = "x-gateway-inference-objective"
# Headers the v1.5.0 picker obeys whoever sets them (components/catalog/upstream.py GIE_OBJECTIVE_FROM_HEADER): the
# objective, the fairness flow and the model it writes into the body.
PICKER_CONTROL_HEADERS = (OBJECTIVE_HEADER, "x-gateway-inference-fairness-id", "x-gateway-model-name-rewrite")

# Runs on every route of the Gateway; acts only on the routes and tenants its filter context names. The client's
# objective header is already gone (ClientTrafficPolicy); removing it again costs nothing.
PRIORITY_LUA = """\
function envoy_on_request(handle)
  local headers = handle:headers()
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
    headers:replace("x-gateway-inference-objective", objective)
  end
end
"""
