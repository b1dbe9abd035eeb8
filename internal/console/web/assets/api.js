// Talking to ahp-server: the token (kept only in this tab's sessionStorage), the console's JSON
// endpoints and their errors.

const TOKEN_KEY = "ahp.console.token";

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// ApiError is a refused or failed request: status is the HTTP status (0 for a network failure),
// code the Connect error code when the server gave one.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
  get unauthenticated() { return this.status === 401 || this.code === "unauthenticated"; }
  get forbidden() { return this.status === 403 || this.code === "permission_denied"; }
}

export function authHeaders() {
  const t = token();
  return t ? { Authorization: "Bearer " + t } : {};
}

// errorFrom reads an error response: Connect's JSON {code, message}, or the plain text that
// authentication middleware answers with.
export async function errorFrom(resp) {
  let text = "";
  try { text = await resp.text(); } catch { /* the body is gone */ }
  let code = "", message = text.trim();
  try {
    const j = JSON.parse(text);
    code = j.code || "";
    message = j.message || message;
  } catch { /* not JSON */ }
  if (!message) message = resp.status + " " + resp.statusText;
  return new ApiError(resp.status, code, message);
}

// getJSON fetches a console endpoint (path relative to /ui/).
export async function getJSON(path, { signal } = {}) {
  let resp;
  try {
    resp = await fetch(path, { headers: { Accept: "application/json", ...authHeaders() }, cache: "no-store", credentials: "omit", signal });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ApiError(0, "unavailable", "the server cannot be reached: " + e.message);
  }
  if (!resp.ok) throw await errorFrom(resp);
  return resp.json();
}

// callJSON calls a Connect unary procedure with JSON (path absolute, or relative to /ui/) and
// returns the response message; a refusal rejects with an ApiError carrying the Connect code.
export async function callJSON(path, message, { signal } = {}) {
  let resp;
  try {
    resp = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Connect-Protocol-Version": "1", Accept: "application/json", ...authHeaders() },
      body: JSON.stringify(message),
      cache: "no-store",
      credentials: "omit",
      signal,
    });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ApiError(0, "unavailable", "the server cannot be reached: " + e.message);
  }
  if (!resp.ok) throw await errorFrom(resp);
  return resp.json();
}
