// `openclaw kb sync|rebuild [--vault <name>]` and `openclaw kb status`: a vault's index job started from
// OpenClaw's command line, followed to its end with a progress bar (the memory-provider PRD, §9.3). OpenClaw
// lets a plugin own a root command through api.registerCli (docs/plugins/sdk-overview/cli-and-discovery.md);
// the manifest's `cliCommands` names it for root help without loading the plugin.
import { request, ServiceError, settings } from "./service.js";
import { stateInWords, vaultsOf } from "./vaults.js";

export const COMMAND = { name: "kb", description: "Sync or rebuild a Knowledge Bridge vault's index, with its progress", hasSubcommands: true };
const POLL_MS = 500;
const FOLLOW_MINUTES = 120; // how long a job is followed (`--timeout`): it goes on in the service after
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

/**
 * Start `action` (sync | rebuild) on a vault and follow its job until it ends; resolves to its last state
 * (read in the status's `previous_job` once the service has started another, a sync queued behind it), or,
 * when even that does not show it (a service without `previous_job`), to `{id, phase: "ended", followedBy:
 * <that job>}`. Rejects past `timeoutMs`, the job going on.
 */
export async function runJob(
  config,
  action,
  vault,
  out = process.stderr,
  { timeoutMs = FOLLOW_MINUTES * 60_000 } = {},
) {
  const query = vault ? `?vault=${encodeURIComponent(vault)}` : "";
  const { job_id: id } = await request(config, { method: "POST", path: `/index/${action}${query}` });
  out.write(`${action} of ${vault ?? "the vault"} started (job ${id})\n`);
  const until = Date.now() + timeoutMs;
  const tty = Boolean(out.isTTY);
  let shown = "";
  let ours = null;
  for (;;) {
    const status = await request(config, { path: `/index/status${query}` });
    // another job may have begun the moment ours ended (a queued sync): ours is then the one before it
    const job = status.job?.id === id ? status.job : status.previous_job?.id === id ? status.previous_job : null;
    if (job) {
      ours = job;
      const line = progressLine(job);
      // a terminal redraws one line; a log gets a line when the phase or tenth changes, not every poll
      const key = tty ? line : `${job.phase}:${job.total ? Math.floor((10 * job.done) / job.total) : 0}`;
      if (key !== shown) out.write(tty ? `\r${line}` : `${line}\n`);
      shown = key;
      if (job.finished_at || ["done", "failed", "cancelled"].includes(job.phase)) {
        if (tty) out.write("\n");
        return job;
      }
    } else if (status.job) {
      // the vault runs one job at a time and ours was its job when the POST answered (a job running refuses
      // another, 409): another one now, and ours not the one before it (a service without `previous_job`, or
      // two jobs since), means ours has ended, how it is not shown
      if (tty && shown) out.write("\n");
      return { ...(ours ?? { id, kind: action }), phase: "ended", followedBy: status.job };
    }
    if (Date.now() >= until) {
      if (tty && shown) out.write("\n");
      const after = timeoutMs >= 60_000 ? `${timeoutMs / 60_000} min` : `${timeoutMs} ms`;
      throw new Error(
        `stopped following ${action} job ${id} after ${after}; it goes on in the service (\`openclaw kb status\` ` +
          "shows how far it is)",
      );
    }
    await sleep(POLL_MS);
  }
}

/** What `openclaw kb sync|rebuild` prints of a job that ended: done, or ended followed by another job; a job
 * that failed or was cancelled throws, saying so. */
export function outcome(action, job) {
  if (job.phase === "cancelled") {
    // the service's stopped job ends cancelled without an error: not done all the same
    throw new Error(`${action} was cancelled: the service stopped it before it ended (shutting down, or closing the vault); run it again`);
  }
  if (job.phase === "failed" || job.error) throw new Error(`${action} failed: ${job.error ?? job.phase}`);
  if (job.phase === "ended") {
    const next = job.followedBy;
    return (
      `${action} ended, how is not shown: the service started a ${next.kind} (job ${next.id}) right after it ` +
      "(`openclaw kb status` shows the vault's state)"
    );
  }
  return `${action} done: ${job.done}/${job.total} notes`;
}

function failed(error, io) {
  // the command's one line on stderr (the plugin logger would print it a second time)
  io.stderr.write(`${error instanceof ServiceError ? error.message : String(error?.message ?? error)}\n`);
  io.exitCode = 1;
}

/** Registers `openclaw kb` (its descriptor always: root help reads it without the plugin's runtime); `io`
 * (stdout, stderr, exitCode) is the process's. */
export function registerIndexCli(api, io = process) {
  api.registerCli(
    ({ program }) => {
      const kb = program.command(COMMAND.name).description(COMMAND.description);
      for (const action of ["sync", "rebuild"]) {
        kb.command(action)
          .description(
            action === "sync"
              ? "Compare a vault with its index and apply what changed, showing the progress"
              : "Build a vault's index anew beside the serving one and switch to it, showing the progress",
          )
          .option("--vault <name>", "the vault (its VAULTS name); needed when the service serves several")
          .option("--timeout <minutes>", `how long to follow the job (default ${FOLLOW_MINUTES}); it goes on after`)
          .action(async (options) => {
            try {
              const minutes = Number(options.timeout ?? FOLLOW_MINUTES);
              if (!(minutes > 0)) throw new Error(`--timeout takes minutes, a number above 0 (not ${options.timeout})`);
              const job = await runJob(settings(api.pluginConfig), action, options.vault, io.stderr, {
                timeoutMs: minutes * 60_000,
              });
              io.stdout.write(`${outcome(action, job)}\n`);
            } catch (error) {
              failed(error, io);
            }
          });
      }
      kb.command("status")
        .description("Each vault's state: indexing, keyword only while the model builds, ready")
        .action(async () => {
          try {
            const status = await request(settings(api.pluginConfig), { path: "/index/status" });
            for (const state of vaultsOf(status).states) io.stdout.write(`${state.vault}: ${stateInWords(state)}\n`);
          } catch (error) {
            failed(error, io);
          }
        });
    },
    { descriptors: [COMMAND] },
  );
}
