// Knowledge Bridge for OpenClaw: one agent tool per operation of the service's HTTP API.
//
// The tools (names, descriptions, JSON Schemas, HTTP calls) are in tools.json, generated from the service's
// OpenAPI schema (`make agent-tools`); this file only registers them and makes the calls. Each result's
// `details` (and its text, which the model reads) is
//   {ok: true,  status: "healthy" | "degraded", result: <the service's answer>}
//   {ok: false, status: "healthy" | "degraded" | "unavailable", error: {error_code, detail, recoverable, suggestion}}
// `status` is the service's health as seen by this call: the answer's own status when it has one, "unavailable"
// when the service did not answer or answered 503, "healthy" otherwise (a 4xx is the request's fault).
import { readFileSync } from "node:fs";
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

const TOOLS = JSON.parse(readFileSync(new URL("./tools.json", import.meta.url), "utf8")).tools;
const MANIFEST = JSON.parse(readFileSync(new URL("./openclaw.plugin.json", import.meta.url), "utf8"));
const DEFAULTS = {
  baseUrl: "http://127.0.0.1:8000",
  ...Object.fromEntries(
    Object.entries(MANIFEST.configSchema.properties)
      .filter(([, schema]) => schema.default !== undefined)
      .map(([name, schema]) => [name, schema.default]),
  ),
};

const HEALTH = new Set(["healthy", "degraded", "unavailable"]); // what search and context answers say

// Precedence: the plugin's config (plugins.entries.knowledge-bridge.config), then the environment the skill
// uses too (KB_URL, KB_API_KEY: one setting for both in a container), then the schema's defaults.
function settings(pluginConfig) {
  const config = pluginConfig ?? {};
  const pick = (name, variable) => config[name] ?? (process.env[variable] || undefined) ?? DEFAULTS[name];
  return {
    baseUrl: String(pick("baseUrl", "KB_URL")).replace(/\/+$/, ""),
    apiKey: pick("apiKey", "KB_API_KEY"),
    timeoutMs: Number(config.timeoutMs ?? DEFAULTS.timeoutMs),
  };
}

function request(route, params) {
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
  return { path: path + search, body: route.body_params.length ? JSON.stringify(body) : undefined };
}

function unavailable(detail, suggestion) {
  return {
    ok: false,
    status: "unavailable",
    error: { error_code: "SERVICE_UNAVAILABLE", detail, recoverable: true, suggestion },
  };
}

async function call(config, route, params) {
  const { path, body } = request(route, params);
  const headers = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;
  let response;
  try {
    response = await fetch(config.baseUrl + path, {
      method: route.method,
      headers,
      body,
      signal: AbortSignal.timeout(config.timeoutMs),
    });
  } catch (error) {
    const reason = error?.name === "TimeoutError" ? `no answer within ${config.timeoutMs} ms` : String(error?.cause?.code ?? error?.message ?? error);
    return unavailable(
      `Knowledge Bridge at ${config.baseUrl} did not answer (${reason})`,
      `Start the service (\`make run\`) or fix plugins.entries.knowledge-bridge.config.baseUrl; retry then.`,
    );
  }
  let answer;
  try {
    answer = await response.json();
  } catch {
    return unavailable(
      `Knowledge Bridge at ${config.baseUrl} answered HTTP ${response.status} without JSON`,
      "Check that baseUrl points at the Knowledge Bridge service.",
    );
  }
  const health = response.status >= 500 ? "unavailable" : "healthy";
  if (!response.ok) {
    return { ok: false, status: health, error: answer };
  }
  return { ok: true, status: HEALTH.has(answer?.status) ? answer.status : health, result: answer };
}

function register(api) {
  for (const tool of TOOLS) {
    api.registerTool({
      name: tool.name,
      label: tool.label,
      description: tool.description,
      parameters: tool.parameters,
      async execute(_toolCallId, params) {
        const args = params ?? {};
        const route = tool.operation ? tool.http : tool.http[args.action];
        const details = route
          ? await call(settings(api.pluginConfig), route, args)
          : {
              ok: false,
              status: "healthy",
              error: {
                error_code: "VALIDATION_ERROR",
                detail: `action: must be one of ${Object.keys(tool.http).join(", ")}`,
                recoverable: true,
                suggestion: "Fix the request fields named in detail.",
              },
            };
        return { content: [{ type: "text", text: JSON.stringify(details) }], details };
      },
    });
  }
}

export default definePluginEntry({
  id: MANIFEST.id,
  name: MANIFEST.name,
  description: MANIFEST.description,
  register,
});
