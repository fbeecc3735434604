// Recall each turn: before OpenClaw builds a prompt, ask the service's /context for the latest user message
// (and a little of the conversation) and hand the turn one bounded, quoted block of the user's notes.
//
// The service decides what is worth it (entries above a calibrated confidence, so "hi" adds nothing) and
// fences the block as quoted data; this side keeps the per-session memory of what was already injected, the
// deadline, and OpenClaw's rules: memory never blocks a reply, and an outage is logged once, not every turn.
import { ServiceHealth } from "./health.js";
import { request, settings } from "./service.js";
import { allowedVaults, qualify } from "./vaults.js";

const MAX_SESSIONS = 256; // sessions whose recent injections are remembered (oldest forgotten first)
const HISTORY = 2; // earlier user and assistant messages sent besides the current one: they help rank, not gate
const MAX_MESSAGE_CHARS = 4000;
// what OpenClaw and this plugin add around a user's words, which must not become part of the search
const INTERNAL = /<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>[\s\S]*?<<<END_OPENCLAW_INTERNAL_CONTEXT>>>/g;
const QUOTED = /<vault-notes-[0-9a-f]+>[\s\S]*?<\/vault-notes-[0-9a-f]+>/g;
const STAMP = /^\[[A-Z][a-z]{2} \d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})? [A-Z]{2,5}\] /;
const RUNTIME = /\n\nRuntime: agent=[^\n]*$/;

export function textOf(message) {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .filter((part) => part?.type === "text" && typeof part.text === "string")
      .map((part) => part.text)
      .join("\n");
  }
  return "";
}

/** The words a person wrote, without OpenClaw's envelope (time stamp, runtime line, internal context) or an
 * earlier turn's quoted vault block. */
export function spoken(text) {
  return String(text ?? "")
    .replace(INTERNAL, "")
    .replace(QUOTED, "")
    .replace(STAMP, "")
    .replace(RUNTIME, "")
    .trim()
    .slice(0, MAX_MESSAGE_CHARS);
}

/** The conversation as /context reads it: a few earlier user and assistant messages, then the current one. */
export function conversation(event) {
  const earlier = (Array.isArray(event?.messages) ? event.messages : [])
    .filter((message) => message?.role === "user" || message?.role === "assistant")
    .map((message) => ({ role: message.role, content: spoken(textOf(message)) }))
    .filter((message) => message.content);
  const current = spoken(event?.currentUserMessage ?? event?.prompt ?? "");
  if (current && earlier.at(-1)?.role === "user" && earlier.at(-1)?.content === current) earlier.pop();
  return { current, messages: [...earlier.slice(-HISTORY), ...(current ? [{ role: "user", content: current }] : [])] };
}

/** What each session was given lately, so the same chunk is not injected again within `turns` turns. */
export class RecentInjections {
  constructor(limit = MAX_SESSIONS) {
    this.limit = limit;
    this.sessions = new Map(); // key -> {turn, given: [{turn, labels}], last: {id, result}}
  }

  session(key) {
    let state = this.sessions.get(key);
    if (state) this.sessions.delete(key); // re-inserted below: the map's order is least recently used first
    else state = { turn: 0, given: [], last: null };
    this.sessions.set(key, state);
    while (this.sessions.size > this.limit) this.sessions.delete(this.sessions.keys().next().value);
    return state;
  }

  excluded(state, turns) {
    return state.given.filter((entry) => state.turn - entry.turn < turns).flatMap((entry) => entry.labels);
  }

  record(state, labels, turns) {
    state.given = state.given.filter((entry) => state.turn - entry.turn < turns);
    if (labels.length) state.given.push({ turn: state.turn, labels });
  }
}

/** Logs a failure once per outage (the first failure after a success), and the recovery. */
export class OutageLog {
  constructor(logger) {
    this.logger = logger;
    this.failing = false;
  }

  failed(error) {
    if (this.failing) return;
    this.failing = true;
    this.logger?.warn?.(
      `knowledge-bridge recall: no vault context for this turn (${error?.message ?? error}); turns go on ` +
        "without it, and this is logged again only after the service has answered once more",
    );
  }

  answered() {
    if (!this.failing) return;
    this.failing = false;
    this.logger?.info?.("knowledge-bridge recall: the service answers again");
  }
}

/** The vaults an agent's recall asks: null (every vault: the service's default), or the allowed ones the
 * service serves (an allowlist naming a vault it does not serve must not fail the whole recall). */
async function askable(health, config, agentId, signal) {
  const allowed = allowedVaults(config, agentId);
  if (allowed === null) return null;
  const { names } = await health.vaults(config, config.recall.timeoutMs, signal);
  return names.filter((name) => allowed.includes(name));
}

