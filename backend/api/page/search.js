// The search panel: the question with the filters /search takes, the results with their matched words, and,
// on demand, why each ranks where it does. The explain data costs a second search, so it is asked for only
// when a why-panel opens, "why not" is asked, or "explain every search" is ticked.
import { post } from "./api.js";
import { $, append, clear, clearError, copyButton, el, number, obsidianLink, showError } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { showNote } from "./note.js";
import { go, withVaults } from "./route.js";
import { askedVaults, pickedParam, showMissing, vaultMark, whenVaultsKnown } from "./vaults.js";

// shown: the address of the search whose results are on the page (null: none, or it failed)
const state = { body: null, answer: null, explained: null, explaining: null, shown: null };

// results shown before the vaults were known (a reload) get their vaults' marks
whenVaultsKnown(() => {
  if (state.answer) render(state.answer);
});

function listOf(text) {
  return text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
}

function searchBody() {
  const body = {
    query: $("q").value.trim(),
    mode: $("mode").value,
    top_k: Math.min(50, Math.max(1, Number($("top-k").value) || 10)),
  };
  const folders = listOf($("folders").value);
  const tags = listOf($("tags").value);
  if (folders.length) body.folders = folders;
  if (tags.length) body.tags = tags;
  if ($("date-from").value) body.date_from = $("date-from").value;
  if ($("date-to").value) body.date_to = $("date-to").value;
  const vaults = askedVaults();
  if (vaults) body.vaults = vaults; // left out: every vault
  return body;
}

/** The address of the search the form holds: `#/search?q=…&mode=…` and the filters set. */
export function searchHash() {
  const body = searchBody();
  if (!body.query) return withVaults("#/search", pickedParam());
  const params = new URLSearchParams({ q: body.query, mode: body.mode });
  if (body.folders) params.set("folder", body.folders.join(","));
  if (body.tags) params.set("tag", body.tags.join(","));
  if (body.date_from) params.set("from", body.date_from);
  if (body.date_to) params.set("to", body.date_to);
  if (body.top_k !== 10) params.set("k", String(body.top_k));
  if ($("explain-always").checked) params.set("explain", "1");
  if (pickedParam()) params.set("vaults", pickedParam());
  return `#/search?${params}`;
}

/** The form as an address says (a shared link, back or forward). */
function fillForm(params) {
  $("q").value = params.get("q") ?? "";
  const mode = params.get("mode");
  $("mode").value = ["hybrid", "keyword", "dense"].includes(mode) ? mode : "hybrid";
  $("folders").value = params.get("folder") ?? "";
  $("tags").value = params.get("tag") ?? "";
  $("date-from").value = params.get("from") ?? "";
  $("date-to").value = params.get("to") ?? "";
  $("top-k").value = params.get("k") ?? "10";
  $("explain-always").checked = params.get("explain") === "1";
  if (params.get("folder") || params.get("tag") || params.get("from") || params.get("to") || params.get("k")) $("filters").open = true;
}

/** The form was sent: a new address (the search runs when it is shown), or the same search again. */
export function submitSearch() {
  if (!$("q").value.trim()) return;
  go(searchHash(), runSearch);
}

/** Show the search an address names: nothing to do when its results are already on the page. */
export function showSearch(params) {
  if (!params.get("q")) return;
  fillForm(params);
  const hash = searchHash();
  if (state.shown === hash || state.running === hash) return;
  runSearch();
}

export function shownSearch() {
  return state.shown;
}

function clearResults() {
  state.shown = null;
  state.answer = null;
  state.body = null;
  state.explained = null;
  clear($("search-meta"));
  clear($("results"));
  clear($("related"));
  showMissing($("search-missing"), []);
  $("explain-overview").hidden = true;
  $("why-not-answer").hidden = true;
  $("score-legend").hidden = true;
}

