// A JSON value as a foldable tree: small objects open, large ones folded (their children are built only when
// opened), long strings shortened with a button to show them whole. Redacted secrets are shown as the tape has
// them ("[REDACTED]"), marked so they stand out.
import { h } from './dom.js';

const OPEN_BELOW = 2000; // characters of JSON: a node this small starts open
const LONG_STRING = 600;

export function jsonView(value, opts = {}) {
  return h('div', { class: 'json' }, node(value, opts.open ?? true, 0));
}

function node(value, open, depth) {
  if (value === null) return h('span', { class: 'j-null' }, 'null');
  if (typeof value === 'string') return stringNode(value);
  if (typeof value === 'number') return h('span', { class: 'j-num' }, String(value));
  if (typeof value === 'boolean') return h('span', { class: 'j-bool' }, String(value));
  if (typeof value !== 'object') return h('span', {}, String(value));
  const isArray = Array.isArray(value);
  const entries = isArray ? value.map((v, i) => [i, v]) : Object.entries(value);
  if (entries.length === 0) return h('span', { class: 'j-punct' }, isArray ? '[]' : '{}');
  const size = approxSize(value);
  const details = h(
    'details',
    { class: 'j-node' },
    h(
      'summary',
      {},
      h('span', { class: 'j-punct' }, isArray ? `[ ${entries.length} items` : `{ ${entries.length} keys`),
      size > OPEN_BELOW ? h('span', { class: 'j-size' }, ` · ${humanSize(size)}`) : null,
    ),
  );
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    const list = h('div', { class: 'j-children' });
    for (const [k, v] of entries)
      list.append(
        h('div', { class: 'j-entry' }, isArray ? null : h('span', { class: 'j-key' }, `${JSON.stringify(k)}: `), node(v, false, depth + 1)),
      );
    details.append(list);
  };
  if (open && (depth === 0 || size <= OPEN_BELOW)) {
    build();
    details.open = true;
  }
  details.addEventListener('toggle', () => details.open && build());
  return details;
}

function stringNode(s) {
  const cls = s === '[REDACTED]' ? 'j-str j-redacted' : 'j-str';
  if (s.length <= LONG_STRING) return h('span', { class: cls }, JSON.stringify(s));
  const span = h('span', { class: cls }, JSON.stringify(s.slice(0, LONG_STRING)).slice(0, -1) + '…"');
  const more = h('button', { class: 'link', type: 'button' }, `show all ${s.length.toLocaleString()} characters`);
  more.addEventListener('click', () => {
    span.textContent = JSON.stringify(s);
    more.remove();
  });
  return h('span', {}, span, ' ', more);
}

/** Roughly how many characters the JSON of a value takes, stopping early for huge values. */
function approxSize(value, budget = 200_000) {
  let n = 0;
  const walk = (v) => {
    if (n > budget) return;
    if (typeof v === 'string') n += v.length + 2;
    else if (v === null || typeof v !== 'object') n += String(v).length;
    else
      for (const [k, x] of Object.entries(v)) {
        n += k.length + 4;
        walk(x);
      }
  };
  walk(value);
  return n;
}

function humanSize(chars) {
  return chars >= 200_000 ? '> 200 KB' : chars >= 1024 ? `${(chars / 1024).toFixed(1)} KB` : `${chars} B`;
}

/** A body from the tape: JSON as a tree, text as text, base64 as a note. */
export function bodyView(body) {
  if (!body || body.kind === 'empty') return h('p', { class: 'muted' }, '(no body)');
  if (body.kind === 'json') return jsonView(body.json);
  if (body.kind === 'text') return h('pre', { class: 'text' }, body.text);
  if (body.kind === 'base64')
    return h('p', { class: 'muted' }, `binary body, ${Math.round((body.base64.length * 3) / 4)} bytes (base64 on the tape)`);
  if (body.kind === 'file') return h('p', { class: 'muted' }, `side file ${body.file} (${body.bytes} bytes, not readable)`);
  return jsonView(body);
}