/** OpenClaw's `memory.citations` ("auto", "on" or "off"; unset: "auto"), which its memory section follows:
 * the running config's (OpenClaw reloads it without a restart: api.runtime.config.current(), as its docs
 * advise where no config is passed in, and a hook's context carries none), else the one registered with. */
export function citationsMode(api) {
  let running;
  try {
    running = api.runtime?.config?.current?.();
  } catch {
    running = undefined; // no runtime config here (a test, a CLI load): the registration's
  }
  return (running ?? api.config)?.memory?.citations;
}

// The turn's tool surface decides whether the vault may enter it: recall gives what these tools would.
const VAULT_TOOLS = ["memory_search", "kb_context", "kb_search"];

/** What a block gave, as the next turn's `exclude` names it: each entry's attribution, of its vault
 * (`vault:<name>/<path>:<lines>`) when the service names one, so that the same path of another vault is
 * still offered. */
export function givenLabels(answer) {
  return (answer.sources ?? []).map((source) => qualify(source.vault, source.attribution, true));
}

/** Whether a refusal of /context is an older service's of `cite` (its requests forbid unknown fields: "cite:
 * not a field of this request"), which answers the same request without it. */
export function refusesCite(error) {
  return error?.status === 422 && /(?:^|;\s*)cite: /.test(String(error.detail ?? "").replace(/^Knowledge Bridge: /, ""));
}

export function recallHook(api, health, recent = new RecentInjections(), outages = new OutageLog(api.logger)) {
  // services (by baseUrl) that refused `cite`, older than it: asked without it from then on, one request a turn
  // (until OpenClaw restarts: a service upgraded meanwhile is asked with it again then)
  const withoutCite = new Set();
  return async (event, ctx) => {
    const config = settings(api.pluginConfig);
    const recall = config.recall;
    if (!recall.enabled) return undefined;
    const authority = ctx?.toolAuthority;
    if (authority && !VAULT_TOOLS.some((name) => authority.allows(name))) return undefined;
    const { current, messages } = conversation(event);
    if (!current) return undefined; // an image-only turn or a continuation: nothing was asked
    const state = recent.session(`${ctx?.agentId ?? ""}\u0000${ctx?.sessionKey ?? ctx?.sessionId ?? ""}`);
    const id = event?.currentUserMessageId;
    if (id && state.last?.id === id) return state.last.result; // the same request built again (a retry)
    const turn = state.turn + 1; // this turn's number, kept once it asked (a stale run keeps nothing)
    // one deadline for the whole recall: the vaults' list (an allowlist's) and /context share recall.timeoutMs
    const deadline = AbortSignal.timeout(recall.timeoutMs);
    let answer;
    try {
      const vaults = await askable(health ?? (health = new ServiceHealth(api)), config, ctx?.agentId, deadline);
      if (vaults !== null && !vaults.length) return undefined; // this agent may reach none of the vaults
      const body = {
        messages,
        max_chars: recall.maxChars,
        max_chunks: recall.maxEntries,
        min_confidence: recall.minConfidence,
        exclude: recent.excluded({ ...state, turn }, recall.repeatTurns),
        quoted: true,
        ...(vaults === null ? {} : { vaults }),
      };
      const ask = (sent) =>
        request(config, { method: "POST", path: "/context", body: sent, timeoutMs: recall.timeoutMs, signal: deadline });
      // citations "off": OpenClaw's memory section asks for no paths or lines in replies, and the block's head
      // must not ask for them either (sent only then: the default cites, as the memory section does)
      if (citationsMode(api) !== "off" || withoutCite.has(config.baseUrl)) {
        answer = await ask(body);
      } else {
        try {
          answer = await ask({ ...body, cite: false });
        } catch (error) {
          if (!refusesCite(error)) throw error;
          // a service older than `cite` refuses it: its block (with its citing head) rather than none, asked
          // again within the same deadline, and without it from now on
          withoutCite.add(config.baseUrl);
          api.logger?.info?.(
            `knowledge-bridge recall: the service at ${config.baseUrl} is older than \`cite\` (${error.detail}): ` +
              "its blocks ask for [path:lines] though memory.citations is off (upgraded, it is asked with it once OpenClaw restarts)",
          );
          answer = await ask(body);
        }
      }
    } catch (error) {
      health?.saw(!error?.unavailable);
      outages.failed(error);
      state.turn = turn;
      return undefined;
    }
    health?.saw(true);
    outages.answered();
    // the run may have been aborted or replaced while /context answered: its block is discarded, so what it
    // gave is not remembered as given (OpenClaw: assertActive after awaited work, before side effects)
    ctx?.hookInvocation?.assertActive?.();
    authority?.assertActive?.();
    state.turn = turn;
    recent.record(state, givenLabels(answer), recall.repeatTurns);
    const result = answer.context ? { prependContext: answer.context } : undefined;
    state.last = id ? { id, result } : null;
    return result;
  };
}
