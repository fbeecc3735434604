// The plugin across several vaults (issue 46): the pure rules here, and against a live service of two vaults
// (KB_TEST_VAULTS_URL, KB_TEST_KEY: tests/two_vaults.py, `work` and `personal`, both holding Inbox.md) the
// citation round trip of memory_search / memory_get and the per-agent allowlist (`agentVaults`) of memory,
// recall, the prompt's lines and the tools.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";

import { progressLine, registerIndexCli, runJob } from "../cli.js";
import { recallHook } from "../recall.js";
import { settings } from "../service.js";
import { statusWithin, withinVaults } from "../tool-vaults.js";
import { execute, TOOLS } from "../tools.js";
import { ServiceHealth, vaultCorpus, vaultPromptLines } from "../vault-memory.js";
import { agentKey, allowedVaults, qualify, stateInWords, unqualify } from "../vaults.js";
import { standIn } from "./stand-in.js";

const URL_ = process.env.KB_TEST_VAULTS_URL;
const KEY = process.env.KB_TEST_KEY;
const WORK_INBOX = /Quarterly budget review/;
const PERSONAL_INBOX = /tomato seeds/;
const api = (config) => ({ pluginConfig: config, logger: { warn() {}, info() {} } });
const tool = (name) => TOOLS.find((t) => t.name === name);
const route = (query, body = []) => ({ query_params: query, body_params: body });

