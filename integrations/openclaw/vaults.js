// The vaults of the service as the plugin sees them: which an agent may reach (the config's `agentVaults`),
// how a note of one is named to OpenClaw, and each vault's state in words.
//
// With one vault nothing changes: paths are the note's own, no request names a vault. With several (the
// service's VAULTS), a note is `vault:<name>/<path>` in memory_search's results and citations, so memory_get
// reads it back from that vault even when another holds the same path.

const QUALIFIED = /^vault:(?<vault>[^/]+)\/(?<path>.+)$/;

/**
 * The vaults an agent may reach: `agentVaults[agentId]`, else `agentVaults["*"]`, else null (all of them).
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
  const named = typeof agentId === "string" && agentId.trim() !== "";
  if (!named && Object.keys(table).length) return Array.isArray(table["*"]) ? [...table["*"]] : [];
  const listed = (named && Object.hasOwn(table, agentId) ? table[agentId] : undefined) ?? table["*"];
  return Array.isArray(listed) ? [...listed] : null;
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
