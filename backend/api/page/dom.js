// Building the page from data without ever parsing data as HTML: every piece of note text becomes a text node
// (createTextNode / textContent), so `<script>`, `<img onerror=…>` or a fake fence in a note is shown, not run.

export const $ = (id) => document.getElementById(id);

/** An element with attributes (never `on…` handlers, never HTML) and children (strings become text nodes). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

const SVG = "http://www.w3.org/2000/svg";
export function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function escaped(term) {
  return term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `text` as text nodes with each of `terms` (as written in it) wrapped in <mark>: split by a pattern, never
 * by inserting markup into a string. */
export function highlighted(text, terms) {
  const words = [...new Set((terms ?? []).filter((t) => t && t.trim()))].sort((a, b) => b.length - a.length);
  const out = document.createDocumentFragment();
  if (!words.length) {
    out.append(document.createTextNode(text));
    return out;
  }
  // a term counts where it is not inside a longer word (letters or digits on either side)
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(${words.map(escaped).join("|")})(?![\\p{L}\\p{N}])`, "giu");
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) out.append(document.createTextNode(text.slice(last, match.index)));
    out.append(el("mark", {}, match[0]));
    last = match.index + match[0].length;
  }
  if (last < text.length) out.append(document.createTextNode(text.slice(last)));
  return out;
}

/** An `obsidian://` link, or a plain span when the service's URI is anything else (never `javascript:`). */
export function obsidianLink(uri, label = "Open in Obsidian") {
  if (typeof uri === "string" && uri.startsWith("obsidian://")) {
    return el("a", { href: uri, class: "obsidian" }, label);
  }
  return el("span", { class: "meta" }, "(no Obsidian link)");
}

export function number(value, digits = 3) {
  return typeof value === "number" ? value.toFixed(digits) : "—";
}

export function when(iso) {
  if (!iso) return "never";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString();
}

let alertTimer = null;
/** Show a failure as the service explained it: what went wrong and what to do about it. `source` names what
 * failed ("search", "key", …) so that a later success of the same thing can take the message away. */
export function showError(error, what = "", source = "") {
  const box = $("alert");
  clear(box);
  const detail = error?.message ?? String(error);
  append(box, [
    el("strong", {}, what ? `${what}: ` : ""),
    detail,
    error?.suggestion ? el("span", { class: "suggestion" }, ` — ${error.suggestion}`) : null,
    " ",
    el("button", { type: "button", class: "quiet", id: "alert-close" }, "Dismiss"),
  ]);
  box.dataset.source = error?.status === 401 ? "key" : source;
  box.hidden = false;
  $("alert-close").addEventListener("click", () => {
    box.hidden = true;
  });
  clearTimeout(alertTimer);
}

/** Hide the error bar when it shows a failure of `source` (which has just succeeded). */
export function clearError(source) {
  const box = $("alert");
  if (!box.hidden && box.dataset.source === source) box.hidden = true;
}

export function showMessage(text) {
  const box = $("alert");
  clear(box);
  append(box, [text, " ", el("button", { type: "button", class: "quiet", id: "alert-close" }, "Dismiss")]);
  box.dataset.source = "message";
  box.hidden = false;
  $("alert-close").addEventListener("click", () => {
    box.hidden = true;
  });
  clearTimeout(alertTimer);
  alertTimer = setTimeout(() => {
    box.hidden = true;
  }, 8000);
}

/** A button copying `text()` (navigator.clipboard; else a selected hidden field and the copy command), saying
 * "Copied" for a moment, or that it could not. */
export function copyButton(label, text, what) {
  const button = el("button", { type: "button", class: "copy quiet", title: what ? `${label}: ${what}` : label, "aria-live": "polite" }, label);
  let timer = null;
  button.addEventListener("click", async () => {
    const value = text();
    let done = false;
    try {
      await navigator.clipboard.writeText(value);
      done = true;
    } catch {
      const field = el("textarea", { class: "offscreen", readonly: true, "aria-hidden": "true" });
      field.value = value;
      document.body.append(field);
      field.select();
      try {
        done = document.execCommand("copy");
      } catch {
        done = false;
      }
      field.remove();
      button.focus();
    }
    button.textContent = done ? "Copied" : "Could not copy";
    button.dataset.copied = String(done);
    clearTimeout(timer);
    timer = setTimeout(() => {
      button.textContent = label;
      delete button.dataset.copied;
    }, 2500);
  });
  return button;
}
