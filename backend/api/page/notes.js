// Every indexed note, one page at a time (GET /notes with limit and offset): a vault of 13k notes is never
// loaded at once. With several vaults, one vault's notes at a time (the list is a vault's, as /notes is).
import { get } from "./api.js";
import { $, clear, el, showError } from "./dom.js";
import { showNote } from "./note.js";
import { fillVaultSelect, several, whenVaultsKnown } from "./vaults.js";

const PAGE = 50;
let offset = 0;
let listed = false; // listed once: listed again when the vaults become known (the first call named none)

whenVaultsKnown(() => {
  fillVaultSelect($("notes-vault"));
  if (listed) listNotes(0);
});

const vault = () => (several() ? $("notes-vault").value || null : null);

function query(at) {
  const params = new URLSearchParams({ limit: String(PAGE), offset: String(at), sort: $("notes-sort").value });
  if ($("notes-folder").value.trim()) params.set("folder", $("notes-folder").value.trim());
  if ($("notes-tag").value.trim()) params.set("tag", $("notes-tag").value.trim().replace(/^#/, ""));
  if (vault()) params.set("vault", vault());
  return `/notes?${params}`;
}

export async function listNotes(at = 0) {
  listed = true;
  const asked = vault(); // the notes listed are of it (a note of the list names no vault)
  let page;
  try {
    page = await get(query(Math.max(0, at)));
  } catch (error) {
    showError(error, "Could not list the notes");
    return;
  }
  offset = page.offset;
  const list = clear($("notes-list"));
  for (const note of page.notes) {
    const open = el("button", { type: "button", class: "link" }, note.note_title || note.note_path);
    open.addEventListener("click", () => showNote(note.note_path, null, asked));
    list.append(
      el("li", {}, open, " ", el("span", { class: "path" }, note.note_path), note.date ? ` · ${note.date}` : "", note.tags.length ? ` · #${note.tags.join(" #")}` : ""),
    );
  }
  $("notes-total").textContent = page.total
    ? `${page.total} notes; ${page.offset + 1}–${page.offset + page.notes.length} shown.` + (page.warnings.length ? ` ${page.warnings.join(" ")}` : "")
    : `No note matches. ${page.warnings.join(" ")}`;
  $("notes-prev").disabled = page.offset === 0;
  $("notes-next").disabled = page.next_offset === null;
}

export const pageNotes = (step) => listNotes(offset + step * PAGE);