export async function runSearch() {
  const body = searchBody();
  if (!body.query) return;
  const hash = searchHash();
  const explain = $("explain-always").checked;
  state.running = hash;
  $("search-button").disabled = true;
  $("search-meta").textContent = "Searching…";
  try {
    const answer = await post("/search", explain ? { ...body, explain: true } : body);
    if (state.running !== hash) return; // another search was asked meanwhile
    state.body = body;
    state.answer = answer;
    state.explained = explain ? answer : null;
    state.explaining = null;
    state.shown = hash;
    // an address typed or shared in another spelling becomes the page's own (no new history entry)
    if (location.hash.startsWith("#/search") && location.hash !== hash) history.replaceState(history.state, "", hash);
    $("why-not-answer").hidden = true;
    clearError("search");
    render(answer);
  } catch (error) {
    if (state.running !== hash) return;
    // the results shown were of another question: a failed search never leaves them standing
    clearResults();
    $("search-meta").append(el("p", { class: "warn" }, `Search failed: ${error.message}`));
    showError(error, "Search failed", "search");
  } finally {
    if (state.running === hash) state.running = null;
    $("search-button").disabled = false;
  }
}

/** The same search again with the explain data (once per search; the answer is kept). */
async function explained(whyNot) {
  if (!state.body) throw new Error("search first: the explanation is of a search's results");
  if (whyNot) {
    const body = state.body;
    const answer = await post("/search", { ...body, explain: true, why_not: whyNot });
    if (state.body === body) state.explained = answer;
    return answer;
  }
  if (state.explained) return state.explained;
  const body = state.body;
  state.explaining ??= post("/search", { ...body, explain: true }).then((answer) => {
    if (state.body === body) state.explained = answer; // not when another search came in meanwhile
    return answer;
  });
  try {
    return await state.explaining;
  } finally {
    state.explaining = null;
  }
}

function render(answer) {
  const meta = $("search-meta");
  clear(meta);
  const results = answer.results ?? [];
  append(meta, [
    `${results.length} result${results.length === 1 ? "" : "s"} of ${answer.total_hits} candidates · ` +
      `mode ${answer.mode} · ${number(answer.search_time_ms, 1)} ms`,
    answer.status !== "healthy" ? el("span", { class: "warn" }, ` · ${answer.status}`) : null,
    answer.time_intent
      ? el("span", {}, ` · "${answer.time_intent.text}" read as ${answer.time_intent.start} to ${answer.time_intent.end}`)
      : null,
  ]);
  for (const warning of answer.warnings ?? []) append(meta, [el("p", { class: "warn" }, warning)]);
  showMissing($("search-missing"), answer.missing_vaults);
  $("score-legend").hidden = !results.length;
  const list = clear($("results"));
  results.forEach((result, index) => list.append(resultItem(result, index, answer)));
  if (!results.length) list.append(el("li", { class: "empty" }, "Nothing matched. Try another mode or fewer filters."));
  renderRelated(answer.related_notes ?? []);
  renderOverview(state.explained);
  fillNoteChoices(answer);
}

function resultItem(result, index, answer) {
  const whyId = `why-${index}`;
  const open = el("button", { type: "button", class: "link title" }, result.note_title || result.note_path);
  open.addEventListener("click", () =>
    showNote(result.note_path, { start: result.start_line, end: result.end_line, terms: result.highlights }, result.vault),
  );
  const citation = `${result.note_path}:${result.start_line}-${result.end_line}`;
  const why = el("button", { type: "button", class: "why-button", "aria-expanded": "false", "aria-controls": whyId }, "Why here?");
  const panel = el("div", { id: whyId, class: "why", hidden: true, tabindex: "-1" });
  why.addEventListener("click", () => toggleWhy(why, panel, result, answer));
  const confidence = el("meter", { min: "0", max: "1", low: "0.4", optimum: "1", value: String(result.confidence) });
  return el(
    "li",
    { class: "result", "data-chunk": result.chunk_id },
    el("h3", {}, el("span", { class: "rank" }, `${index + 1}.`), " ", open),
    el(
      "p",
      { class: "where" },
      vaultMark(result.vault),
      el("span", { class: "path" }, result.note_path),
      result.heading_context ? ` › ${result.heading_context}` : "",
      ` · lines ${result.start_line}–${result.end_line}`,
      result.date ? ` · ${result.date}` : "",
      result.tags?.length ? ` · #${result.tags.join(" #")}` : "",
      result.saved_from ? el("span", { class: "meta" }, ` · saved from ${result.saved_from}`) : "",
    ),
    el("div", { class: "content markdown" }, renderMarkdown(result.content, { firstLine: result.start_line, terms: result.highlights })),
    el(
      "p",
      { class: "scores" },
      `score ${number(result.score)} · confidence ${number(result.confidence, 2)} `,
      confidence,
      result.pointed_from
        ? el("span", { class: "meta" }, ` · brought here by ${result.pointed_from.note_path}:${result.pointed_from.start_line}`)
        : null,
      result.sensitive_categories?.length
        ? el("span", { class: "warn" }, ` · sensitive: ${result.sensitive_categories.join(", ")}`)
        : null,
    ),
    el("p", { class: "actions" }, why, " ", copyButton("Copy citation", () => citation, citation), " ", obsidianLink(result.obsidian_uri)),
    panel,
  );
}

