// The tools within an agent's vaults (the config's `agentVaults`): a request of a vault the agent may not
// reach is refused before it leaves, searches ask the allowed vaults only, and a status lists only those.
import { narrowed, vaultRefused } from "./vaults.js";

/**
 * The arguments of one tool call within `allowed` (null: every vault, the call as it is), or the refusal.
 * @param {{query_params: string[], body_params: string[]}} route
 * @param {Record<string, unknown>} args
 * @param {string[] | null} allowed
 * @returns {{args: Record<string, unknown>} | {refused: object}}
 */
export function withinVaults(route, args, allowed, { listing = false } = {}) {
  if (allowed === null) return { args };
  const takes = (name) => route.query_params.includes(name) || route.body_params.includes(name);
  if (takes("vaults")) {
    const asked = Array.isArray(args.vaults) ? args.vaults : [];
    const barred = asked.find((name) => !allowed.includes(name));
    if (barred !== undefined) return { refused: vaultRefused(barred, allowed) };
    const vaults = narrowed(asked, allowed);
    if (!vaults.length) return { refused: vaultRefused(undefined, allowed) };
    return { args: { ...args, vaults } };
  }
  if (takes("vault")) {
    const vault = args.vault ?? undefined;
    if (vault !== undefined) {
      return allowed.includes(vault) ? { args } : { refused: vaultRefused(vault, allowed) };
    }
    // without a vault the service picks one (the one holding a path, the first): it could be a barred one
    if (allowed.length === 1) return { args: { ...args, vault: allowed[0] } };
    // the status of every vault, filtered after (statusWithin); none allowed: refused as the other tools are,
    // since a service of one vault answers as that vault, with nothing to filter it out of
    if (listing && allowed.length) return { args };
    return { refused: vaultRefused(undefined, allowed) };
  }
  return { args };
}

/** A status of several vaults as an agent allowed some of them sees it: theirs only, the first of them on top. */
export function statusWithin(status, allowed) {
  if (allowed === null || !Array.isArray(status?.vaults)) return status;
  const states = status.vaults.filter((state) => allowed.includes(state.vault));
  const lead = states.find((state) => state.status)?.status;
  if (!lead) return { vault: "", vaults: states }; // none of its vaults answers: no other vault's figures
  return { ...status, ...lead, vaults: states };
}
