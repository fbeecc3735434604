// Knowledge Bridge for OpenClaw: the user's Obsidian vault as agent tools, as a corpus of OpenClaw's own
// memory (memory_search / memory_get, and a few lines of the system prompt's memory section), and as recall:
// each turn, the notes that answer the latest message, quoted into the prompt.
//
// The tools (names, descriptions, JSON Schemas, HTTP calls) are in tools.json, generated from the service's
// OpenAPI schema (`make agent-tools`); tools.js makes the calls, this file registers them. Each result's
// `details` (and its text, which the model reads) is
//   {ok: true,  status: "healthy" | "degraded", result: <the service's answer>}
//   {ok: false, status: "healthy" | "degraded" | "unavailable", error: {error_code, detail, recoverable, suggestion}}
// `status` is the service's health as seen by this call: the answer's own status when it has one, "unavailable"
// when the service did not answer or answered 503, "healthy" otherwise (a 4xx is the request's fault).
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

import { registerIndexCli } from "./cli.js";
import { ServiceHealth } from "./health.js";
import { vaultPromptLines } from "./prompt.js";
import { recallHook } from "./recall.js";
import { MANIFEST, settings } from "./service.js";
import { execute, TOOLS } from "./tools.js";
import { vaultCorpus } from "./vault-memory.js";

function registerTools(api) {
  for (const tool of TOOLS) {
    // a factory: OpenClaw builds the tool for each run with its context, whose agent decides the vaults
    api.registerTool(
      (context) => ({
        name: tool.name,
        label: tool.label,
        description: tool.description,
        parameters: tool.parameters,
        async execute(_toolCallId, params) {
          const details = await execute(api, tool, params, context?.agentId);
          return { content: [{ type: "text", text: JSON.stringify(details) }], details };
        },
      }),
      // an optional tool reaches a model only once the user allowlists it (tools.alsoAllow)
      { name: tool.name, optional: tool.optional === true },
    );
  }
}

function register(api) {
  registerIndexCli(api);
  if (api.registrationMode === "cli-metadata") return; // root help: the command's descriptor only
  registerTools(api);
  const config = settings(api.pluginConfig);
  const health = new ServiceHealth(api);
  if (config.memory.enabled) {
    api.registerMemoryCorpusSupplement(vaultCorpus(api, health));
    api.registerMemoryPromptPreparation(vaultPromptLines(health));
  }
  // a conversation hook: OpenClaw runs it only once the user grants
  // plugins.entries.knowledge-bridge.hooks.allowConversationAccess (and leaves allowPromptInjection on)
  api.on("before_prompt_build", recallHook(api, health), {
    requiresToolAuthority: true,
    timeoutMs: config.recall.timeoutMs + 1000, // ours ends the call first; this only backs it up
  });
}

export default definePluginEntry({
  id: MANIFEST.id,
  name: MANIFEST.name,
  description: MANIFEST.description,
  register,
});