async function toggleWhy(button, panel, result, answer) {
  const opening = button.getAttribute("aria-expanded") !== "true";
  button.setAttribute("aria-expanded", String(opening));
  panel.hidden = !opening;
  if (!opening) return;
  clear(panel).append(el("p", { class: "meta" }, "Asking the service why…"));
  try {
    const full = await explained();
    renderOverview(full);
    const same = (full.results ?? []).find((r) => r.chunk_id === result.chunk_id);
    clear(panel);
    if (!same?.why) {
      panel.append(el("p", { class: "warn" }, "The explained search no longer returns this chunk (the index changed): search again."));
    } else {
      panel.append(whyOf(same, full));
    }
  } catch (error) {
    clear(panel).append(el("p", { class: "warn" }, `No explanation: ${error.message}`));
    if (error.suggestion) panel.append(el("p", { class: "meta" }, error.suggestion));
  }
  panel.focus();
}

// One side of the search for a chunk or note: null when the side was not part of the search (keyword or
// dense mode, no embedder); rank null when it fell beyond the candidates that side keeps. `normalised`: the
// side's 0..1 value as fused, when the service gives it.
function side(label, part, extra = "", normalised = undefined) {
  let text;
  if (!part) text = label.startsWith("Dense") ? "keyword only: no dense side in this search" : "no keyword side in this search";
  else if (part.rank === null) text = `beyond this side's candidates${part.score === null ? "" : ` (score ${number(part.score)})`}`;
  else text = `rank ${part.rank} · score ${number(part.score)}`;
  const scaled = typeof normalised === "number" ? el("span", { class: "normalised" }, ` · normalised ${number(normalised)}`) : null;
  return [el("dt", {}, label), el("dd", {}, text, part ? extra : "", scaled)];
}

// the explain data's additions, where the service gives them (each may be absent)
const normalisedOf = (why, name) => {
  const value = why[`${name}_normalised`] ?? why[name]?.normalised;
  return typeof value === "number" ? value : undefined;
};

/** "fused = w × n + w × n": what the fused score is made of, when the weights and the normalised values are given. */
function fusedSum(why, weights) {
  const dense = normalisedOf(why, "dense");
  const keyword = normalisedOf(why, "keyword");
  if (!weights || (dense === undefined && keyword === undefined)) return null;
  const parts = [];
  let total = 0;
  for (const [name, value] of [["dense", dense], ["keyword", keyword]]) {
    const weight = weights[name];
    if (typeof weight !== "number") continue;
    parts.push(`${number(weight, 2)} × ${number(value ?? 0)} (${name})`);
    total += weight * (value ?? 0);
  }
  return el("span", { class: "fused-sum" }, ` = ${parts.join(" + ")} = ${number(total)}`);
}

// the factor the period applied to this chunk, with the reason the service gives for it (never one made up)
function timeOfQuestion(factor, reason) {
  if (factor === null || factor === undefined) return "no period named in the question";
  const why = typeof reason === "string" && reason ? ` (${reason})` : "";
  if (factor === 1) return `score ×1.00, unchanged${why}`;
  return `score ×${number(factor, 2)}${why}`;
}

