// Knowledge Bridge for OpenClaw: the user's Obsidian vault as agent tools, as a corpus of OpenClaw's own
// memory (memory_search / memory_get, and a few lines of the system prompt's memory section), and as recall:
// each turn, the notes that answer the latest message, quoted into the prompt.
//
// The tools (names, descriptions, JSON Schemas, HTTP calls) are in tools.json, generated from the service's
// OpenAPI schema (`make agent-tools`); this file registers them and makes the calls. Each result's
// `details` (and its text, which the model reads) is
//   {ok: true,  status: "healthy" | "degraded", result: <the service's answer>}
//   {ok: false, status: "healthy" | "degraded" | "unavailable", error: {error_code, detail, recoverable, suggestion}}
// `status` is the service's health as seen by this call: the answer's own status when it has one, "unavailable"
// when the service did not answer or answered 503, "healthy" otherwise (a 4xx is the request's fault).
import { readFileSync } from "node:fs";
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

import { registerIndexCli } from "./cli.js";
import { ServiceHealth } from "./health.js";
import { vaultPromptLines } from "./prompt.js";
import { recallHook } from "./recall.js";
import { fetchJson, MANIFEST, ServiceError, settings } from "./service.js";
import { statusWithin, withinVaults } from "./tool-vaults.js";
import { vaultCorpus } from "./vault-memory.js";
import { allowedVaults } from "./vaults.js";

const TOOLS = JSON.parse(readFileSync(new URL("./tools.json", import.meta.url), "utf8")).tools;
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
async function execute(api, tool, params, agentId) {
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

function registerTools(api) {
  for (const tool of TOOLS) {
    // a factory: OpenClaw builds the tool for each run with its context, whose agent decides the vaults
    api.registerTool(
      (context) => ({
        name: tool.name,
        label: tool.label,
        description: tool.description,
        parameters: tool.parameters,
        async execute(_toolCallId, params) {
          const details = await execute(api, tool, params, context?.agentId);
          return { content: [{ type: "text", text: JSON.stringify(details) }], details };
        },
      }),
      // an optional tool reaches a model only once the user allowlists it (tools.alsoAllow)
      { name: tool.name, optional: tool.optional === true },
    );
  }
}

function register(api) {
  registerIndexCli(api);
  if (api.registrationMode === "cli-metadata") return; // root help: the command's descriptor only
  registerTools(api);
  const config = settings(api.pluginConfig);
  const health = new ServiceHealth(api);
  if (config.memory.enabled) {
    api.registerMemoryCorpusSupplement(vaultCorpus(api, health));
    api.registerMemoryPromptPreparation(vaultPromptLines(health));
  }
  // a conversation hook: OpenClaw runs it only once the user grants
  // plugins.entries.knowledge-bridge.hooks.allowConversationAccess (and leaves allowPromptInjection on)
  api.on("before_prompt_build", recallHook(api, health), {
    requiresToolAuthority: true,
    timeoutMs: config.recall.timeoutMs + 1000, // ours ends the call first; this only backs it up
  });
}

export default definePluginEntry({
  id: MANIFEST.id,
  name: MANIFEST.name,
  description: MANIFEST.description,
  register,
});
