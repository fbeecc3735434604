// The plugin's tools: each one call of the service's HTTP API (tools.json, generated from its OpenAPI schema),
// made within the vaults the calling agent may reach (tool-vaults.js).
import { readFileSync } from "node:fs";

import { fetchJson, ServiceError, settings } from "./service.js";
import { statusWithin, withinVaults } from "./tool-vaults.js";
import { allowedVaults } from "./vaults.js";

export const TOOLS = JSON.parse(readFileSync(new URL("./tools.json", import.meta.url), "utf8")).tools;
const HEALTH = new Set(["healthy", "degraded", "unavailable"]); // what search and context answers say

function requestOf(route, params) {
  let path = route.path;
  for (const name of route.path_params) {
    // slashes too: fetch would resolve a `..` segment itself, so the service could not refuse it
    path = path.replace(`{${name}}`, encodeURIComponent(String(params[name] ?? "")));
  }
  const query = new URLSearchParams();
  for (const name of route.query_params) {
    if (params[name] !== undefined && params[name] !== null) query.set(name, String(params[name]));
  }
  const body = {};
  for (const name of route.body_params) {
    if (params[name] !== undefined) body[name] = params[name];
  }
  const search = query.size ? `?${query}` : "";
  return { method: route.method, path: path + search, body: route.body_params.length ? body : undefined };
}

async function call(config, route, params) {
  let answered;
  try {
    answered = await fetchJson(config, requestOf(route, params));
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    return {
      ok: false,
      status: "unavailable",
      error: { error_code: error.code, detail: error.detail, recoverable: true, suggestion: error.suggestion },
    };
  }
  const { status, ok, answer } = answered;
  const health = status >= 500 ? "unavailable" : "healthy";
  if (!ok) return { ok: false, status: health, error: answer };
  return { ok: true, status: HEALTH.has(answer?.status) ? answer.status : health, result: answer };
}

const refusal = (error) => ({ ok: false, status: "healthy", error });

/** One call of a tool by an agent (`agentId`: OpenClaw's tool context), within the vaults it may reach. */
export async function execute(api, tool, params, agentId) {
  const args = params ?? {};
  const route = tool.operation ? tool.http : tool.http[args.action];
  if (!route) {
    return refusal({
      error_code: "VALIDATION_ERROR",
      detail: `action: must be one of ${Object.keys(tool.http).join(", ")}`,
      recoverable: true,
      suggestion: "Fix the request fields named in detail.",
    });
  }
  const config = settings(api.pluginConfig);
  const allowed = allowedVaults(config, agentId);
  const listing = tool.name === "kb_status";
  const within = withinVaults(route, args, allowed, { listing });
  if (within.refused) return refusal(within.refused);
  const details = await call(config, route, within.args);
  return listing && details.ok ? { ...details, result: statusWithin(details.result, allowed) } : details;
}

