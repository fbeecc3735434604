// The vault inside OpenClaw's own memory tools: a corpus supplement that `memory_search` (corpus `all` or
// `wiki`, OpenClaw's name for supplement corpora) and `memory_get` reach, and the lines of the system prompt's
// memory section that tell the model it is there.
//
// Memory never blocks a reply: every call here has its own deadline, far under OpenClaw's 30 s memory budget,
// and a failure is thrown with the reason, which OpenClaw shows beside its own memory's answer.
import { ServiceHealth } from "./health.js";
import { request, ServiceError, settings } from "./service.js";
import { allowedVaults, qualify, unqualify } from "./vaults.js";

export { ServiceHealth } from "./health.js";
export { vaultPromptLines } from "./prompt.js";

export const CORPUS = "wiki"; // the value of memory_search's `corpus` that selects supplements
const PROVENANCE = "the user's Obsidian vault (Knowledge Bridge)";
const SOURCE_TYPE = "obsidian-vault";
const CITATION = /^(?<path>.+?)#L(?<start>\d+)(?:-L?(?<end>\d+))?$/;
// what the recall block cites, `[path:start-end]`: no note name holds a colon (Obsidian refuses one)
const ATTRIBUTION = /^(?<path>[^:]+|vault:[^/]+\/[^:]+):(?<start>\d+)(?:-(?<end>\d+))?$/;
const MAX_RESULTS = 20;
// what OpenClaw's own memory_get reads of a memory file (memory-core, read-file-shared): a read without
// `lines` gives the first 120 lines from `from`, and any read at most 12,000 characters, in whole lines
const EXCERPT_LINES = 120;
const EXCERPT_CHARS = 12_000;

function citation(path, start, end) {
  return start === end ? `${path}#L${start}` : `${path}#L${start}-L${end}`;
}

function toResult(result, several) {
  const path = qualify(result.vault, result.note_path, several);
  return {
    corpus: CORPUS,
    path,
    title: result.note_title,
    kind: "note",
    score: result.confidence,
    snippet: result.content,
    id: result.chunk_id,
    startLine: result.start_line,
    endLine: result.end_line,
    citation: citation(path, result.start_line, result.end_line),
    ...(result.vault ? { vault: result.vault } : {}),
    source: "knowledge-bridge",
    provenanceLabel: PROVENANCE,
    sourceType: SOURCE_TYPE,
    sourcePath: result.note_path,
    ...(result.date ? { updatedAt: result.date } : {}),
    headingContext: result.heading_context,
    sensitiveCategories: result.sensitive_categories,
    ...(result.redactions ? { redactions: result.redactions } : {}),
  };
}

/** A line number or a count as OpenClaw's memory reads take one (read-file-shared's resolveIntegerOption
 * with min 1, memory-wiki's normalizePositiveInteger): whole, at least 1 (0 or -3 is 1); not a number: unset.
 * OpenClaw's memory_get tool never hands such a one on: it refuses a `from` or `lines` that is not a positive
 * integer (readPositiveIntegerParam: "from must be a positive integer") before any corpus is asked, so this
 * matters to the supplement's other callers only. */
function atLeastOne(value) {
  return typeof value === "number" && Number.isFinite(value) ? Math.max(1, Math.floor(value)) : undefined;
}

/** `path`, `path#L14`, `path#L14-L18` (what a result's citation says), `path:14-18` (what the recall
 * block cites) -> the note and a line window. */
export function parseLookup(lookup, from, count) {
  const fromLine = atLeastOne(from);
  const lineCount = atLeastOne(count);
  const text = String(lookup ?? "").trim().replace(/^\[(.*)\]$/, "$1");
  const cited = CITATION.exec(text) ?? ATTRIBUTION.exec(text);
  const path = cited ? cited.groups.path : text;
  let start = fromLine ?? (cited ? Number(cited.groups.start) : undefined);
  let end;
  if (lineCount !== undefined) end = (start ?? 1) + lineCount - 1;
  else if (fromLine === undefined && cited) end = Number(cited.groups.end ?? cited.groups.start);
  if (end !== undefined && start === undefined) start = 1;
  return { path, start, end };
}