describe("which vaults an agent may reach, and how their notes are named", () => {
  test("the agent's own list, else `*`, else every vault", () => {
    const config = { agentVaults: { work: ["work"], "*": ["work", "personal"] } };
    assert.deepEqual(allowedVaults(config, "work"), ["work"]);
    assert.deepEqual(allowedVaults(config, "main"), ["work", "personal"]);
    assert.equal(allowedVaults({}, "work"), null);
    assert.equal(allowedVaults({ agentVaults: { work: ["work"] } }, "main"), null);
  });

  test("keys match as OpenClaw normalizes agent ids: `Work` is the agent `work`", () => {
    // normalizeAgentIdStrict (dist/agent-id-*.mjs): trimmed, lowercased, other characters dashes
    const config = { agentVaults: { Work: ["work"], " Ops Team ": ["ops"], "*": ["personal"] } };
    for (const agentId of ["work", "WORK", " Work "]) assert.deepEqual(allowedVaults(config, agentId), ["work"], agentId);
    assert.deepEqual(allowedVaults(config, "ops-team"), ["ops"]);
    assert.deepEqual(allowedVaults(config, "main"), ["personal"]);
    assert.equal(allowedVaults({ agentVaults: { Work: ["work"] } }, "main"), null); // not listed, no `*`: all
    // two keys of one agent: only what both allow
    assert.deepEqual(allowedVaults({ agentVaults: { Work: ["work", "personal"], work: ["work"] } }, "work"), ["work"]);
    // an id OpenClaw could not represent names no agent: as a call without one
    assert.deepEqual(allowedVaults({ agentVaults: { Work: ["work"] } }, "!!!"), []);
    assert.deepEqual(
      ["Work", " work ", "My Agent!", "--x--", "!!!", "a_b-c", "x".repeat(70)].map(agentKey),
      ["work", "work", "my-agent", "x", "", "a_b-c", "x".repeat(64)],
    );
  });

  test("a call without an agent id: with an allowlist only what `*` allows, nothing without `*`", () => {
    // OpenClaw's contexts may lack agentId; its plugin docs: fail closed rather than choose an agent
    for (const agentId of [undefined, null, "", "  "]) {
      assert.deepEqual(allowedVaults({ agentVaults: { work: ["work"] } }, agentId), [], String(agentId));
      assert.deepEqual(allowedVaults({ agentVaults: { work: ["work"], "*": ["personal"] } }, agentId), ["personal"]);
      assert.deepEqual(allowedVaults({ agentVaults: { "*": ["work", "personal"] } }, agentId), ["work", "personal"]);
      assert.equal(allowedVaults({}, agentId), null); // no allowlist: every vault, as before
      assert.equal(allowedVaults({ agentVaults: {} }, agentId), null);
    }
  });

  test("a path names its vault only when the service has several, and reads back", () => {
    assert.equal(qualify("work", "Inbox.md", false), "Inbox.md");
    assert.equal(qualify("work", "Inbox.md", true), "vault:work/Inbox.md");
    assert.deepEqual(unqualify("vault:work/Journal/#1 ideas.md"), { vault: "work", path: "Journal/#1 ideas.md" });
    assert.deepEqual(unqualify("Inbox.md"), { vault: undefined, path: "Inbox.md" });
  });

  test("tool calls: a barred vault is refused in the error shape, searches ask the allowed ones", () => {
    const allowed = ["work"];
    const refused = withinVaults(route(["vault"]), { note_path: "Inbox.md", vault: "personal" }, allowed).refused;
    assert.equal(refused.error_code, "VAULT_NOT_ALLOWED");
    assert.deepEqual(Object.keys(refused).sort(), ["detail", "error_code", "recoverable", "suggestion"]);
    assert.deepEqual(withinVaults(route(["vault"]), { note_path: "Inbox.md" }, allowed).args.vault, "work");
    assert.deepEqual(withinVaults(route([], ["query", "vaults"]), { query: "x" }, allowed).args.vaults, ["work"]);
    assert.ok(withinVaults(route([], ["vaults"]), { vaults: ["personal"] }, allowed).refused);
    assert.ok(withinVaults(route(["vault"]), { note_path: "Inbox.md" }, ["work", "team"]).refused);
    assert.deepEqual(withinVaults(route(["vault"]), { vault: "personal" }, null).args, { vault: "personal" });
  });

  test("an agent allowed no vault: kb_status refused as kb_search and kb_note are, of one vault too", async () => {
    let asked = 0;
    const one = await standIn(() => {
      asked += 1; // a service of one vault: its status is that vault's, with no list to filter
      return { vault: "notes", indexed_notes: 7, vault_path: "/home/someone/Vault" };
    });
    after(() => one.close());
    for (const [agentVaults, agentId] of [[{ main: [] }, "main"], [{ work: ["work"] }, undefined]]) {
      const config = { baseUrl: one.url, agentVaults };
      const status = await execute(api(config), tool("kb_status"), {}, agentId);
      const search = await execute(api(config), tool("kb_search"), { query: "inbox" }, agentId);
      const note = await execute(api(config), tool("kb_note"), { note_path: "Inbox.md" }, agentId);
      assert.equal(status.error?.error_code, "VAULT_NOT_ALLOWED", JSON.stringify(status));
      assert.equal(status.error.detail, "this agent may reach no vault"); // not "name one": there is none to name
      assert.deepEqual(status, search);
      assert.deepEqual(status, note);
    }
    assert.equal(asked, 0); // refused before it leaves: no vault's figures
    const allowed = await execute(api({ baseUrl: one.url, agentVaults: { main: ["notes"] } }), tool("kb_status"), {}, "main");
    assert.equal(allowed.result.indexed_notes, 7); // its one vault, asked by name
    assert.equal(asked, 1);
  });

  test("a status of several vaults shows an agent its own only", () => {
    const work = { vault: "work", indexed_notes: 2, vault_path: "/w" };
    const status = { vault: "personal", indexed_notes: 9, vault_path: "/p", vaults: [
      { vault: "personal", available: true, status: { vault: "personal", indexed_notes: 9, vault_path: "/p" } },
      { vault: "work", available: true, status: work },
    ] };
    const seen = statusWithin(status, ["work"]);
    assert.equal(seen.vault_path, "/w");
    assert.deepEqual(seen.vaults.map((s) => s.vault), ["work"]);
    assert.doesNotMatch(JSON.stringify(seen), /\/p"/);
  });

  test("a vault's state in words, and a job's progress bar", () => {
    const job = { id: "j", kind: "index", phase: "indexing", done: 150, total: 725, finished_at: null };
    assert.equal(stateInWords({ available: true, status: { job, embedder: { state: "loading" } } }), "indexing 150/725");
    const embedding = { ...job, phase: "embedding" };
    assert.match(stateInWords({ available: true, status: { job: embedding } }), /^keyword only while the model builds/);
    assert.equal(stateInWords({ available: true, status: { indexed_notes: 3, embedder: { state: "loading" }, dense_pending: 3 } }),
      "3 notes, keyword only while the model builds");
    assert.match(stateInWords({ available: false, detail: "its folder is gone" }), /unavailable \(its folder is gone\)/);
    assert.equal(progressLine({ phase: "indexing", done: 1, total: 2 }), `[${"#".repeat(15)}${".".repeat(15)}] indexing 1/2`);
  });
});

/** `openclaw kb <command>` with `options` as OpenClaw runs it: the plugin's command registered on a stand-in
 * of OpenClaw's program, writing to strings; what it wrote to stdout and stderr, its exit code and what it
 * logged. */
async function kb(config, command, options = {}) {
  const actions = {};
  const node = (path) => {
    const self = {
      description: () => self,
      option: () => self,
      command: (name) => node([...path, name]),
      action: (run) => ((actions[path.join(" ")] = run), self),
    };
    return self;
  };
  const logged = [];
  const logger = { error: (line) => logged.push(line), warn: (line) => logged.push(line), info() {} };
  const io = { stdout: { write: (text) => (io.out += text) }, stderr: { write: (text) => (io.err += text) }, out: "", err: "" };
  registerIndexCli({ pluginConfig: config, registerCli: (register) => register({ program: node([]), logger }) }, io);
  await actions[`kb ${command}`](options);
  return { stdout: io.out, stderr: io.err, code: io.exitCode ?? 0, logged };
}

describe("`openclaw kb` against a stand-in service", () => {
  const services = [];
  after(() => services.forEach((service) => service.close()));
  /** A service whose sync starts job `a` and whose status answers `states[i]` at the i-th poll (then the last). */
  async function jobs(...states) {
    let polls = 0;
    const service = await standIn((method, url) => {
      if (method === "POST") return { job_id: "a", status: "started" };
      return { vault: "", job: states[Math.min(polls++, states.length - 1)] };
    });
    services.push(service);
    return { baseUrl: service.url };
  }
  const job = (id, phase, fields = {}) => ({ id, kind: "sync", phase, done: 0, total: 4, started_at: `2026-12-01T00:00:0${id === "a" ? 1 : 2}Z`, finished_at: null, error: null, ...fields });

  test("a job the service follows at once with a queued one: ours has ended, and that is said", { timeout: 10_000 }, async () => {
    const config = await jobs(job("a", "indexing"), job("b", "queued"));
    const ran = await kb(config, "sync");
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /^sync ended, how is not shown: the service started a sync \(job b\) right after it/);
  });

  /** A service whose sync starts job `a` and whose status answers the whole body `bodies[i]` at the i-th poll. */
  async function statuses(...bodies) {
    let polls = 0;
    const service = await standIn((method) =>
      method === "POST" ? { job_id: "a", status: "started" } : { vault: "", ...bodies[Math.min(polls++, bodies.length - 1)] },
    );
    services.push(service);
    return { baseUrl: service.url };
  }
  const ended = (phase, fields = {}) => job("a", phase, { done: 4, finished_at: "2026-12-01T00:00:05Z", ...fields });

  test("a job followed at once by a queued one: how ours ended is read in previous_job", { timeout: 10_000 }, async () => {
    const done = await kb(await statuses({ job: job("a", "indexing") }, { job: job("b", "queued"), previous_job: ended("done") }), "sync");
    assert.equal(done.code, 0, done.stderr);
    assert.equal(done.stdout, "sync done: 4/4 notes\n");
    const broken = await kb(
      await statuses({ job: job("a", "indexing") }, { job: job("b", "queued"), previous_job: ended("failed", { error: "disk full" }) }),
      "sync",
    );
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /sync failed: disk full/);
  });

  test("a job followed past --timeout: the command stops and says the job goes on", { timeout: 10_000 }, async () => {
    const config = await jobs(job("a", "indexing"));
    const ran = await kb(config, "sync", { timeout: "0.005" }); // 300 ms
    assert.equal(ran.code, 1);
    assert.match(ran.stderr, /stopped following sync job a after 300 ms; it goes on in the service/);
    assert.equal(ran.stdout, "");
  });

  test("a job the service cancelled: a failure, said so", { timeout: 10_000 }, async () => {
    const config = await jobs(job("a", "cancelled", { finished_at: "2026-12-01T00:00:05Z" }));
    const ran = await kb(config, "sync");
    assert.equal(ran.code, 1);
    assert.match(ran.stderr, /^sync of the vault started \(job a\)\n.*\nsync was cancelled: the service stopped it/);
    assert.equal(ran.stdout, "");
  });

  test("a command's failure is printed once", async () => {
    const service = await standIn(() => ({ status: 401, body: { error_code: "AUTH_INVALID", detail: "wrong API key" } }));
    services.push(service);
    const ran = await kb({ baseUrl: service.url }, "status");
    assert.equal(ran.code, 1);
    assert.equal(ran.stderr, "Knowledge Bridge: wrong API key\n");
    assert.deepEqual(ran.logged, []); // OpenClaw prints the plugin's log on stderr too: it would be twice
  });
});

