// The index at a glance: /index/status for a person, asked again on its own while the panel is shown (every
// few seconds, faster while a job runs; never while the panel or the browser tab is hidden), failed files,
// unresolved links one page at a time, and the sync and rebuild buttons (the API's rules: the key where one
// is configured, 409 while another job runs).
import { get, post } from "./api.js";
import { $, append, clear, el, showError, showMessage, when } from "./dom.js";

const POLL_MS = 400; // while a job runs: a rebuild of a few hundred notes moves visibly at this pace
const WATCH_MS = 4000; // while the panel is shown: the watcher's backlog and the figures follow the service
const PAGE = 50;
let polling = null;
let watching = false; // the index panel is shown
let unresolvedOffset = 0;
let last = null;

const visible = () => document.visibilityState === "visible";

/** The index panel was shown (true) or hidden (false): refresh now and every few seconds, or stop. */
export function watchStatus(on) {
  const was = watching;
  watching = on;
  if (on && !was) refreshStatus().catch(() => {});
  else if (!on && was && !running(last?.job)) {
    clearTimeout(polling);
    polling = null;
  }
}

document.addEventListener("visibilitychange", () => {
  if (!visible()) {
    clearTimeout(polling);
    polling = null;
  } else if (watching || running(last?.job)) {
    refreshStatus().catch(() => {});
  }
});

const running = (job) => Boolean(job) && !job.finished_at;

export async function refreshStatus() {
  let status;
  try {
    status = await get("/index/status");
  } catch (error) {
    $("summary").textContent = `Status unavailable: ${error.message}`;
    $("summary").dataset.failed = String(error.status ?? "");
    if (error.status === 401) clearTimeout(polling); // not again until a key is given (it would ask again)
    else schedule(null);
    throw error;
  }
  delete $("summary").dataset.failed;
  last = status;
  render(status);
  schedule(status);
  return status;
}

function schedule(status) {
  clearTimeout(polling);
  polling = null;
  if (!visible()) return; // asked again when the tab is shown
  const wait = running(status?.job) ? POLL_MS : watching ? WATCH_MS : 0;
  if (wait) polling = setTimeout(() => refreshStatus().catch(() => {}), wait);
}

function render(status) {
  const model = status.embedder?.state === "off" ? "keyword only" : status.index_model;
  $("summary").textContent =
    `${status.indexed_notes} notes · ${status.indexed_chunks} chunks · ${model}` +
    (running(status.job) ? ` · ${status.job.kind} running` : "");
  renderJob(status.job);
  renderFacts(status);
  const failed = clear($("failed-files"));
  for (const file of status.failed_files ?? []) failed.append(el("li", {}, el("span", { class: "path" }, file.path), ` — ${file.reason}`));
  if (!status.failed_files?.length) failed.append(el("li", { class: "meta" }, "none"));
}

function renderJob(job) {
  const text = $("job-text");
  const bar = $("job-progress");
  if (!job) {
    text.textContent = "No job has run since the service started.";
    bar.max = 1;
    bar.value = 0;
    return;
  }
  const counts = (job.total ? `${job.done} of ${job.total} notes` : "") + (running(job) ? vectorsLeft(job) : "");
  const state = running(job) ? `${job.kind}: ${job.phase}${counts ? `, ${counts}` : ""}` : `last ${job.kind}: ${job.phase}`;
  text.textContent =
    state +
    (job.detail ? ` — ${job.detail}` : "") +
    (job.error ? ` — ${job.error}` : "") +
    (job.finished_at ? ` (finished ${when(job.finished_at)})` : ` (started ${when(job.started_at)})`);
  if (running(job) && !job.total) {
    bar.removeAttribute("value"); // indeterminate: the phase has no count yet
  } else {
    bar.max = Math.max(job.total, 1);
    bar.value = running(job) ? job.done : bar.max;
  }
  $("sync-button").disabled = running(job);
  $("rebuild-button").disabled = running(job);
}

// "; 40,112 vectors left, about 9 min" while a pass embeds (both figures from the job, the time once known)
function vectorsLeft(job) {
  if (job.vectors_left == null || job.phase !== "embedding") return "";
  const eta = job.eta_seconds == null ? "" : `, about ${duration(job.eta_seconds)}`;
  return `; ${job.vectors_left.toLocaleString("en")} vectors left${eta}`;
}

