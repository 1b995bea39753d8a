/* global URLSearchParams */
// The viewer's JSON API. Every call says what failed in the server's own words.

export async function getJson(path, params = {}) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null));
  const res = await fetch(`/api/${path}${q.toString() ? `?${q}` : ''}`, { headers: { accept: 'application/json' } });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(body?.error?.message ?? `${res.status} ${res.statusText}`);
  return body;
}

export const api = {
  tapes: () => getJson('tapes'),
  tape: (name) => getJson('tape', { name }),
  rows: (name, from, count) => getJson('rows', { name, from, count }),
  overview: (name) => getJson('overview', { name }),
  /** A step by exchange id ({ id }) or timeline position ({ i }). */
  step: (name, at) => getJson('step', { name, ...at }),
  debrief: (name) => getJson('debrief', { name }),
  compare: (a, b) => getJson('compare', { a, b }),
  rawUrl: (name, id) => `/api/raw?${new URLSearchParams({ name, id })}`,
  liveUrl: (name) => `/api/live?${new URLSearchParams({ name })}`,
};
