// The page's wiring: tabs, the key dialog, keyboard use (Enter searches, Escape closes what is open), and
// what each panel loads when it is first shown.
import { onKeyNeeded, storedKey, storeKey } from "./api.js";
import { $ } from "./dom.js";
import { closeNote } from "./note.js";
import { listNotes, pageNotes } from "./notes.js";
import { describeSettings, newConversation, preview } from "./recall.js";
import { closeOpenWhy, runSearch, whyNot } from "./search.js";
import { loadUnresolved, pageUnresolved, refreshStatus, startJob } from "./status.js";

const TABS = ["search", "index", "recall", "notes"];
const loaded = new Set();

function showTab(name) {
  for (const tab of TABS) {
    const selected = tab === name;
    $(`tab-${tab}`).setAttribute("aria-selected", String(selected));
    $(`tab-${tab}`).tabIndex = selected ? 0 : -1;
    $(`panel-${tab}`).hidden = !selected;
  }
  if (loaded.has(name)) return;
  loaded.add(name);
  if (name === "index") {
    refreshStatus().catch(() => {});
    loadUnresolved(0);
  } else if (name === "notes") {
    listNotes(0);
  }
}

function wireTabs() {
  TABS.forEach((name, index) => {
    const tab = $(`tab-${name}`);
    tab.addEventListener("click", () => showTab(name));
    // arrow keys move between tabs (the WAI-ARIA tabs pattern); Tab goes on into the panel
    tab.addEventListener("keydown", (event) => {
      const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      const next = TABS[(index + step + TABS.length) % TABS.length];
      showTab(next);
      $(`tab-${next}`).focus();
    });
  });
}

/** Opens the key dialog; resolves to the key typed, or null when cancelled. */
function askKey(reason) {
  const dialog = $("key-dialog");
  const input = $("key-input");
  input.value = "";
  $("key-title").textContent = reason ? `API key — ${reason}` : "API key";
  return new Promise((resolve) => {
    const done = (key) => {
      $("key-form").removeEventListener("submit", submit);
      $("key-cancel").removeEventListener("click", cancel);
      dialog.removeEventListener("cancel", cancel);
      dialog.close();
      resolve(key);
    };
    const submit = (event) => {
      event.preventDefault();
      done(input.value.trim() || null);
    };
    const cancel = (event) => {
      event?.preventDefault();
      done(null);
    };
    $("key-form").addEventListener("submit", submit);
    $("key-cancel").addEventListener("click", cancel);
    dialog.addEventListener("cancel", cancel); // Escape
    if (!dialog.open) dialog.showModal();
    input.focus();
  });
}

function wireForms() {
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    runSearch();
  });
  $("why-not-form").addEventListener("submit", (event) => {
    event.preventDefault();
    whyNot();
  });
  $("recall-form").addEventListener("submit", (event) => {
    event.preventDefault();
    preview();
  });
  // Enter sends the message, Shift+Enter a new line, as in a chat box
  $("recall-message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("recall-form").requestSubmit();
    }
  });
  $("recall-reset").addEventListener("click", newConversation);
  $("notes-form").addEventListener("submit", (event) => {
    event.preventDefault();
    listNotes(0);
  });
  $("notes-prev").addEventListener("click", () => pageNotes(-1));
  $("notes-next").addEventListener("click", () => pageNotes(1));
  $("unresolved-prev").addEventListener("click", () => pageUnresolved(-1));
  $("unresolved-next").addEventListener("click", () => pageUnresolved(1));
  $("refresh-status").addEventListener("click", () => refreshStatus().catch(() => {}));
  $("sync-button").addEventListener("click", () => startJob("sync"));
  $("rebuild-button").addEventListener("click", () => startJob("rebuild"));
  $("note-close").addEventListener("click", closeNote);
  $("key-button").addEventListener("click", async () => {
    const key = await askKey(storedKey() ? "replace the key of this tab" : "");
    if (key) storeKey(key);
  });
}

document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || $("key-dialog").open) return;
  const inNote = $("note-panel").contains(document.activeElement);
  if (inNote ? closeNote() : closeOpenWhy() || closeNote()) event.preventDefault();
});

onKeyNeeded(askKey);
wireTabs();
wireForms();
describeSettings();
showTab("search");
refreshStatus().catch(() => {});
$("q").focus();
