// The page's addresses, in the URL's hash so the service serves one page for all of them:
//   #/search?q=…&mode=…&folder=…&tag=…&from=…&to=…&k=…&explain=1   a search (the form as asked)
//   #/note/<path>?lines=12-18                                      a note (the hit's lines marked)
//   #/index  #/recall  #/notes                                     a tab
// With several vaults, a tab's address (a search's too) carries the vaults picked (`vaults=work,personal`;
// none: all) and a note's the vault it is of (`vault=work`), so two vaults' notes of one path differ.
// Each step (a search, a note opened, a tab) is a new history entry, so back and forward move between them
// and a copied address opens the same thing in a fresh page.

export const TABS = ["search", "index", "recall", "notes"];

/** The route of a hash: {view: "note", path, lines} or {view: tab, params}. */
export function parse(hash = location.hash) {
  const raw = hash.replace(/^#/, "");
  const cut = raw.indexOf("?");
  const path = cut < 0 ? raw : raw.slice(0, cut);
  const params = new URLSearchParams(cut < 0 ? "" : raw.slice(cut + 1));
  if (path.startsWith("/note/") && path.length > 6) {
    let note;
    try {
      note = path.slice(6).split("/").map(decodeURIComponent).join("/");
    } catch {
      note = path.slice(6);
    }
    const lines = /^(\d+)-(\d+)$/.exec(params.get("lines") ?? "");
    const vault = params.get("vault") || null;
    return { view: "note", path: note, vault, lines: lines ? { start: Number(lines[1]), end: Number(lines[2]) } : null };
  }
  const name = path.replace(/^\//, "");
  return { view: TABS.includes(name) ? name : "search", params };
}

export function noteHash(path, lines = null, vault = null) {
  const base = `#/note/${path.split("/").map(encodeURIComponent).join("/")}`;
  const params = new URLSearchParams();
  if (vault) params.set("vault", vault);
  if (lines) params.set("lines", `${lines.start}-${lines.end}`);
  return params.size ? `${base}?${params}` : base;
}

/** `hash` (a tab's or a search's) with `vaults` set to `param`, or without it when null (all). */
export function withVaults(hash, param) {
  const cut = hash.indexOf("?");
  const params = new URLSearchParams(cut < 0 ? "" : hash.slice(cut + 1));
  if (param) params.set("vaults", param);
  else params.delete("vaults");
  const base = cut < 0 ? hash : hash.slice(0, cut);
  return params.size ? `${base}?${params}` : base;
}

let onChange = () => {};

/** Call `apply` whenever the address changes: back, forward, a typed or pasted address, or `go`. */
export function listen(apply) {
  onChange = apply;
  window.addEventListener("hashchange", () => onChange());
}

/** Go to `hash`: a new history entry, or, when it is the address already shown, `same()` (e.g. search again).
 * An entry of a note remembers how many notes were opened in a row from the page since the last other
 * address (`notes`; null when the row began at a note opened from outside), so closing goes back there. */
export function go(hash, same = null) {
  if (location.hash === hash) {
    if (same) same();
    else onChange();
    return;
  }
  const here = parse().view === "note" ? (history.state?.notes ?? null) : 0;
  const notes = !hash.startsWith("#/note/") ? 0 : here === null ? null : here + 1;
  history.pushState({ notes }, "", hash);
  onChange();
}

/** Leave a note's address for `base`: back through the notes the page opened in a row, else a new entry. */
export function leaveNote(base) {
  if (parse().view !== "note") return;
  const notes = history.state?.notes;
  if (notes > 0) history.go(-notes);
  else go(base);
}
