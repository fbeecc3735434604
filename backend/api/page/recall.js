// The recall preview: what OpenClaw's per-turn recall (integrations/openclaw/recall.js) would put in front of
// the model for a message — the same POST /context body with the plugin's defaults, the same per-session
// memory of what was already given (repeatTurns), plus explain:true to say why each entry was or was not
// quoted. The block is shown with textContent, character for character, under the text the service
// actually searched (`query`: for messages, built from the conversation, so words of earlier messages count).
import { post } from "./api.js";
import { $, clear, clearError, copyButton, el, number, showError } from "./dom.js";
import { askedVaults, showMissing, vaultMark, whenVaultsKnown } from "./vaults.js";

// The plugin's defaults (openclaw.plugin.json's recall section); tests/test_page_files.py checks they match.
export const RECALL_DEFAULTS = Object.freeze({"maxChars": 1500, "maxEntries": 3, "minConfidence": 0.4, "repeatTurns": 10});
const HISTORY = 2; // earlier messages the plugin sends besides the current one (recall.js)

const session = { turn: 0, given: [], messages: [] };
let shown = null; // the answer shown: shown again with its vaults' marks once the vaults are known

whenVaultsKnown(() => {
  if (shown) render(shown);
});

function excluded() {
  return session.given.filter((entry) => session.turn - entry.turn < RECALL_DEFAULTS.repeatTurns).flatMap((entry) => entry.labels);
}

// as the plugin names what it gave (recall.js givenLabels): of its vault, so that the same path of another
// vault is still offered
function givenLabel(source) {
  return source.vault ? `vault:${source.vault}/${source.attribution}` : source.attribution;
}

function record(labels) {
  session.given = session.given.filter((entry) => session.turn - entry.turn < RECALL_DEFAULTS.repeatTurns);
  if (labels.length) session.given.push({ turn: session.turn, labels });
}

export function describeSettings() {
  $("recall-settings").textContent =
    `With the plugin's defaults: at most ${RECALL_DEFAULTS.maxChars} characters, ${RECALL_DEFAULTS.maxEntries} entries, ` +
    `confidence at least ${RECALL_DEFAULTS.minConfidence}; an entry given once is not given again within ` +
    `${RECALL_DEFAULTS.repeatTurns} turns of this conversation.`;
}

export function newConversation() {
  session.turn = 0;
  session.given = [];
  session.messages = [];
  shown = null;
  $("recall-verdict").textContent = "New conversation: nothing given yet.";
  $("recall-block").hidden = true;
  $("recall-considered").hidden = true;
  $("recall-searched").hidden = true;
  $("recall-copy-row").hidden = true;
  showMissing($("recall-missing"), []);
}

/** The body recall.js sends for this message, plus explain. */
export function recallBody(message) {
  return {
    messages: [...session.messages.slice(-HISTORY), { role: "user", content: message }],
    max_chars: RECALL_DEFAULTS.maxChars,
    max_chunks: RECALL_DEFAULTS.maxEntries,
    min_confidence: RECALL_DEFAULTS.minConfidence,
    exclude: excluded(),
    quoted: true,
    explain: true,
    ...(askedVaults() ? { vaults: askedVaults() } : {}), // the vaults picked (left out: every vault)
  };
}

export async function preview() {
  const message = $("recall-message").value.trim();
  if (!message) return;
  $("recall-button").disabled = true;
  session.turn += 1;
  try {
    const answer = await post("/context", recallBody(message));
    session.messages.push({ role: "user", content: message });
    record((answer.sources ?? []).map(givenLabel));
    clearError("recall");
    render(answer);
  } catch (error) {
    session.turn -= 1;
    shown = null;
    $("recall-verdict").textContent = `Recall preview failed: ${error.message}`;
    $("recall-block").hidden = true;
    $("recall-considered").hidden = true;
    $("recall-searched").hidden = true;
    $("recall-copy-row").hidden = true;
    showMissing($("recall-missing"), []);
    showError(error, "Recall preview failed", "recall");
  } finally {
    $("recall-button").disabled = false;
  }
}

function render(answer) {
  shown = answer;
  const block = $("recall-block");
  const verdict = $("recall-verdict");
  const considered = answer.explain?.considered ?? [];
  const searched = $("recall-searched");
  searched.hidden = typeof answer.query !== "string";
  clear($("recall-query")).append(answer.query ?? "");
  showMissing($("recall-missing"), answer.missing_vaults);
  $("recall-copy-row").hidden = !answer.context;
  if (answer.context) {
    const entries = answer.sources.length;
    verdict.textContent = `OpenClaw would put this in front of the model (${answer.chars} characters, ${entries} entr${entries === 1 ? "y" : "ies"}):`;
    block.textContent = answer.context;
    block.hidden = false;
  } else {
    const reasons = [...new Set(considered.map((entry) => entry.reason))];
    verdict.textContent =
      "It would add nothing" +
      (reasons.length ? `: ${reasons.join("; ")}.` : considered.length ? "." : ": nothing in the vault matched.");
    block.textContent = "";
    block.hidden = true;
  }
  const table = $("recall-considered");
  const body = clear(table.tBodies[0]);
  for (const entry of considered) {
    body.append(
      el(
        "tr",
        { class: entry.quoted ? "good" : "" },
        el("td", {}, vaultMark(entry.vault), entry.attribution),
        el("td", {}, number(entry.confidence, 2)),
        el("td", {}, entry.quoted ? "yes" : "no"),
        el("td", {}, entry.reason),
      ),
    );
  }
  table.hidden = !considered.length;
}

export function recallCopyButton() {
  return copyButton("Copy the block", () => $("recall-block").textContent, "the recall block");
}
