// The JSON API of the memory browser (/ui/api/…), with the bearer token of this tab.

const TOKEN_KEY = "mira.token";

/** An answer of the API that is not a success: its HTTP status and what to do. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** The token of this tab ("" when none was given). */
export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

/** Keeps `value` as this tab's token (an empty value forgets it). */
export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** Called on a 401: resolves to true once a new token was given (the call is then retried). */
let askToken = async () => false;
export function onUnauthorized(handler) {
  askToken = handler;
}

async function call(method, path, params, body, retried) {
  const url = new URL("api/" + path, location.href);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "" && v !== false) url.searchParams.set(k, String(v));
  }
  const headers = { Accept: "application/json" };
  if (token()) headers.Authorization = "Bearer " + token();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let r;
  try {
    r = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
  } catch (e) {
    throw new ApiError(0, "mira does not answer: is `mira ui` (or `mira serve --http`) still running?");
  }
  if (r.status === 401 && !retried && (await askToken())) {
    return call(method, path, params, body, true);
  }
  const data = await r.json().catch(() => null);
  if (!r.ok) {
    const why = data && data.error ? data.error : (r.status === 401 ? "the token is missing or wrong" : "HTTP " + r.status);
    throw new ApiError(r.status, why);
  }
  return data;
}

/** A read: GET /ui/api/<path>?<params>. */
export function get(path, params) {
  return call("GET", path, params);
}

/** A change: POST /ui/api/<path> with a JSON body. */
export function post(path, body) {
  return call("POST", path, null, body || {});
}
