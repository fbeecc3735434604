// A note as the index sees it: its text (the hit's lines marked), its chunks as stored, its links and a
// picture of its neighbourhood in the link graph. Three reads (GET /note, /note/…/chunks, /note/…/links),
// asked at once; each part shows what it got, and says so when its endpoint failed. The text shows rendered
// (markdown.js: built from DOM nodes, never parsed as HTML) or as its numbered lines.
import { get, notePath } from "./api.js";
import { $, append, clear, el, highlighted, obsidianLink, when } from "./dom.js";
import { drawGraph } from "./graph.js";
import { renderMarkdown } from "./markdown.js";
import { go, noteHash } from "./route.js";
import { several, vaultMark, vaultsListed, whenVaultsKnown } from "./vaults.js";

let opener = null; // the element that opened the panel: focus goes back there on close
let current = null; // the note shown: its vault and path
let pending = null; // the hit a result's title opens (its words to mark), until its address is shown
let shownNote = null; // the note answer and hit shown: shown again with its vault's mark once the vaults are known

whenVaultsKnown(() => {
  if (shownNote && current && !$("note-panel").hidden) renderNote(...shownNote);
});

/** Go to a note's address (a history entry); its lines and words marked when it is a search hit. `vault`:
 * the vault it is of, named in the address only when the service serves several (one vault: as before). */
export function showNote(path, hit = null, vault = null) {
  pending = hit ? { path, ...hit } : null;
  // before /index/status has said how many vaults there are, the vault given is kept: the same path may be
  // in another vault too, and a note opened without it could be the other's (or NOTE_AMBIGUOUS)
  const named = several() || !vaultsListed() ? vault : null;
  go(noteHash(path, hit ? { start: hit.start, end: hit.end } : null, named));
}

/** The note an address names (`lines`: the hit's, from the address; `vault`: null when it names none). */
export function noteFromRoute(path, lines, vault = null) {
  const hit = lines ? { ...lines, terms: [] } : {};
  if (pending && pending.path === path && lines && pending.start === lines.start && pending.end === lines.end) hit.terms = pending.terms ?? [];
  pending = null;
  if (current?.path === path && current.vault === vault && !$("note-panel").hidden && !lines) return;
  openNote(path, hit, vault);
}

export async function openNote(path, hit = {}, vault = null) {
  if (!$("note-panel").contains(document.activeElement)) opener = document.activeElement;
  const shown = { path, vault };
  current = shown;
  const panel = $("note-panel");
  panel.hidden = false;
  $("note-title").textContent = path;
  clear($("note-meta")).append("Loading…");
  clear($("note-text"));
  clear($("note-rendered"));
  clear($("note-graph"));
  clear($("note-links"));
  clear($("note-chunks"));
  const [note, chunks, links] = await Promise.allSettled([
    get(notePath(path, "", vault)),
    get(notePath(path, "/chunks", vault)),
    get(notePath(path, "/links", vault)),
  ]);
  if (current !== shown) return; // another note was opened meanwhile
  renderNote(note, hit);
  renderChunks(chunks);
  renderLinks(links);
  $("note-title").focus();
}

export function closeNote() {
  const panel = $("note-panel");
  if (panel.hidden) return false;
  panel.hidden = true;
  current = null;
  if (opener && document.contains(opener)) opener.focus();
  return true;
}

function failure(result, what) {
  return el("p", { class: "warn" }, `${what}: ${result.reason?.message ?? "failed"}`);
}

function renderNote(result, hit) {
  shownNote = [result, hit];
  const meta = clear($("note-meta"));
  const link = clear($("note-obsidian"));
  if (result.status !== "fulfilled") {
    meta.append(failure(result, "The note could not be read"));
    return;
  }
  const note = result.value;
  $("note-title").textContent = note.note_title || note.note_path;
  append(meta, [
    vaultMark(note.vault),
    el("span", { class: "path" }, note.note_path),
    ` · ${note.total_lines} lines · ${note.size_bytes} bytes · modified ${when(note.modified)}`,
    note.date ? ` · dated ${note.date}` : "",
    note.tags?.length ? ` · #${note.tags.join(" #")}` : "",
    note.aliases?.length ? ` · also called ${note.aliases.join(", ")}` : "",
    note.redactions ? el("span", { class: "warn" }, ` · ${note.redactions} secret(s) redacted`) : "",
  ]);
  link.append(obsidianLink(note.obsidian_uri));
  const first = note.start_line || 1;
  const rendered = clear($("note-rendered"));
  rendered.append(renderMarkdown(note.content, { firstLine: first, terms: hit.terms ?? [], hit: hit.start !== undefined ? hit : null, vault: linksVault(note) }));
  const renderedHit = rendered.querySelector(".hit");
  const list = clear($("note-text"));
  const lines = note.content.split("\n");
  if (lines.length && lines.at(-1) === "" && note.content.endsWith("\n")) lines.pop();
  let firstHit = null;
  lines.forEach((line, offset) => {
    const number = first + offset;
    const inHit = hit.start !== undefined && number >= hit.start && number <= hit.end;
    const item = el("li", { value: String(number), class: inHit ? "hit" : null }, inHit ? highlighted(line, hit.terms) : line);
    if (inHit) {
      item.setAttribute("aria-label", `line ${number}, in the search hit`);
      firstHit ??= item;
    }
    list.append(item);
  });
  scrollTo(list, firstHit);
  scrollTo(rendered, renderedHit);
}