function whyOf(result, answer) {
  const why = result.why;
  const terms = why.keyword?.terms?.length ? ` · matched: ${why.keyword.terms.join(", ")}` : "";
  const facts = el(
    "dl",
    { class: "why-facts" },
    side("Dense (meaning)", why.dense, "", normalisedOf(why, "dense")),
    side("Keyword (BM25)", why.keyword, terms, normalisedOf(why, "keyword")),
    el("dt", {}, "Fused"),
    el("dd", {}, why.fused_score === null ? "no fusion (one side only)" : number(why.fused_score), why.fused_score === null ? null : fusedSum(why, answer.explain?.weights)),
    el("dt", {}, "Time of the question"),
    el("dd", {}, timeOfQuestion(why.time_factor, why.time_reason)),
    el("dt", {}, "Ranking rules"),
    el("dd", {}, why.rules?.length ? el("ul", {}, why.rules.map((rule) => el("li", {}, rule))) : "none applied"),
    el("dt", {}, "Confidence"),
    el("dd", {}, number(result.confidence, 2), featureTable(why.confidence_features)),
    el("dt", {}, "OpenClaw's recall"),
    el("dd", { class: why.recall?.quoted ? "good" : "warn" }, recallVerdict(why.recall)),
  );
  return facts;
}

function recallVerdict(recall) {
  if (!recall) return "—";
  if (recall.reason === "quoted") return "would quote it";
  return `${recall.quoted ? "would quote it" : "would not quote it"}: ${recall.reason}`;
}

function featureTable(features) {
  const entries = Object.entries(features ?? {});
  if (!entries.length) return null;
  return el(
    "table",
    { class: "table small" },
    el("caption", {}, "computed from"),
    el("tbody", {}, entries.map(([name, value]) => el("tr", {}, el("th", { scope: "row" }, name), el("td", {}, number(value))))),
  );
}

/** The period the question names, as the explain data gives it (or the answer's time_intent): its text and days. */
function periodOf(answer) {
  const period = answer.explain?.period ?? answer.explain?.time_span ?? answer.explain?.time_intent ?? answer.time_intent;
  if (!period) return null;
  let days = period.days;
  if (typeof days !== "number" && period.start && period.end) {
    const span = (Date.parse(period.end) - Date.parse(period.start)) / 86_400_000 + 1;
    days = Number.isFinite(span) ? Math.round(span) : undefined;
  }
  return `"${period.text ?? "?"}": ${period.start ?? "?"} to ${period.end ?? "?"}${typeof days === "number" ? ` (${days} day${days === 1 ? "" : "s"})` : ""}`;
}

function timeBoost(boost, period) {
  if (boost === null || boost === undefined) return "none: the question names no period";
  if (typeof period?.factor === "number") {
    // the factors the search applied, as the service gives them
    const other = typeof period.other_time_factor === "number" ? `, ×${number(period.other_time_factor, 2)} for one that says it is of another time` : "";
    return `×${number(period.factor, 2)} for a chunk wholly of the period${other}; each hit's own factor is in its why-panel`;
  }
  // the factor applied to a chunk wholly of the period; each hit's own factor is in its why-panel
  return `×${number(1 + boost, 2)} for a chunk wholly of the period (1 + time boost ${number(boost, 2)}); each hit's own factor is in its why-panel`;
}

function renderOverview(answer) {
  const box = $("explain-overview");
  const explain = answer?.explain;
  if (!explain) {
    box.hidden = true;
    return;
  }
  clear(box);
  const weights = explain.weights
    ? `dense ${number(explain.weights.dense, 2)} · keyword ${number(explain.weights.keyword, 2)}`
    : "one side only";
  append(box, [
    el("h3", {}, "How this question was ranked"),
    el(
      "dl",
      { class: "why-facts" },
      el("dt", {}, "Fusion"),
      el("dd", {}, explain.fusion ?? "none (one side only)"),
      el("dt", {}, "Weights"),
      el("dd", {}, weights, explain.cross_language ? " (question in another language than the notes)" : ""),
      el("dt", {}, "Candidates"),
      el("dd", {}, `dense ${explain.candidates?.dense ?? 0} · keyword ${explain.candidates?.keyword ?? 0}`),
      periodOf(answer) ? [el("dt", {}, "Period asked"), el("dd", {}, periodOf(answer))] : null,
      el("dt", {}, "Time boost"),
      el("dd", {}, timeBoost(explain.time_boost, explain.period)),
    ),
    stagesTable(answer.stages),
  ]);
  box.hidden = false;
}

