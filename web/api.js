// The dashboard's one way to talk to the server: the public HTTP API and its event streams.
// An API key (sign-in) is kept in sessionStorage and sent as `Authorization: Bearer`, and as
// `access_token` on event streams (EventSource cannot send headers). With auth off it is unused.

const KEY = 'cairn.apiKey';

export function apiKey() {
  try { return sessionStorage.getItem(KEY) || ''; } catch { return ''; }
}
export function setApiKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY, key); else sessionStorage.removeItem(KEY);
  } catch { /* storage disabled: the key lives for this page only */ }
}

// The server's error body {error: {code, message, field?}} as an Error.
export class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `HTTP ${status}`);
    this.status = status;
    this.code = err.code || '';
    this.field = err.field || '';
    this.body = body;
  }
}

// fetch() of `path` with an optional JSON body; resolves {status, data, headers} for 2xx/304 and
// rejects with ApiError otherwise (a network failure is ApiError with status 0).
export async function api(method, path, body, headers = {}) {
  const h = { Accept: 'application/json', ...headers };
  const key = apiKey();
  if (key) h.Authorization = `Bearer ${key}`;
  const init = { method, headers: h };
  if (body !== undefined) {
    h['Content-Type'] = 'application/json';
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, { error: { code: 'network', message: `cannot reach the server: ${e.message}` } });
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = text; }
  }
  if (!res.ok) {
    if (res.status === 401 || res.status === 403) window.dispatchEvent(new CustomEvent('cairn-auth', { detail: res.status }));
    throw new ApiError(res.status, data);
  }
  return { status: res.status, data, headers: res.headers };
}

export const get = (path) => api('GET', path).then((r) => r.data);

// A query string from an object, leaving out empty values ("" / null / undefined).
export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => u.append(k, x)); else u.append(k, String(v));
  }
  const s = u.toString();
  return s ? `?${s}` : '';
}

// An EventSource on `path` (a stream route with its query), with the key as access_token.
export function stream(path) {
  const key = apiKey();
  const url = key ? `${path}${path.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(key)}` : path;
  return new EventSource(url);
}

// Prometheus text → Map of "name{labels}" → number (comments skipped).
export function parseMetrics(text) {
  const out = new Map();
  for (const line of String(text).split('\n')) {
    if (!line || line[0] === '#') continue;
    const sp = line.lastIndexOf(' ');
    if (sp < 0) continue;
    const v = Number(line.slice(sp + 1));
    if (!Number.isNaN(v)) out.set(line.slice(0, sp), v);
  }
  return out;
}

// The sum of every series of metric `name` (all label sets), optionally only those whose labels
// include `labelPart` (e.g. 'status="5').
export function metricSum(metrics, name, labelPart = '') {
  let sum = 0;
  for (const [k, v] of metrics) {
    if ((k === name || k.startsWith(`${name}{`)) && (!labelPart || k.includes(labelPart))) sum += v;
  }
  return sum;
}
