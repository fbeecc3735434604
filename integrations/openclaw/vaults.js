// The vaults of the service as the plugin sees them: which an agent may reach (the config's `agentVaults`),
// how a note of one is named to OpenClaw, and each vault's state in words.
//
// With one vault nothing changes: paths are the note's own, no request names a vault. With several (the
// service's VAULTS), a note is `vault:<name>/<path>` in memory_search's results and citations, so memory_get
// reads it back from that vault even when another holds the same path.

const QUALIFIED = /^vault:(?<vault>[^/]+)\/(?<path>.+)$/;

// OpenClaw's agent ids (normalizeAgentIdStrict, dist/agent-id-*.mjs): a valid one, lowercased; any other,
// lowercased, each run of characters besides a-z 0-9 _ - a dash, no dash at either end, at most 64
const VALID_AGENT_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

/** An agent id, or an `agentVaults` key, as OpenClaw normalizes agent ids (trimmed, lowercased, ...): "" when
 * nothing is left (OpenClaw refuses such an id: "unrepresentable"). */
export function agentKey(value) {
  const trimmed = typeof value === "string" ? value.trim() : "";
  const lowered = trimmed.toLowerCase();
  if (VALID_AGENT_ID.test(trimmed)) return lowered;
  return lowered.replace(/[^a-z0-9_-]+/g, "-").replace(/^-+/, "").replace(/-+$/, "").slice(0, 64);
}

/**
 * The vaults an agent may reach: `agentVaults[agentId]`, else `agentVaults["*"]`, else null (all of them).
 * Keys and the id are compared as OpenClaw normalizes agent ids (agentKey: `"Work"` is the agent `work`);
 * two keys of one agent (`"Work"` and `"work"`) allow only the vaults both list.
 * A call without an agent id (OpenClaw's hook, tool and memory contexts may lack one) reaches, once an
 * allowlist is set, only what `"*"` allows, and nothing when `"*"` is not listed: OpenClaw's plugin docs ask
 * to fail closed rather than choose an agent when one is needed and missing, and an unnamed agent could be
 * any, the one the allowlist keeps out of a vault too. Without an allowlist, every vault, as before.
 * @param {{agentVaults?: Record<string, string[]>}} config
 * @param {string | undefined} agentId
 * @returns {string[] | null}
 */
export function allowedVaults(config, agentId) {
  const table = config.agentVaults ?? {};
  const id = agentKey(agentId);
  if (!id && Object.keys(table).length) return Array.isArray(table["*"]) ? [...table["*"]] : [];
  const own = Object.entries(table)
    .filter(([key, list]) => key !== "*" && agentKey(key) === id && list !== undefined && list !== null)
    .map(([, list]) => list);
  const listed = own.length ? own.reduce(bothAllow) : table["*"];
  return Array.isArray(listed) ? [...listed] : null;
}

function bothAllow(first, second) {
  if (!Array.isArray(first)) return second; // not a list (every vault): the other one's
  return Array.isArray(second) ? first.filter((name) => second.includes(name)) : first;
}

/** A note as OpenClaw names it: its own path with one vault, `vault:<name>/<path>` with several. */
export function qualify(vault, path, several) {
  return several && vault ? `vault:${vault}/${path}` : path;
}

/** `vault:<name>/<path>` -> {vault, path}; a plain path -> {vault: undefined, path}. */
export function unqualify(text) {
  const named = QUALIFIED.exec(text);
  return named ? { vault: named.groups.vault, path: named.groups.path } : { vault: undefined, path: text };
}

/** The vaults a request may ask: those asked (all when none) within the allowed; an empty list: none. */
export function narrowed(asked, allowed) {
  const wanted = Array.isArray(asked) && asked.length ? asked : null;
  if (allowed === null) return wanted;
  return wanted ? wanted.filter((name) => allowed.includes(name)) : allowed;
}

/** The error a refused vault gets: the service's own shape, so a caller reads it like any other. */
export function vaultRefused(vault, allowed) {
  return {
    error_code: "VAULT_NOT_ALLOWED",
    detail: vault
      ? `this agent may not read the vault '${vault}'`
      : allowed.length
        ? "this agent may reach several vaults: name one with `vault`"
        : "this agent may reach no vault",
    recoverable: true,
    suggestion: allowed.length ? `Name one of: ${allowed.join(", ")}.` : "This agent may reach no vault.",
  };
}

/**
 * Every vault of a status answer (GET /index/status): one vault answers as itself, several list theirs.
 * @returns {{several: boolean, states: {vault: string, available: boolean, status?: object, detail?: string}[]}}
 */
export function vaultsOf(status) {
  if (Array.isArray(status?.vaults)) {
    return { several: status.vaults.length > 1, states: status.vaults };
  }
  return { several: false, states: [{ vault: status?.vault ?? "", available: true, status }] };
}

/** What a vault is doing, for the memory section: "indexing 150/725", "keyword only while the model builds". */
export function stateInWords(state) {
  if (!state.available || !state.status) return `unavailable (${state.detail ?? state.error_code ?? "no answer"})`;
  const status = state.status;
  const job = status.job && !status.job.finished_at ? status.job : null;
  const counted = job && job.total ? ` ${job.done}/${job.total}` : "";
  const embedder = status.embedder?.state;
  if (job && job.phase === "embedding") return `keyword only while the model builds (embedding${counted})`;
  if (job && ["scanning", "indexing", "queued"].includes(job.phase)) {
    return `${job.kind === "rebuild" ? "rebuilding" : job.kind === "sync" ? "syncing" : "indexing"}${counted}`;
  }
  if (embedder === "off") return `${status.indexed_notes} notes, keyword search only`;
  if (embedder === "failed") return `${status.indexed_notes} notes, keyword only (the model failed)`;
  if (embedder === "loading" || status.dense_pending > 0) {
    return `${status.indexed_notes} notes, keyword only while the model builds`;
  }
  return `${status.indexed_notes} notes, ready`;
}