function stagesTable(stages) {
  if (!stages?.length) return null;
  return el(
    "table",
    { class: "table small" },
    el("caption", {}, "Time per stage"),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "stage"), el("th", { scope: "col" }, "ms"))),
    el("tbody", {}, stages.map((s) => el("tr", {}, el("td", {}, s.stage), el("td", {}, number(s.ms, 1))))),
  );
}

function renderRelated(related) {
  const box = clear($("related"));
  if (!related.length) return;
  box.append(el("h3", {}, "Linked to or from the results"));
  const list = el("ul", { class: "plain" });
  for (const note of related) {
    const open = el("button", { type: "button", class: "link" }, note.note_title || note.note_path);
    open.addEventListener("click", () => showNote(note.note_path, null, note.vault));
    list.append(el("li", {}, vaultMark(note.vault), open, ` · ${note.relationship} of ${note.link_count} result${note.link_count === 1 ? "" : "s"}`));
  }
  box.append(list);
}

function fillNoteChoices(answer) {
  const paths = new Set([...(answer.results ?? []).map((r) => r.note_path), ...(answer.related_notes ?? []).map((r) => r.note_path)]);
  const list = $("note-paths");
  for (const option of list.querySelectorAll("option")) paths.add(option.value);
  clear(list);
  for (const path of [...paths].slice(0, 500)) list.append(el("option", { value: path }));
}

export async function whyNot() {
  const path = $("why-not").value.trim();
  if (!path) return;
  const box = $("why-not-answer");
  box.hidden = false;
  clear(box).append(el("p", { class: "meta" }, "Asking the service…"));
  try {
    const answer = await explained(path);
    renderOverview(answer);
    const found = answer.explain?.why_not;
    clear(box);
    if (!found) {
      box.append(el("p", { class: "warn" }, "The service gave no answer about that note."));
      return;
    }
    let title = found.asked ?? found.note_path;
    if (found.indexed && found.note_path) {
      title = el("button", { type: "button", class: "link" }, found.note_title || found.note_path);
      title.addEventListener("click", () => showNote(found.note_path, null, found.vault ?? null));
    }
    const closest = !found.indexed && Array.isArray(found.closest) ? found.closest.filter((name) => typeof name === "string") : [];
    append(box, [
      el("h3", {}, "Why not ", title, "?"),
      el("p", { class: "verdict" }, found.reason),
      closest.length ? el("p", { class: "did-you-mean" }, "Did you mean: ", closest.flatMap((name) => [choice(name), " "])) : null,
      el(
        "dl",
        { class: "why-facts" },
        el("dt", {}, "Indexed"),
        el("dd", {}, found.indexed ? "yes" : "no"),
        // a name no note answers to has no sides, no fusion and no rules: only the closest names above
        found.indexed ? side("Dense (meaning)", found.dense) : null,
        found.indexed ? side("Keyword (BM25)", found.keyword, found.keyword?.terms?.length ? ` · matched: ${found.keyword.terms.join(", ")}` : "") : null,
        found.indexed ? [el("dt", {}, "After fusion"), el("dd", {}, found.fused_rank === null ? "not ranked" : `rank ${found.fused_rank}`)] : null,
        found.indexed && Array.isArray(found.rules) ? [el("dt", {}, "Rules that moved it"), el("dd", {}, found.rules.length ? el("ul", {}, found.rules.map((rule) => el("li", {}, rule))) : "none")] : null,
        found.indexed ? [el("dt", {}, "Final"), el("dd", {}, found.final_rank === null ? "not in the results" : `rank ${found.final_rank}`)] : null,
      ),
    ]);
  } catch (error) {
    clear(box).append(el("p", { class: "warn" }, `No explanation: ${error.message}`));
  }
}

function choice(name) {
  const button = el("button", { type: "button", class: "link" }, name);
  button.addEventListener("click", () => {
    $("why-not").value = name;
    whyNot();
  });
  return button;
}

export function closeOpenWhy() {
  const openButtons = [...document.querySelectorAll('.why-button[aria-expanded="true"]')];
  const active = document.activeElement?.closest?.(".result");
  const target = openButtons.find((b) => b.closest(".result") === active) ?? openButtons.at(-1);
  if (!target) return false;
  target.setAttribute("aria-expanded", "false");
  $(target.getAttribute("aria-controls")).hidden = true;
  target.focus();
  return true;
}
