// Several vaults (VAULTS): which the service serves (/index/status's `vaults`), which of them the page asks
// (the picker, all by default; kept in the address as `vaults=a,b`), the mark naming an item's vault, and the
// notice of the vaults that did not answer. With one vault none of it shows: the page is as it always was.
import { $, clear, el } from "./dom.js";

let known = []; // the service's vault names, once /index/status listed more than one
let listed = false; // /index/status has answered: `known` is what the service serves (before: unknown)
let picked = null; // the names asked, or null: all of them
let onPick = () => {};
const onKnown = [];

export const several = () => known.length > 1;
export const vaultsListed = () => listed;
export const knownVaults = () => [...known];

/** The vaults of /index/status (null with one vault): the picker and the vault selects follow them. */
export function serveVaults(states) {
  const names = (states ?? []).map((state) => state.vault);
  listed = true;
  if (names.join("\n") === known.join("\n")) return;
  known = names;
  renderPicker();
  for (const listener of onKnown) listener();
}

/** `listener()` whenever the list of vaults changes (the first status, or a restart with other VAULTS). */
export function whenVaultsKnown(listener) {
  onKnown.push(listener);
}

/** Told when a person changes the picker (main.js goes to the address with the new choice). */
export function onPicked(listener) {
  onPick = listener;
}

/** The `vaults` of an address: absent (or empty) is all. */
export function setPicked(param) {
  const names = [...new Set((param ?? "").split(",").map((name) => name.trim()).filter(Boolean))];
  picked = names.length ? names : null;
  renderPicker();
}

/** What the address says of the choice (null: all). */
export const pickedParam = () => (picked ? picked.join(",") : null);

/** What /search and /context are sent as `vaults` (null: leave it out, all). */
export const askedVaults = () => (picked ? [...picked] : null);

function renderPicker() {
  $("vault-picker").hidden = !several();
  const boxes = [...$("vault-choices").querySelectorAll("input")];
  if (boxes.map((box) => box.value).join("\n") === known.join("\n")) {
    for (const box of boxes) box.checked = !picked || picked.includes(box.value); // kept: focus stays
    return;
  }
  const choices = clear($("vault-choices"));
  known.forEach((name, index) => {
    const box = el("input", { type: "checkbox", id: `vault-pick-${index}`, value: name, checked: !picked || picked.includes(name) });
    box.addEventListener("change", () => changed(box));
    choices.append(el("label", { class: "vault-choice", for: box.id }, box, " ", name));
  });
}

function changed(box) {
  const boxes = [...$("vault-choices").querySelectorAll("input")];
  const names = boxes.filter((b) => b.checked).map((b) => b.value);
  if (!names.length) {
    box.checked = true; // asking no vault would ask nothing: the last one stays
    return;
  }
  picked = names.length === known.length ? null : names;
  onPick();
}

/** The mark naming `vault` beside a result, note or entry; nothing with one vault. */
export function vaultMark(vault) {
  if (!several() || !vault) return null;
  return el("span", { class: "vault-mark", title: `in the vault ${vault}` }, vault);
}

/** "personal did not answer: …", one line a vault, in `box` (hidden when every vault answered). */
export function showMissing(box, missing) {
  clear(box);
  for (const gone of missing ?? []) box.append(el("p", {}, el("strong", {}, gone.vault), ` did not answer: ${gone.detail} (${gone.error_code})`));
  box.hidden = !box.childElementCount;
}

/** Fill a <select> with the vaults, keeping its choice when it still names one. */
export function fillVaultSelect(select) {
  const was = select.value;
  clear(select);
  for (const name of known) select.append(el("option", { value: name }, name));
  if (known.includes(was)) select.value = was;
  select.closest(".vault-select").hidden = !several();
}