function duration(seconds) {
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

function fact(name, ...value) {
  return [el("dt", {}, name), el("dd", {}, ...value)];
}

// Which weights judge each hit's confidence, as /index/status says (docs/api.md, "The calibration in force").
function calibrationText(gate) {
  if (!gate) return "—";
  switch (gate.source) {
    case "shipped": return `shipped weights for ${gate.model}`;
    case "fitted": return `fitted for ${gate.model} on this vault (${gate.chunks} chunks, ${gate.probes} probe turns, ${when(gate.fitted_at)})`;
    case "fitting": return `fitting a gate for ${gate.model} on this vault; keyword-only weights meanwhile`;
    default: return "keyword-only weights";
  }
}

// an instruction as sent before each text (a model served over HTTP), or that none is
function quoted(instruction) {
  return instruction ? JSON.stringify(instruction) : "none";
}

function renderFacts(status) {
  const languages = status.languages
    ? Object.entries(status.languages.shares)
        .map(([lang, share]) => `${lang} ${Math.round(share * 100)}%`)
        .join(", ")
    : "not sampled yet";
  const embedder = status.embedder ?? {};
  append(clear($("status-facts")), [
    fact("Notes", `${status.indexed_notes} indexed`, status.unindexed_files ? `, ${status.unindexed_files} on disk not indexed` : ""),
    fact("Chunks", String(status.indexed_chunks), status.dense_pending ? ` (${status.dense_pending} notes searchable by keyword only so far)` : ""),
    fact("Model", status.embedder?.state === "off" ? "none: keyword only (EMBEDDING_PROVIDER=none)" : `${status.index_model}${status.index_dimension ? ` (${status.index_dimension} dimensions)` : ""}`, status.model_change ? el("span", { class: "warn" }, ` — ${status.model_change}`) : ""),
    fact(
      "Embedder",
      `${embedder.provider}: ${embedder.state}`,
      embedder.reason ? ` — ${embedder.reason}` : "",
      embedder.error ? el("span", { class: "warn" }, ` — ${embedder.error.detail} ${embedder.error.suggestion}`) : "",
    ),
    embedder.query_instruction == null
      ? null
      : fact("Instructions", `query: ${quoted(embedder.query_instruction)} · document: ${quoted(embedder.document_instruction)}`),
    fact("Languages", languages),
    fact("Recall calibration", calibrationText(status.recall_calibration)),
    fact(
      "Watcher",
      status.watcher_running ? "watching the vault" : "not watching",
      status.pending_changes ? `, ${status.pending_changes} changes waiting` : "",
      status.watcher_error ? el("span", { class: "warn" }, ` — ${status.watcher_error}`) : "",
    ),
    fact("Last sync", when(status.last_sync)),
    fact("Last change indexed", when(status.last_indexed)),
    fact("Links", `${status.links.total} (${status.links.resolved} resolved, ${status.links.unresolved} unresolved, ${status.links.embeds} embeds)`),
    fact("Vault", el("span", { class: "path" }, status.vault_path)),
    fact("Store", status.store, status.store_healthy ? "" : el("span", { class: "warn" }, " — unreachable")),
    fact("Generation", status.generation ?? "—"),
  ]);
}

export async function startJob(kind) {
  try {
    await post(`/index/${kind}`);
    showMessage(kind === "rebuild" ? "Rebuild started: searches answer from the current index until it switches." : "Sync started.");
  } catch (error) {
    showError(error, error.status === 409 ? "Not now" : `Could not start the ${kind}`);
  }
  await refreshStatus().catch(() => {});
}

export async function loadUnresolved(offset = unresolvedOffset) {
  const list = clear($("unresolved"));
  try {
    const page = await get(`/links/unresolved?limit=${PAGE}&offset=${Math.max(0, offset)}`);
    unresolvedOffset = Math.max(0, offset);
    $("unresolved-total").textContent = page.total
      ? `${page.total} links to notes that do not exist yet; ${unresolvedOffset + 1}–${unresolvedOffset + page.items.length} shown.`
      : "Every link finds its note.";
    for (const item of page.items) list.append(el("li", {}, el("span", { class: "path" }, item.source_path), " → ", el("span", { class: "unresolved" }, item.target), item.line ? ` (line ${item.line})` : ""));
    $("unresolved-prev").disabled = unresolvedOffset === 0;
    $("unresolved-next").disabled = page.next_offset === null;
  } catch (error) {
    $("unresolved-total").textContent = `Unresolved links unavailable: ${error.message}`;
    $("unresolved-prev").disabled = true;
    $("unresolved-next").disabled = true;
  }
}

export function pageUnresolved(step) {
  return loadUnresolved(unresolvedOffset + step * PAGE);
}
