// A small Markdown renderer that builds DOM nodes (createElement and text nodes only): headings, lists, quotes,
// code, simple tables, emphasis, links and wikilinks. Nothing from a note is ever parsed as HTML: a `<script>` or
// `<img onerror=…>` in a note is a paragraph of text. Only http(s) and obsidian links become clickable; any other
// scheme (javascript:, data:, file:, …) is shown as the text it is. Wikilinks open the note in this page.
import { el, highlighted } from "./dom.js";
import { go, noteHash } from "./route.js";

const SAFE_URL = /^(?:https?|obsidian):/i;
const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const RULE = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$/;

/** The URL when it is one the page may make clickable (http, https, obsidian), else null. */
export function safeUrl(url) {
  const value = String(url ?? "").trim();
  return SAFE_URL.test(value) ? value : null;
}

// inline: code, wikilinks (and embeds), links (and images), bold, strike, highlight, italic — first match wins
const INLINE = new RegExp(
  [
    "(?<code>`+)(?<codeText>[^`]|[^`][\\s\\S]*?[^`])\\k<code>(?!`)",
    "(?<embed>!?)\\[\\[(?<wiki>[^\\]\\n]+?)\\]\\]",
    "(?<image>!?)\\[(?<label>[^\\]\\n]*)\\]\\((?<url>[^()\\s]*(?:\\([^()\\s]*\\)[^()\\s]*)*)(?:\\s+\"[^\"\\n]*\")?\\)",
    "<(?<auto>(?:https?|obsidian):[^\\s<>]+)>",
    "\\*\\*(?<strong>\\S(?:[\\s\\S]*?\\S)?)\\*\\*",
    "__(?<strong2>\\S(?:[\\s\\S]*?\\S)?)__",
    "~~(?<del>\\S(?:[\\s\\S]*?\\S)?)~~",
    "==(?<mark>\\S(?:[\\s\\S]*?\\S)?)==",
    "\\*(?<em>[^*\\s](?:[^*]*?[^*\\s])?)\\*",
    "(?<![\\p{L}\\p{N}_])_(?<em2>[^_\\s](?:[^_]*?[^_\\s])?)_(?![\\p{L}\\p{N}_])",
  ].join("|"),
  "gu",
);

function link(url, label, terms, source) {
  const safe = safeUrl(url);
  if (!safe) {
    // shown as written, never as a link
    return el("span", { class: "unsafe-link", title: "not a link: only http(s) and obsidian links are made clickable" }, source);
  }
  const a = el("a", { class: "external", rel: "noopener noreferrer" });
  a.href = safe;
  if (!safe.toLowerCase().startsWith("obsidian:")) a.target = "_blank";
  a.append(inline(label || safe, terms));
  return a;
}

// the vault the wikilinks of the text being rendered open in (null: the only one); set for one synchronous
// render, so the recursive inline() needs no extra argument
let linkVault = null;

function wikilink(inner, embed, terms) {
  const [target, alias] = inner.split("|");
  const note = target.split("#")[0].trim();
  const text = (alias ?? target).trim();
  if (!note) return el("span", { class: "wikilink" }, inline(text, terms)); // a heading of this note
  const a = el("a", { class: embed ? "wikilink embed" : "wikilink", title: `open ${note}` });
  const hash = noteHash(note, null, linkVault); // a link never leaves its note's vault
  a.href = hash;
  a.append(embed ? "↪ " : "", inline(text, terms));
  a.addEventListener("click", (event) => {
    if (event.button || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return; // a new tab: the browser's
    event.preventDefault();
    go(hash); // a history entry the page counts, so closing the note goes back
  });
  return a;
}

/** Text with its inline Markdown as elements; plain runs marked where they hold `terms`. */
export function inline(text, terms = []) {
  const out = document.createDocumentFragment();
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) out.append(highlighted(text.slice(last, match.index), terms));
    const g = match.groups;
    let node;
    if (g.code !== undefined) node = el("code", {}, g.codeText.trim() || g.codeText);
    else if (g.wiki !== undefined) node = wikilink(g.wiki, g.embed === "!", terms);
    else if (g.url !== undefined) {
      node = g.image === "!" ? link(g.url, `image: ${g.label || g.url}`, terms, match[0]) : link(g.url, g.label, terms, match[0]);
    } else if (g.auto !== undefined) node = link(g.auto, g.auto, terms, match[0]);
    else if (g.strong !== undefined || g.strong2 !== undefined) node = el("strong", {}, inline(g.strong ?? g.strong2, terms));
    else if (g.del !== undefined) node = el("del", {}, inline(g.del, terms));
    else if (g.mark !== undefined) node = el("mark", { class: "md-mark" }, inline(g.mark, terms));
    else node = el("em", {}, inline(g.em ?? g.em2, terms));
    out.append(node);
    last = match.index + match[0].length;
  }
  if (last < text.length) out.append(highlighted(text.slice(last), terms));
  return out;
}

