/* global document, Node, URLSearchParams */
// Small DOM and formatting helpers shared by the views. No framework: elements are built with h() and replaced whole.

/**
 * Build an element: h('div', {class: 'row', onclick: fn, dataset: {i: 3}}, child, 'text', [more]).
 * Attributes named on* become listeners; `dataset` sets data-*; null/false children are skipped.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined) return '–';
  if (ms === 0) return '0 ms';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function fmtSigned(n, format = String) {
  if (n === null || n === undefined) return '–';
  if (n === 0) return format(0);
  return n > 0 ? `+${format(n)}` : `−${format(-n)}`;
}

export function fmtTokens(t) {
  if (!t) return '';
  if (t.input !== undefined || t.output !== undefined) return `${t.input ?? '?'}→${t.output ?? '?'} tok`;
  return t.total !== undefined ? `${t.total} tok` : '';
}

export function fmtCost(usd) {
  if (usd === null || usd === undefined) return '–';
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function fmtDate(iso) {
  if (!iso) return '';
  return iso.replace('T', ' ').slice(0, 19);
}

/** Parse `#/view?x=1&y=2` into { view, params }. */
export function parseHash(hash) {
  const raw = hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const view = q === -1 ? raw : raw.slice(0, q);
  const params = new URLSearchParams(q === -1 ? '' : raw.slice(q + 1));
  return { view: view || 'tapes', params: Object.fromEntries(params.entries()) };
}

export function hashOf(view, params = {}) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  const s = q.toString();
  return `#/${view}${s ? `?${s}` : ''}`;
}
