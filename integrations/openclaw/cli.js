// `openclaw kb sync|rebuild [--vault <name>]` and `openclaw kb status`: a vault's index job started from
// OpenClaw's command line, followed to its end with a progress bar (the memory-provider PRD, §9.3). OpenClaw
// lets a plugin own a root command through api.registerCli (docs/plugins/sdk-overview/cli-and-discovery.md);
// the manifest's `cliCommands` names it for root help without loading the plugin.
import { request, ServiceError, settings } from "./service.js";
import { stateInWords, vaultsOf } from "./vaults.js";

export const COMMAND = { name: "kb", description: "Sync or rebuild a Knowledge Bridge vault's index, with its progress", hasSubcommands: true };
const POLL_MS = 500;
const BAR = 30;

/** `[#######.......]  indexing 150/725` for a job's progress. */
export function progressLine(job) {
  // a job with nothing to do ends with total 0: done is a full bar all the same
  const share = job.phase === "done" ? 1 : job.total ? Math.min(1, job.done / job.total) : 0;
  const filled = Math.round(share * BAR);
  const counted = job.total ? ` ${job.done}/${job.total}` : "";
  const eta = job.eta_seconds ? ` (about ${Math.ceil(job.eta_seconds)} s left)` : "";
  return `[${"#".repeat(filled)}${".".repeat(BAR - filled)}] ${job.phase}${counted}${eta}`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Start `action` (sync | rebuild) on a vault and follow its job until it ends; resolves to its last state. */
export async function runJob(config, action, vault, out = process.stderr) {
  const query = vault ? `?vault=${encodeURIComponent(vault)}` : "";
  const { job_id: id } = await request(config, { method: "POST", path: `/index/${action}${query}` });
  out.write(`${action} of ${vault ?? "the vault"} started (job ${id})\n`);
  const tty = Boolean(out.isTTY);
  let shown = "";
  for (;;) {
    const status = await request(config, { path: `/index/status${query}` });
    const job = status.job?.id === id ? status.job : null;
    if (job) {
      const line = progressLine(job);
      // a terminal redraws one line; a log gets a line when the phase or tenth changes, not every poll
      const key = tty ? line : `${job.phase}:${job.total ? Math.floor((10 * job.done) / job.total) : 0}`;
      if (key !== shown) out.write(tty ? `\r${line}` : `${line}\n`);
      shown = key;
      if (job.finished_at || ["done", "failed", "cancelled"].includes(job.phase)) {
        if (tty) out.write("\n");
        return job;
      }
    }
    await sleep(POLL_MS);
  }
}

function failed(error, logger) {
  const text = error instanceof ServiceError ? error.message : String(error?.message ?? error);
  logger?.error?.(text);
  process.stderr.write(`${text}\n`);
  process.exitCode = 1;
}

/** Registers `openclaw kb` (its descriptor always: root help reads it without the plugin's runtime). */
export function registerIndexCli(api) {
  api.registerCli(
    ({ program, logger }) => {
      const kb = program.command(COMMAND.name).description(COMMAND.description);
      for (const action of ["sync", "rebuild"]) {
        kb.command(action)
          .description(
            action === "sync"
              ? "Compare a vault with its index and apply what changed, showing the progress"
              : "Build a vault's index anew beside the serving one and switch to it, showing the progress",
          )
          .option("--vault <name>", "the vault (its VAULTS name); needed when the service serves several")
          .action(async (options) => {
            try {
              const job = await runJob(settings(api.pluginConfig), action, options.vault);
              if (job.phase === "failed" || job.error) throw new Error(`${action} failed: ${job.error ?? job.phase}`);
              process.stdout.write(`${action} done: ${job.done}/${job.total} notes\n`);
            } catch (error) {
              failed(error, logger);
            }
          });
      }
      kb.command("status")
        .description("Each vault's state: indexing, keyword only while the model builds, ready")
        .action(async () => {
          try {
            const status = await request(settings(api.pluginConfig), { path: "/index/status" });
            for (const state of vaultsOf(status).states) process.stdout.write(`${state.vault}: ${stateInWords(state)}\n`);
          } catch (error) {
            failed(error, logger);
          }
        });
    },
    { descriptors: [COMMAND] },
  );
}
