// The page's wiring: its addresses (route.js), tabs, the key dialog and what the page says of the key,
// keyboard use (Enter searches, Escape closes what is open), what each panel loads when it is first shown, and
// the vaults picked (several vaults): part of every tab's address, so back, forward and a shared link keep them.
import { onKeyNeeded, onKeyState, storedKey, storeKey } from "./api.js";
import { $, clearError } from "./dom.js";
import { closeNote, noteFromRoute, toggleNoteView } from "./note.js";
import { listNotes, pageNotes } from "./notes.js";
import { describeSettings, newConversation, preview, recallCopyButton } from "./recall.js";
import { closeOpenWhy, searchHash, showSearch, shownSearch, submitSearch, whyNot } from "./search.js";
import { loadUnresolved, pageUnresolved, refreshStatus, showVaultDetails, startJob, watchStatus } from "./status.js";
import { TABS, go, leaveNote, listen, parse, withVaults } from "./route.js";
import { onPicked, pickedParam, setPicked } from "./vaults.js";

const loaded = new Set();
let base = "#/search"; // the last address shown that was not a note's: closing a note goes back there
let shownTab = null;

const tabHash = (name) => withVaults(name === "search" ? (shownSearch() ?? "#/search") : `#/${name}`, pickedParam());

/** Show what the address says: a tab (and a search), or a note over the tab shown. */
function applyRoute() {
  const route = parse();
  if (route.view === "note") {
    if (!shownTab) showTab("search");
    noteFromRoute(route.path, route.lines, route.vault);
    return;
  }
  base = location.hash || "#/search";
  setPicked(route.params.get("vaults")); // a note leaves the choice as it was; a tab's address says it
  closeNote();
  showTab(route.view);
  if (route.view === "search") showSearch(route.params);
}

/** Close the open note (its address left for the one before it); false when none was open. */
function closeNoteView() {
  if (!closeNote()) return false;
  leaveNote(base);
  return true;
}

function showTab(name) {
  shownTab = name;
  for (const tab of TABS) {
    const selected = tab === name;
    $(`tab-${tab}`).setAttribute("aria-selected", String(selected));
    $(`tab-${tab}`).tabIndex = selected ? 0 : -1;
    $(`panel-${tab}`).hidden = !selected;
  }
  watchStatus(name === "index"); // the index panel follows the service while it is shown
  if (loaded.has(name)) return;
  loaded.add(name);
  if (name === "index") {
    loadUnresolved(0);
  } else if (name === "notes") {
    listNotes(0);
  }
}

function wireTabs() {
  TABS.forEach((name, index) => {
    const tab = $(`tab-${name}`);
    tab.addEventListener("click", () => go(tabHash(name)));
    // arrow keys move between tabs (the WAI-ARIA tabs pattern); Tab goes on into the panel
    tab.addEventListener("keydown", (event) => {
      const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      const next = TABS[(index + step + TABS.length) % TABS.length];
      go(tabHash(next));
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
    submitSearch();
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
  $("notes-vault").addEventListener("change", () => listNotes(0));
  $("status-vault").addEventListener("change", showVaultDetails);
  $("notes-prev").addEventListener("click", () => pageNotes(-1));
  $("notes-next").addEventListener("click", () => pageNotes(1));
  $("unresolved-prev").addEventListener("click", () => pageUnresolved(-1));
  $("unresolved-next").addEventListener("click", () => pageUnresolved(1));
  $("refresh-status").addEventListener("click", () => refreshStatus().catch(() => {}));
  $("sync-button").addEventListener("click", () => startJob("sync"));
  $("rebuild-button").addEventListener("click", () => startJob("rebuild"));
  $("note-close").addEventListener("click", closeNoteView);
  $("note-view").addEventListener("click", toggleNoteView);
  $("key-button").addEventListener("click", async () => {
    const key = await askKey(storedKey() ? "replace the key of this tab" : "");
    if (!key) return;
    storeKey(key);
    refreshStatus().catch(() => {}); // says at once whether the service takes it
  });
}

// What the page says of the key follows the service's last answer: "wrong API key" until a call with the
// key it holds is served, and again as soon as one is refused.
let keyState = "unknown";
onKeyState((state, detail) => {
  const label = $("key-state");
  if (state === "accepted") {
    label.hidden = true;
    label.textContent = "";
    if (keyState !== "accepted") {
      clearError("key");
      // the summary said the key was wrong or missing: ask again now it is taken
      if ($("summary").dataset.failed === "401") refreshStatus().catch(() => {});
    }
  } else {
    label.hidden = false;
    label.textContent = state === "refused" ? detail || "wrong API key" : "API key needed";
  }
  keyState = state;
});

document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || $("key-dialog").open) return;
  const inNote = $("note-panel").contains(document.activeElement);
  if (inNote ? closeNoteView() : closeOpenWhy() || closeNoteView()) event.preventDefault();
});

// the picker changed: the tab shown (its search run again) under an address with the new choice
onPicked(() => {
  const route = parse();
  go(route.view === "search" ? searchHash() : tabHash(route.view === "note" ? shownTab : route.view));
});

onKeyNeeded(askKey);
wireTabs();
wireForms();
describeSettings();
$("recall-copy-row").append(recallCopyButton());
listen(applyRoute);
if (!location.hash) history.replaceState({ notes: 0 }, "", "#/search");
applyRoute();
if (parse().view !== "index") refreshStatus().catch(() => {}); // the index panel asks itself
if (parse().view === "search") $("q").focus();