describe("against a service of two vaults", { skip: URL_ ? false : "KB_TEST_VAULTS_URL is not set" }, () => {
  const config = { baseUrl: URL_, apiKey: KEY, memory: { minScore: 0 }, recall: { minConfidence: 0 } };
  const worker = { ...config, agentVaults: { work: ["work"] } };

  test("memory_search names each hit's vault; memory_get of its citation reads that vault's note", async () => {
    const corpus = vaultCorpus(api(config));
    const hits = await corpus.search({ query: "inbox", maxResults: 10 });
    const inboxes = hits.filter((hit) => hit.path.endsWith("/Inbox.md"));
    assert.deepEqual(inboxes.map((hit) => hit.path).sort(), ["vault:personal/Inbox.md", "vault:work/Inbox.md"]);
    for (const hit of inboxes) {
      assert.match(hit.citation, /^vault:(work|personal)\/Inbox\.md#L\d+(-L\d+)?$/);
      const read = await corpus.get({ lookup: hit.citation });
      assert.equal(read.path, hit.path);
      assert.match(read.content, hit.vault === "work" ? WORK_INBOX : PERSONAL_INBOX);
    }
    await assert.rejects(corpus.get({ lookup: "Inbox.md" }), /in several vaults.*vault:work\/Inbox\.md/s);
    assert.equal(await corpus.get({ lookup: "vault:nowhere/Inbox.md" }), null);
  });

  test("the work agent's memory never sees the personal vault", async () => {
    const corpus = vaultCorpus(api(worker));
    const hits = await corpus.search({ query: "inbox budget garden tomato seeds launch", agentId: "work" });
    assert.ok(hits.length > 0);
    assert.ok(hits.every((hit) => hit.vault === "work" && hit.path.startsWith("vault:work/")), JSON.stringify(hits));
    assert.equal(await corpus.get({ lookup: "vault:personal/Inbox.md", agentId: "work" }), null);
    assert.equal(await corpus.get({ lookup: "Garden.md", agentId: "work" }), null);
    assert.match((await corpus.get({ lookup: "Inbox.md", agentId: "work" })).content, WORK_INBOX);
    const other = await vaultCorpus(api(worker)).search({ query: "tomato seeds", agentId: "main" });
    assert.ok(other.some((hit) => hit.vault === "personal")); // an agent not listed sees every vault
  });

  test("with an allowlist, a call without an agent id reaches no vault (`*` unlisted) or `*`'s", async () => {
    const corpus = vaultCorpus(api(worker));
    assert.deepEqual(await corpus.search({ query: "inbox budget garden tomato seeds launch" }), []);
    assert.equal(await corpus.get({ lookup: "vault:work/Inbox.md" }), null);
    assert.equal(await corpus.get({ lookup: "Inbox.md" }), null);
    const recall = recallHook(api(worker), new ServiceHealth(api(worker)));
    assert.equal(await recall({ prompt: "what about my inbox and the tomato seeds?" }, { sessionKey: "anon" }), undefined);
    const tools = new Set(["memory_search", "memory_get", "kb_search"]);
    assert.deepEqual(await vaultPromptLines(new ServiceHealth(api(worker)))({ availableTools: tools }), []);
    const refused = await execute(api(worker), tool("kb_search"), { query: "tomato seeds inbox" }, undefined);
    assert.equal(refused.error.error_code, "VAULT_NOT_ALLOWED");
    assert.equal((await execute(api(worker), tool("kb_note"), { note_path: "Inbox.md" }, undefined)).ok, false);
    // `*` listed: what it allows, and only that
    const starred = { ...config, agentVaults: { work: ["work"], "*": ["personal"] } };
    const hits = await vaultCorpus(api(starred)).search({ query: "inbox budget garden tomato seeds launch" });
    assert.ok(hits.length > 0 && hits.every((hit) => hit.vault === "personal"), JSON.stringify(hits));
    const found = await execute(api(starred), tool("kb_search"), { query: "tomato seeds inbox" }, undefined);
    assert.ok(found.ok && found.result.results.every((r) => r.vault === "personal"), JSON.stringify(found));
    // no allowlist: every vault, as before
    const all = await vaultCorpus(api(config)).search({ query: "tomato seeds inbox budget" });
    assert.deepEqual([...new Set(all.map((hit) => hit.vault))].sort(), ["personal", "work"]);
  });

  test("the work agent's recall quotes the work vault only", async () => {
    const hook = recallHook(api(worker), new ServiceHealth(api(worker)));
    const given = await hook({ prompt: "what about my inbox, the tomato seeds and the budget?" }, { agentId: "work", sessionKey: "w" });
    assert.ok(given?.prependContext, "no block");
    assert.match(given.prependContext, WORK_INBOX);
    assert.doesNotMatch(given.prependContext, /tomato|basil|vault personal/);
    const everyone = recallHook(api(config), new ServiceHealth(api(config)));
    const both = await everyone({ prompt: "tomato seeds for the garden" }, { agentId: "main", sessionKey: "m" });
    assert.match(both.prependContext, /tomato/);
  });

  test("the memory section says each allowed vault's state", async () => {
    const tools = new Set(["memory_search", "memory_get"]);
    const all = await vaultPromptLines(new ServiceHealth(api(config)))({ availableTools: tools, agentId: "main" });
    assert.match(all.at(-1), /^Vaults: work: \d+ notes, keyword search only; personal: \d+ notes, keyword search only\.$/);
    assert.match(all.join("\n"), /vault:<name>\/<path>/);
    const mine = await vaultPromptLines(new ServiceHealth(api(worker)))({ availableTools: tools, agentId: "work" });
    assert.match(mine.at(-1), /^Vaults: work: /);
    assert.doesNotMatch(mine.join("\n"), /personal/);
  });

  test("the tools of the work agent: searches ask work, a personal note is refused", async () => {
    const found = await execute(api(worker), tool("kb_search"), { query: "tomato seeds inbox" }, "work");
    assert.ok(found.ok, JSON.stringify(found));
    assert.ok(found.result.results.every((r) => r.vault === "work"));
    const refused = await execute(api(worker), tool("kb_note"), { note_path: "Inbox.md", vault: "personal" }, "work");
    assert.equal(refused.ok, false);
    assert.equal(refused.error.error_code, "VAULT_NOT_ALLOWED");
    const read = await execute(api(worker), tool("kb_note"), { note_path: "Inbox.md" }, "work");
    assert.match(read.result.content, WORK_INBOX);
    const status = await execute(api(worker), tool("kb_status"), {}, "work");
    assert.equal(status.result.vault, "work"); // its one vault asked by name: no other vault's state
    assert.doesNotMatch(JSON.stringify(status.result), /personal|Personal/);
    const both = await execute(api(config), tool("kb_search"), { query: "tomato seeds inbox" }, "main");
    assert.ok(both.result.results.some((r) => r.vault === "personal"));
  });

  test("`openclaw kb sync --vault work`: the job followed to its end, its progress shown", async () => {
    const written = [];
    const job = await runJob(settings(config), "sync", "work", { isTTY: false, write: (text) => written.push(text) });
    assert.equal(job.phase, "done");
    assert.match(written[0], /^sync of work started \(job /);
    assert.match(written.at(-1), /^\[#{30}\] done/);
  });
});