/** A note's window as OpenClaw's memory_get gives a memory file's excerpt: whole lines up to EXCERPT_CHARS
 * (one longer line cut there), and, while more of the note is left, `truncated`, `nextFrom` (the line to go
 * on from, unless a line was cut) and memory-core's own note at the end of the text saying how to go on. */
export function excerpt(note) {
  // no lines: an empty note (start_line 0), or a window past its end (end_line before start_line)
  const lines = note.start_line && note.end_line >= note.start_line ? String(note.content).split("\n") : [];
  let kept = 0;
  let chars = 0;
  for (const line of lines) {
    const next = chars + line.length + (kept ? 1 : 0);
    if (kept && next > EXCERPT_CHARS) break;
    kept += 1;
    chars = next;
  }
  const cut = chars > EXCERPT_CHARS; // a first line longer than the budget: its start only
  let text = lines.slice(0, kept).join("\n");
  if (cut) text = text.slice(0, /[\uD800-\uDBFF]/.test(text[EXCERPT_CHARS - 1]) ? EXCERPT_CHARS - 1 : EXCERPT_CHARS);
  const more = kept < lines.length || note.end_line < note.total_lines;
  const nextFrom = !cut && more ? note.start_line + kept : undefined;
  if (!cut && !more) return { content: text, lineCount: kept };
  const notice = nextFrom
    ? `[More content available. Use from=${nextFrom} to continue.]`
    : "[More content available. Requested excerpt exceeded the default maxChars budget.]";
  return { content: `${text}\n\n${notice}`, lineCount: kept, truncated: true, ...(nextFrom ? { nextFrom } : {}) };
}

function notePath(path) {
  // every segment encoded, slashes too: fetch would resolve a `..` itself, so the service could not refuse it
  return `/note/${encodeURIComponent(path)}`;
}

/** Runs a call, telling `health` whether the service answered. */
async function watched(health, call) {
  try {
    const answer = await call();
    health?.saw(true);
    return answer;
  } catch (error) {
    health?.saw(!(error instanceof ServiceError && error.unavailable));
    throw error;
  }
}


/** The vaults this agent's memory asks: null (all, nothing to name), or those of the service it may reach. */
async function askedVaults(health, config, agentId, signal) {
  const allowed = allowedVaults(config, agentId);
  const { several, names } = await health.vaults(config, config.memory.timeoutMs, signal);
  return { several, names, asked: allowed === null ? null : names.filter((name) => allowed.includes(name)) };
}

function isMissing(error) {
  // not a vault note (OpenClaw asks every corpus): "not found here", not a failure
  return error instanceof ServiceError && ["NOTE_NOT_FOUND", "SECURITY_VIOLATION", "UNKNOWN_VAULT"].includes(error.code);
}

// GET /note's refusal of a window that starts past the note's end (line_ranges.py), which says the note's length
const PAST_THE_END = /past the end of the note \((?<total>\d+) lines?\)/;

function isPastTheEnd(error, start) {
  return error instanceof ServiceError && error.code === "VALIDATION_ERROR" && start > 1;
}

