// Calls to the service's own API, with its key when it has one. The key is asked for once (a dialog), kept in
// this tab's sessionStorage and sent as `Authorization: Bearer <key>` — never in a URL, never in the HTML.

const KEY_STORE = "kb-api-key";

/** A failed call, carrying the service's error envelope (error_code, detail, recoverable, suggestion). */
export class ApiError extends Error {
  constructor(status, envelope) {
    super(envelope?.detail ?? `HTTP ${status}`);
    this.status = status;
    this.code = envelope?.error_code ?? `HTTP_${status}`;
    this.suggestion = envelope?.suggestion ?? "";
  }
}

let askKey = async () => null; // set by main.js: opens the key dialog, resolves to the key or null
let asking = null; // calls refused at once share one dialog
export function onKeyNeeded(ask) {
  askKey = ask;
}

// told after every answer whether the service took the key: "accepted", "refused" (a key was sent) or
// "missing", with the service's detail ("wrong API key")
let keyState = () => {};
export function onKeyState(listener) {
  keyState = listener;
}

function tell(response, answer, sent) {
  if (response.status === 401) keyState(sent ? "refused" : "missing", answer?.detail ?? "");
  else keyState("accepted", "");
}

export function storedKey() {
  return sessionStorage.getItem(KEY_STORE);
}

export function storeKey(key) {
  if (key) sessionStorage.setItem(KEY_STORE, key);
  else sessionStorage.removeItem(KEY_STORE);
}

/** `/note/<path>` with each segment of the vault path encoded (slashes stay: the route takes a path), and
 * `?vault=` when a vault is named (several vaults may hold the same path). */
export function notePath(path, suffix = "", vault = null) {
  const query = vault ? `?${new URLSearchParams({ vault })}` : "";
  return `/note/${path.split("/").map(encodeURIComponent).join("/")}${suffix}${query}`;
}

async function once(method, path, body) {
  const headers = { Accept: "application/json" };
  const key = storedKey();
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit",
    cache: "no-store",
  });
  let answer = null;
  try {
    answer = await response.json();
  } catch {
    answer = null;
  }
  return { response, answer, sent: Boolean(key) };
}

/** The answer's JSON; throws ApiError with the envelope. A 401 asks for the key and tries once more. */
export async function call(method, path, body) {
  let { response, answer, sent } = await once(method, path, body);
  tell(response, answer, sent);
  if (response.status === 401) {
    asking ??= askKey(answer?.detail ?? "this service needs its API key").finally(() => {
      asking = null;
    });
    const key = await asking;
    if (key) {
      storeKey(key);
      ({ response, answer, sent } = await once(method, path, body));
      tell(response, answer, sent);
    }
  }
  if (!response.ok) throw new ApiError(response.status, answer);
  return answer;
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);