function cells(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function startsBlock(line, next) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line) || isTable(line, next);
}

function isTable(line, next) {
  return line.includes("|") && next !== undefined && next.includes("-") && TABLE_RULE.test(next);
}

/** The blocks of `lines`: [{node, start, end}] with 0-based line offsets (end inclusive). */
function blocks(lines, terms) {
  const out = [];
  let i = 0;
  const add = (node, start, end) => out.push({ node, start, end });
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i += 1;
      continue;
    }
    const start = i;
    const fence = FENCE.exec(line);
    if (fence) {
      const closing = new RegExp(`^\\s{0,3}${fence[1][0] === "`" ? "`" : "~"}{${fence[1].length},}\\s*$`);
      const body = [];
      i += 1;
      while (i < lines.length && !closing.test(lines[i])) body.push(lines[i++]);
      const language = line.trim().slice(fence[1].length).trim();
      add(el("pre", { class: "md-code", "data-language": language || null }, el("code", {}, body.join("\n"))), start, Math.min(i, lines.length - 1));
      i += 1;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      add(el(`h${Math.min(6, heading[1].length + 2)}`, { class: "md-heading" }, inline(heading[2], terms)), start, start);
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      add(el("hr"), start, start);
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && QUOTE.test(lines[i])) inner.push(lines[i++].replace(QUOTE, ""));
      const quote = el("blockquote");
      for (const part of blocks(inner, terms)) quote.append(part.node);
      add(quote, start, i - 1);
      continue;
    }
    if (isTable(line, lines[i + 1])) {
      const head = cells(line);
      i += 2;
      const rows = [];
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) rows.push(cells(lines[i++]));
      add(
        el(
          "div",
          { class: "md-table" },
          el(
            "table",
            { class: "table small" },
            el("thead", {}, el("tr", {}, head.map((cell) => el("th", { scope: "col" }, inline(cell, terms))))),
            el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell) => el("td", {}, inline(cell, terms)))))),
          ),
        ),
        start,
        i - 1,
      );
      continue;
    }
    if (ITEM.test(line)) {
      i = list(lines, i, terms, add);
      continue;
    }
    const text = [];
    while (i < lines.length && lines[i].trim() && (i === start || !startsBlock(lines[i], lines[i + 1]))) text.push(lines[i++].trim());
    const paragraph = el("p");
    text.forEach((part, index) => paragraph.append(index ? el("br") : "", inline(part, terms)));
    add(paragraph, start, i - 1);
  }
  return out;
}

