// The recall hook as OpenClaw runs it (integrations/openclaw/recall.js), timed from Node: one call per turn,
// turns read as JSON lines {"text", "session"} from the file named by argv[2]; prints one JSON line per turn
// {"ms", "given"} after `warmup` untimed turns. Used by scripts/measure/bench/recall.py.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

import { recallHook } from "../../../integrations/openclaw/recall.js";

const [, , turnsFile, baseUrl, warmupText] = process.argv;
const warmup = Number(warmupText ?? 10);
const turns = readFileSync(turnsFile, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
const logged = [];
const api = {
  pluginConfig: { baseUrl, recall: { timeoutMs: 5000 } }, // measure the call, not the deadline
  logger: { warn: (line) => logged.push(line), info: () => {} },
};
const hook = recallHook(api);
for (const [index, turn] of turns.entries()) {
  const event = { prompt: turn.text, messages: [] };
  const ctx = { agentId: "main", sessionKey: turn.session };
  const started = performance.now();
  const result = await hook(event, ctx);
  const ms = performance.now() - started;
  if (index >= warmup) console.log(JSON.stringify({ ms, given: Boolean(result?.prependContext) }));
}
if (logged.length) {
  console.error(logged.join("\n"));
  process.exit(1);
}
