// The plugin's one way to reach the service: its settings (plugin config, then the environment, then the
// manifest's defaults) and one HTTP call with a deadline that never throws past its caller's contract.
import { readFileSync } from "node:fs";

const MANIFEST = JSON.parse(readFileSync(new URL("./openclaw.plugin.json", import.meta.url), "utf8"));

function defaultsOf(schema) {
  const out = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (property.type === "object") out[name] = defaultsOf(property);
    else if (property.default !== undefined) out[name] = property.default;
  }
  return out;
}

export const DEFAULTS = { baseUrl: "http://127.0.0.1:8000", ...defaultsOf(MANIFEST.configSchema) };
export { MANIFEST };

// Precedence: the plugin's config (plugins.entries.knowledge-bridge.config), then the environment the skill
// uses too (KB_URL, KB_API_KEY: one setting for both in a container), then the schema's defaults.
export function settings(pluginConfig) {
  const config = pluginConfig ?? {};
  const pick = (name, variable) => config[name] ?? (process.env[variable] || undefined) ?? DEFAULTS[name];
  const section = (name) => ({ ...DEFAULTS[name], ...(config[name] ?? {}) });
  return {
    baseUrl: String(pick("baseUrl", "KB_URL")).replace(/\/+$/, ""),
    apiKey: pick("apiKey", "KB_API_KEY"),
    timeoutMs: Number(config.timeoutMs ?? DEFAULTS.timeoutMs),
    memory: section("memory"),
    recall: section("recall"),
    agentVaults: config.agentVaults ?? {}, // agent id -> the vaults it may reach (vaults.js)
  };
}

// A failure the caller can show as it is: why the service could not be used, and what to do about it.
export class ServiceError extends Error {
  constructor(code, detail, suggestion, { status = 0, unavailable = false } = {}) {
    super(`${detail}${suggestion ? ` (${suggestion})` : ""}`);
    this.name = "ServiceError";
    this.code = code;
    this.detail = detail;
    this.suggestion = suggestion;
    this.status = status;
    this.unavailable = unavailable; // the service did not answer, or answered 5xx
  }
}

const START_IT = "Start the service (`make run`) or fix plugins.entries.knowledge-bridge.config.baseUrl; retry then.";

/** One request: the service's JSON answer and HTTP status, or a ServiceError (never a bare exception). */
export async function fetchJson(config, { method = "GET", path, body, timeoutMs, signal } = {}) {
  const headers = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;
  const limit = timeoutMs ?? config.timeoutMs;
  const deadline = AbortSignal.timeout(limit);
  let response;
  try {
    response = await fetch(config.baseUrl + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
    });
  } catch (error) {
    // `signal` may be a deadline the caller shares between calls (AbortSignal.timeout of the same limit)
    const reason = deadline.aborted || signal?.reason?.name === "TimeoutError"
      ? `no answer within ${limit} ms`
      : String(error?.cause?.code ?? error?.message ?? error);
    throw new ServiceError(
      "SERVICE_UNAVAILABLE",
      `Knowledge Bridge at ${config.baseUrl} did not answer (${reason})`,
      START_IT,
      { unavailable: true },
    );
  }
  let answer;
  try {
    answer = await response.json();
  } catch {
    throw new ServiceError(
      "SERVICE_UNAVAILABLE",
      `Knowledge Bridge at ${config.baseUrl} answered HTTP ${response.status} without JSON`,
      "Check that baseUrl points at the Knowledge Bridge service.",
      { status: response.status, unavailable: true },
    );
  }
  return { status: response.status, ok: response.ok, answer };
}

/** `fetchJson` for callers that want the answer or a ServiceError carrying the service's own envelope. */
export async function request(config, options) {
  const { status, ok, answer } = await fetchJson(config, options);
  if (ok) return answer;
  const error = answer && typeof answer === "object" ? answer : {};
  throw new ServiceError(
    String(error.error_code ?? `HTTP_${status}`),
    `Knowledge Bridge: ${error.detail ?? `HTTP ${status}`}`,
    error.suggestion,
    { status, unavailable: status >= 500 },
  );
}