// the hit a third down its box, scrolling the box only (scrollIntoView would move the whole page too)
function scrollTo(box, target) {
  if (target && !box.hidden) box.scrollTop = Math.max(0, target.offsetTop - box.clientHeight / 3);
}

/** Rendered text, or the numbered lines as written (the button pressed). */
export function toggleNoteView() {
  const button = $("note-view");
  const lines = button.getAttribute("aria-pressed") !== "true";
  button.setAttribute("aria-pressed", String(lines));
  $("note-text").hidden = !lines;
  $("note-rendered").hidden = lines;
  scrollTo(lines ? $("note-text") : $("note-rendered"), (lines ? $("note-text") : $("note-rendered")).querySelector(".hit"));
}

function renderChunks(result) {
  const box = $("note-chunks");
  if (result.status !== "fulfilled") {
    box.append(failure(result, "The stored chunks could not be read"));
    return;
  }
  const chunks = result.value.chunks ?? [];
  if (result.value.current === false) {
    box.append(el("p", { class: "warn" }, "The file changed since it was indexed: these chunks are the index's, not the file's as it is now."));
  }
  if (!chunks.length) {
    box.append(el("p", { class: "meta" }, "The index holds no chunk of this note."));
    return;
  }
  for (const chunk of chunks) {
    box.append(
      el(
        "details",
        { class: "chunk" },
        el(
          "summary",
          {},
          `#${chunk.chunk_index} · lines ${chunk.start_line}–${chunk.end_line}`,
          chunk.heading_context ? ` · ${chunk.heading_context}` : "",
        ),
        el(
          "p",
          { class: "meta" },
          `tags: ${chunk.tags?.length ? chunk.tags.join(", ") : "none"} · date: ${chunk.date ?? "none"} · ` +
            `language: ${chunk.language ?? "unknown"} · id ${chunk.chunk_id}`,
        ),
        el("p", { class: "meta" }, "The text that was embedded:"),
        el("pre", { class: "embedded" }, chunk.embedded_text),
      ),
    );
  }
}

// the vault a note's links open notes in: its own (links never cross vaults); null with one vault
const linksVault = (note) => (several() ? (note.vault ?? current?.vault ?? null) : null);

function noteButton(path, label, vault) {
  const button = el("button", { type: "button", class: "link" }, label || path);
  button.addEventListener("click", () => showNote(path, null, vault));
  return button;
}

function renderLinks(result) {
  const box = $("note-links");
  const graph = $("note-graph");
  if (result.status !== "fulfilled") {
    box.append(failure(result, "The links could not be read"));
    return;
  }
  const links = result.value;
  const vault = linksVault(links);
  const group = (title, items, render) =>
    el("div", {}, el("h4", {}, `${title} (${items.length})`), items.length ? el("ul", { class: "plain" }, items.map(render)) : el("p", { class: "meta" }, "none"));
  append(box, [
    group("Links to", links.outlinks ?? [], (l) => el("li", {}, noteButton(l.note_path, l.note_title, vault), ` · line ${l.line}`)),
    group("Linked from", links.backlinks ?? [], (l) => el("li", {}, noteButton(l.note_path, l.note_title, vault), ` · line ${l.line}`)),
    group("Unresolved (no such note yet)", links.unresolved ?? [], (l) => el("li", {}, el("span", { class: "unresolved" }, l.target), ` · line ${l.line}`)),
  ]);
  graph.append(drawGraph(links, (path) => showNote(path, null, vault)));
}