// A list (nested by indentation), each item a block of its own so a search hit marks the item it is in.
function list(lines, i, terms, add) {
  const root = document.createDocumentFragment();
  const stack = []; // [{indent, list}]
  const items = [];
  while (i < lines.length) {
    const match = ITEM.exec(lines[i]);
    if (!match) {
      // a continuation line (indented, not blank) belongs to the item above
      if (items.length && lines[i].trim() && /^\s+/.test(lines[i]) && !startsBlock(lines[i].trim(), lines[i + 1])) {
        const last = items.at(-1);
        last.body.append(el("br"), inline(lines[i].trim(), terms));
        last.end = i;
        i += 1;
        continue;
      }
      break;
    }
    const indent = match[1].replace(/\t/g, "    ").length;
    const ordered = /\d/.test(match[2]);
    while (stack.length && stack.at(-1).indent > indent) stack.pop();
    if (stack.length && stack.at(-1).indent === indent && stack.at(-1).ordered !== ordered) stack.pop(); // another kind of list
    if (!stack.length || stack.at(-1).indent < indent) {
      const node = el(ordered ? "ol" : "ul", { class: "md-list", start: ordered && match[2] !== "1." && match[2] !== "1)" ? parseInt(match[2], 10) : null });
      (stack.length ? stack.at(-1).list.lastElementChild ?? stack.at(-1).list : root).append(node);
      stack.push({ indent, ordered, list: node });
    }
    let text = match[3];
    const task = /^\[([ xX])\]\s+/.exec(text);
    const body = el("span");
    if (task) {
      body.append(el("span", { class: "task", "aria-label": task[1] === " " ? "to do" : "done" }, task[1] === " " ? "☐ " : "☑ "));
      text = text.slice(task[0].length);
    }
    body.append(inline(text, terms));
    const item = el("li", {}, body);
    stack.at(-1).list.append(item);
    items.push({ item, body, start: i, end: i });
    i += 1;
  }
  const wrapper = el("div", { class: "md-list-block" }, root);
  add(wrapper, items[0].start, items.at(-1).end);
  wrapper.mdItems = items; // the items' own lines, for marking a hit
  return i;
}

/**
 * `text` rendered: a fragment of block elements, each with data-start/data-end (its lines in the note, from
 * `firstLine`). With `hit` ({start, end}), the blocks (list items) of those lines get the class `hit` and only
 * they mark `terms`; without it every block marks them. A leading YAML frontmatter shows as plain text.
 * `vault`: the vault its wikilinks open notes in (several vaults).
 */
export function renderMarkdown(text, { firstLine = 1, terms = [], hit = null, vault = null } = {}) {
  linkVault = vault;
  try {
    return rendered(text, firstLine, terms, hit);
  } finally {
    linkVault = null;
  }
}

function rendered(text, firstLine, terms, hit) {
  const lines = String(text ?? "").replace(/\r\n?/g, "\n").split("\n");
  const out = document.createDocumentFragment();
  let from = 0;
  if (firstLine === 1 && lines[0]?.trim() === "---") {
    const close = lines.findIndex((line, index) => index > 0 && /^(---|\.\.\.)\s*$/.test(line));
    if (close > 0) {
      const front = el("pre", { class: "md-frontmatter" }, lines.slice(0, close + 1).join("\n"));
      mark(front, firstLine, firstLine + close, hit);
      out.append(front);
      from = close + 1;
    }
  }
  const inHit = (start, end) => !hit || (hit.start !== undefined && start <= hit.end && hit.start <= end);
  // terms are marked in the hit's blocks only: render blocks once with, once without, and keep each as fits
  const marked = blocks(lines.slice(from), terms);
  const plain = hit && terms.length ? blocks(lines.slice(from), []) : marked;
  marked.forEach((block, index) => {
    const start = firstLine + from + block.start;
    const end = firstLine + from + block.end;
    const node = inHit(start, end) ? block.node : plain[index].node;
    mark(node, start, end, hit);
    for (const item of node.mdItems ?? []) mark(item.item, firstLine + from + item.start, firstLine + from + item.end, hit);
    out.append(node);
  });
  return out;
}

function mark(node, start, end, hit) {
  node.dataset.start = String(start);
  node.dataset.end = String(end);
  // a list is marked item by item
  if (!node.mdItems && hit && hit.start !== undefined && start <= hit.end && hit.start <= end) node.classList.add("hit");
}
