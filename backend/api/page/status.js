// The index at a glance: /index/status for a person, asked again on its own while the panel is shown (every
// few seconds, faster while a job runs; never while the panel or the browser tab is hidden), failed files,
// unresolved links one page at a time, and the sync and rebuild buttons (the API's rules: the key where one
// is configured, 409 while another job runs). With several vaults: a line per vault (its figures, its job,
// its own sync and rebuild; an unavailable one with its error) and the details of the vault chosen.
import { get, post } from "./api.js";
import { $, append, clear, el, showError, showMessage, when } from "./dom.js";
import { fillVaultSelect, serveVaults, several, whenVaultsKnown } from "./vaults.js";

const POLL_MS = 400; // while a job runs: a rebuild of a few hundred notes moves visibly at this pace
const WATCH_MS = 4000; // while the panel is shown: the watcher's backlog and the figures follow the service
const PAGE = 50;
let polling = null;
let watching = false; // the index panel is shown
let unresolvedOffset = 0;
let unresolvedVault = null; // the vault the unresolved links shown are of (several vaults)
let unresolvedAsked = false; // the index panel asked for them (it was shown)
let last = null;

whenVaultsKnown(() => fillVaultSelect($("status-vault")));

// the vault whose details are shown (null: the only one)
const detailVault = () => (several() ? $("status-vault").value || null : null);
// every vault's state, or the one status as a list of one
const statesOf = (status) => status?.vaults ?? (status ? [{ vault: status.vault, available: true, status }] : []);
const anyRunning = (status) => statesOf(status).some((state) => running(state.status?.job));

const visible = () => document.visibilityState === "visible";

/** The index panel was shown (true) or hidden (false): refresh now and every few seconds, or stop. */
export function watchStatus(on) {
  const was = watching;
  watching = on;
  if (on && !was) refreshStatus().catch(() => {});
  else if (!on && was && !anyRunning(last)) {
    clearTimeout(polling);
    polling = null;
  }
}

document.addEventListener("visibilitychange", () => {
  if (!visible()) {
    clearTimeout(polling);
    polling = null;
  } else if (watching || anyRunning(last)) {
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
  const wait = anyRunning(status) ? POLL_MS : watching ? WATCH_MS : 0;
  if (wait) polling = setTimeout(() => refreshStatus().catch(() => {}), wait);
}

function render(all) {
  serveVaults(all.vaults);
  $("vault-states").hidden = !several();
  $("sync-button").hidden = several(); // each vault's own buttons instead (a job is of one vault)
  $("rebuild-button").hidden = several();
  if (several()) renderVaults(all.vaults);
  summarise(all);
  const chosen = statesOf(all).find((state) => state.vault === detailVault()) ?? statesOf(all)[0];
  if (unresolvedAsked && several() && chosen.vault !== unresolvedVault) loadUnresolved(0);
  if (!chosen.status) {
    // an unavailable vault has no figures: its error instead
    renderJob(null);
    append(clear($("status-facts")), fact("Unavailable", el("span", { class: "warn" }, `${chosen.detail} (${chosen.error_code})`)));
    clear($("failed-files"));
    return;
  }
  const status = chosen.status;
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

function summarise(all) {
  const states = statesOf(all);
  const jobs = states.filter((state) => running(state.status?.job)).map((state) => `${several() ? `${state.vault} ` : ""}${state.status.job.kind} running`);
  if (!several()) {
    const model = all.embedder?.state === "off" ? "keyword only" : all.index_model;
    $("summary").textContent = `${all.indexed_notes} notes · ${all.indexed_chunks} chunks · ${model}` + (jobs.length ? ` · ${jobs[0]}` : "");
    return;
  }
  const up = states.filter((state) => state.status);
  const sum = (field) => up.reduce((total, state) => total + state.status[field], 0);
  const down = states.length - up.length;
  $("summary").textContent =
    `${states.length} vaults · ${sum("indexed_notes")} notes · ${sum("indexed_chunks")} chunks` +
    (down ? ` · ${down} unavailable` : "") +
    jobs.map((job) => ` · ${job}`).join("");
}

// A line per vault: what it holds, its job, its own sync and rebuild; an unavailable vault says why.
function renderVaults(states) {
  const body = clear($("vault-states").tBodies[0]);
  for (const state of states) {
    const name = el("th", { scope: "row" }, state.vault);
    if (!state.status) {
      body.append(el("tr", { class: "unavailable", "data-vault": state.vault }, name, el("td", { colspan: "5", class: "warn" }, `unavailable: ${state.detail} (${state.error_code})`)));
      continue;
    }
    const status = state.status;
    const job = status.job;
    const busy = running(job);
    const jobText = !job ? "none yet" : busy ? `${job.kind}: ${job.phase}${job.total ? `, ${job.done} of ${job.total}` : ""}` : `last ${job.kind}: ${job.phase}`;
    const button = (kind, label) => {
      const b = el("button", { type: "button", class: "quiet", "aria-label": `${label} ${state.vault}`, disabled: busy }, label);
      b.addEventListener("click", () => startJob(kind, state.vault));
      return b;
    };
    body.append(
      el(
        "tr",
        { "data-vault": state.vault },
        name,
        el("td", {}, String(status.indexed_notes)),
        el("td", {}, String(status.indexed_chunks)),
        el("td", {}, String(status.dense_pending)),
        el("td", {}, jobText),
        el("td", {}, button("sync", "Sync"), " ", button("rebuild", "Rebuild")),
      ),
    );
  }
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

/** Start a sync or rebuild (of `vault`, with several). */
export async function startJob(kind, vault = null) {
  try {
    await post(`/index/${kind}${vault ? `?${new URLSearchParams({ vault })}` : ""}`);
    showMessage(kind === "rebuild" ? "Rebuild started: searches answer from the current index until it switches." : "Sync started.");
  } catch (error) {
    showError(error, error.status === 409 ? "Not now" : `Could not start the ${kind}`);
  }
  await refreshStatus().catch(() => {});
}

/** The details shown are of another vault (the select): its figures again, its unresolved links. */
export function showVaultDetails() {
  if (last) render(last);
}

export async function loadUnresolved(offset = unresolvedOffset) {
  unresolvedAsked = true;
  const vault = detailVault();
  unresolvedVault = vault;
  const list = clear($("unresolved"));
  try {
    const params = new URLSearchParams({ limit: String(PAGE), offset: String(Math.max(0, offset)) });
    if (vault) params.set("vault", vault);
    const page = await get(`/links/unresolved?${params}`);
    if (unresolvedVault !== vault) return; // another vault was chosen meanwhile
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
