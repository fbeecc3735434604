// What the plugin knows of the service between calls: whether it answers, and its vaults (one, or the
// several of its VAULTS) with their states, both read from GET /index/status.
import { request, ServiceError, settings } from "./service.js";
import { vaultsOf } from "./vaults.js";

const PROBE_TTL_MS = 2_000; // how long a failure stands for the service's state
// how long the vault set read from a status stands: VAULTS changes only when the service restarts, and a
// memory_search must not cost a second request each time
const VAULTS_TTL_MS = 30_000;

/**
 * Whether the service answers with this config (its key included), asked before each prompt and never waited
 * on longer than memory.probeMs: a prompt must neither wait on a service that is down nor promise a vault that
 * is not there. A failure (of the probe, a recall or a memory search) stands for PROBE_TTL_MS, so a service
 * that is down is not asked again every turn; an answer stands for nothing, since the next may not come.
 * The probe's answer is kept: the vaults and their states, for the prompt and for naming notes.
 */
export class ServiceHealth {
  constructor(api) {
    this.api = api;
    this.known = { at: -Infinity, up: false, key: "" };
    this.pending = null;
    this.status = { at: -Infinity, key: "", answer: null }; // the last status answer, whenever it came
  }

  key(config) {
    return `${config.baseUrl}\u0000${config.apiKey ?? ""}`;
  }

  /** What a call just showed: it was answered (any HTTP answer) or it could not reach the service. */
  saw(up) {
    this.known = { at: Date.now(), up, key: this.key(settings(this.api.pluginConfig)) };
  }

  async up() {
    const config = settings(this.api.pluginConfig);
    const key = this.key(config);
    if (this.known.key === key && !this.known.up && Date.now() - this.known.at < PROBE_TTL_MS) return false;
    this.pending ??= this.#status(config, config.memory.probeMs)
      .then(() => true, () => false)
      .then((up) => {
        this.known = { at: Date.now(), up, key };
        this.pending = null;
        return up;
      });
    return await this.pending;
  }

  /** The status the last probe read (null: none yet, or of another service). */
  lastStatus() {
    const config = settings(this.api.pluginConfig);
    return this.status.key === this.key(config) ? this.status.answer : null;
  }

  /**
   * The service's vaults: `{several, names}`, from a status at most VAULTS_TTL_MS old, else asked now within
   * `timeoutMs` (and before `signal` aborts: a deadline the caller shares). Throws a ServiceError when the
   * service cannot say.
   * @returns {Promise<{several: boolean, names: string[]}>}
   */
  async vaults(config, timeoutMs, signal) {
    const key = this.key(config);
    let answer = this.status.key === key && Date.now() - this.status.at < VAULTS_TTL_MS ? this.status.answer : null;
    if (!answer) {
      try {
        answer = await this.#status(config, timeoutMs, signal);
        this.saw(true);
      } catch (error) {
        this.saw(!(error instanceof ServiceError && error.unavailable));
        throw error;
      }
    }
    const { several, states } = vaultsOf(answer);
    return { several, names: states.map((state) => state.vault) };
  }

  async #status(config, timeoutMs, signal) {
    const answer = await request(config, { path: "/index/status", timeoutMs, signal });
    this.status = { at: Date.now(), key: this.key(config), answer };
    return answer;
  }
}