export function vaultCorpus(api, health = new ServiceHealth(api)) {
  /** One note read of one vault (`vault` undefined: the service's own choice) before `signal` (the call's one
   * deadline) aborts; null when it is not there. */
  async function fetchNote(config, path, vault, start, end, signal) {
    const query = new URLSearchParams();
    if (start !== undefined) query.set("start_line", String(start));
    if (end !== undefined) query.set("end_line", String(end));
    if (vault !== undefined) query.set("vault", vault);
    const target = notePath(path) + (query.size ? `?${query}` : "");
    try {
      return await watched(health, () => request(config, { path: target, timeoutMs: config.memory.timeoutMs, signal }));
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /** A note's window, and a window starting past the note's end, which the service refuses, as an empty read
   * of the note: OpenClaw's memory_get reads a memory file past its end so (read-file-shared: `from` kept, no
   * lines, text "", nothing more to say). */
  async function read(config, path, vault, start, end, signal) {
    try {
      return await fetchNote(config, path, vault, start, end, signal);
    } catch (error) {
      if (!isPastTheEnd(error, start)) throw error;
    }
    // its first line tells that the note is there, how long it is, and what the answer names
    const note = await fetchNote(config, path, vault, 1, 1, signal);
    if (!note || note.total_lines < start) return note && empty(note, start, note.total_lines);
    // it grew meanwhile and reaches `start` now: its window read again, once (within the same deadline); refused
    // again (it shrank back), the empty read of the length that refusal says
    try {
      return await fetchNote(config, path, vault, start, end, signal);
    } catch (error) {
      if (!isPastTheEnd(error, start)) throw error;
      const told = PAST_THE_END.exec(error.detail)?.groups.total;
      return empty(note, start, told === undefined ? start - 1 : Number(told));
    }
  }

  function empty(note, start, total) {
    const nothing = { start_line: start, end_line: start - 1, content: "", redactions: 0, sensitive_categories: [] };
    return { ...note, total_lines: total, ...nothing };
  }

  return {
    async search({ query, maxResults, agentId }) {
      const config = settings(api.pluginConfig);
      const { several, asked } = await askedVaults(health, config, agentId);
      if (asked !== null && !asked.length) return []; // this agent may reach none of the service's vaults
      const answer = await watched(health, () =>
        request(config, {
          method: "POST",
          path: "/search",
          body: {
            query,
            top_k: Math.min(Math.max(1, maxResults ?? 10), MAX_RESULTS),
            ...(asked === null ? {} : { vaults: asked }),
          },
          timeoutMs: config.memory.timeoutMs,
        }),
      );
      const floor = config.memory.minScore;
      return (answer.results ?? []).filter((result) => result.confidence >= floor).map((r) => toResult(r, several));
    },

    async get({ lookup, fromLine, lineCount, agentId }) {
      const config = settings(api.pluginConfig);
      // one deadline for the whole read: the vaults' list, the window, and what a window past the end costs
      const deadline = AbortSignal.timeout(config.memory.timeoutMs);
      const window = parseLookup(lookup, fromLine, lineCount);
      // no lines asked (a path, or `from` alone): a bounded excerpt, as OpenClaw's memory_get reads its files
      const start = window.start ?? 1;
      const end = window.end ?? start + EXCERPT_LINES - 1;
      const { vault, path } = unqualify(window.path);
      if (!path) return null;
      const { several, names, asked } = await askedVaults(health, config, agentId, deadline);
      // the vaults a path without one may be in: none to name with one vault and no allowlist
      const pool = asked ?? (several ? names : null);
      let note;
      if (vault !== undefined) {
        // a vault this agent may not reach is "not found here": its notes' existence is not told either
        if (asked !== null && !asked.includes(vault)) return null;
        note = await read(config, path, vault, start, end, deadline);
      } else if (pool === null) {
        note = await read(config, path, undefined, start, end, deadline); // one vault: as it always was
      } else {
        // each vault it may be in is asked (only the allowed ones: the service's own choice could be another's)
        const reads = pool.map((name) => read(config, path, name, start, end, deadline));
        const found = (await Promise.all(reads)).filter(Boolean);
        if (found.length > 1) {
          const choices = found.map((hit) => `vault:${hit.vault}/${path}`).join(", ");
          throw new ServiceError("NOTE_AMBIGUOUS", `'${path}' is in several vaults`, `Read one of ${choices}.`);
        }
        note = found[0] ?? null;
      }
      if (!note) return null;
      const shown = qualify(note.vault, note.note_path, several);
      const { content, lineCount: lines, ...more } = excerpt(note);
      return {
        corpus: CORPUS,
        path: shown,
        title: note.note_title,
        kind: "note",
        content,
        fromLine: note.start_line,
        lineCount: lines,
        totalLines: note.total_lines,
        ...more, // truncated, nextFrom: OpenClaw hands them on beside its own memory's (memory_get's contract)
        provenanceLabel: PROVENANCE,
        sourceType: SOURCE_TYPE,
        sourcePath: note.note_path,
        ...(note.vault ? { vault: note.vault } : {}),
        ...(note.date ? { updatedAt: note.date } : {}),
        sensitiveCategories: note.sensitive_categories,
        ...(note.redactions ? { redactions: note.redactions } : {}),
      };
    },
  };
}
