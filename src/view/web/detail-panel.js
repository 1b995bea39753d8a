// One step in full: the conversation as the model saw it, the tool calls and results, the raw request and
// response (JSON as a foldable tree, secrets as redacted on the tape), and on replay tapes how the answer was found.
import { api } from './api.js';
import { fmtMs, fmtTokens, h, hashOf } from './dom.js';
import { bodyView, jsonView } from './json-view.js';

const TABS = [
  ['conversation', 'Conversation'],
  ['tools', 'Tools'],
  ['request', 'Request'],
  ['response', 'Response'],
  ['match', 'Match'],
];

/** Render `detail` (the /api/step answer) into `panel`; `tab` is remembered across steps. */
export function renderDetail(panel, detail, name, state) {
  const it = detail.item;
  const ex = detail.exchange;
  const tabs = TABS.filter(([id]) => id !== 'match' || detail.match !== null);
  if (!tabs.some(([id]) => id === state.tab)) state.tab = 'conversation';
  const body = h('div', { class: 'tab-body', id: 'tab-body' });
  const bar = h(
    'div',
    { class: 'tabs', role: 'tablist' },
    tabs.map(([id, label]) =>
      h(
        'button',
        {
          type: 'button',
          role: 'tab',
          class: id === state.tab ? 'tab active' : 'tab',
          dataset: { tab: id },
          'aria-selected': id === state.tab ? 'true' : 'false',
          onclick: () => {
            state.tab = id;
            for (const b of bar.children) b.classList.toggle('active', b.dataset.tab === id);
            show(id);
          },
        },
        label,
      ),
    ),
  );
  const show = (id) => body.replaceChildren(h('div', {}, section(id, detail, name)));
  panel.replaceChildren(
    h(
      'div',
      { class: 'detail-head' },
      h(
        'h2',
        {},
        `Step ${it.i}`,
        h('span', { class: 'muted small' }, ` (0-based, of ${detail.total})`),
        ' ',
        h('span', { class: `kind kind-${it.kind}` }, it.kind),
        ' ',
        it.target,
      ),
      h(
        'p',
        { class: 'facts' },
        `${ex.request.method} ${it.route}${ex.request.path} · status ${it.status ?? '—'} · start +${fmtMs(it.start)} · first byte ${fmtMs(it.ttfb)} · ${fmtMs(it.dur)}`,
        it.events ? ` · ${it.events} events` : '',
        it.tokens ? ` · ${fmtTokens(it.tokens)}` : '',
        it.match ? ` · ${it.match}${it.score !== null ? ` ${it.score.toFixed(2)}` : ''}` : '',
        ' · ',
        h('a', { href: api.rawUrl(name, it.id), target: '_blank', rel: 'noopener' }, 'raw exchange'),
      ),
      it.error ? h('p', { class: 'error-line' }, `! ${it.error}`) : null,
      detail.clipped ? h('p', { class: 'muted small' }, 'Long strings are clipped here; the raw exchange has them whole.') : null,
    ),
    bar,
    body,
  );
  show(state.tab);
}

function section(id, d, name) {
  if (id === 'conversation') return conversation(d);
  if (id === 'tools') return tools(d);
  if (id === 'request') return request(d.exchange);
  if (id === 'response') return response(d.exchange);
  return match(d, name);
}

function conversation(d) {
  if (d.conversationFrom === null) return [h('p', { class: 'muted' }, 'No LLM call at or before this step: no conversation yet.')];
  const head = h(
    'p',
    { class: 'muted small' },
    d.conversationFrom === d.item.i
      ? 'As the model saw it: this call’s request, then its answer.'
      : `As the model saw it at this step: the request of step ${d.conversationFrom}, then its answer.`,
  );
  return [head, h('ol', { class: 'conversation', id: 'conversation' }, d.conversation.map(message))];
}

function message(m) {
  return h(
    'li',
    { class: `msg role-${m.role}` },
    h('div', { class: 'msg-role' }, m.role, m.toolCallId ? h('span', { class: 'muted' }, ` · answers ${m.toolCallId}`) : null),
    m.thinking ? h('details', { class: 'thinking' }, h('summary', {}, 'thinking'), h('pre', { class: 'text' }, m.thinking)) : null,
    m.text ? h('pre', { class: 'text' }, m.text) : null,
    (m.toolCalls ?? []).map((c) =>
      h(
        'div',
        { class: 'tool-call' },
        h('span', { class: 'tool-name' }, `→ ${c.name}`),
        c.id ? h('span', { class: 'muted' }, ` ${c.id}`) : null,
        jsonView(c.arguments),
      ),
    ),
  );
}

function tools(d) {
  const ex = d.exchange;
  const out = [];
  if (ex.llm?.toolCalls?.length)
    out.push(
      h('h3', {}, 'Tool calls the model asked for here'),
      ...ex.llm.toolCalls.map((c) =>
        h('div', { class: 'tool-call' }, h('span', { class: 'tool-name' }, `→ ${c.name}`), jsonView(c.arguments)),
      ),
    );
  if (ex.mcp)
    out.push(
      h(
        'h3',
        {},
        `MCP ${ex.mcp.method}${ex.mcp.toolName ? ` · ${ex.mcp.toolName}` : ''}`,
        ex.mcp.isError ? h('span', { class: 'err' }, ' · tool error') : null,
      ),
      ex.mcp.arguments !== undefined ? h('div', {}, h('div', { class: 'label' }, 'arguments'), jsonView(ex.mcp.arguments)) : null,
      h(
        'div',
        {},
        h('div', { class: 'label' }, ex.mcp.error !== undefined ? 'error' : 'result'),
        jsonView(ex.mcp.error ?? ex.mcp.result ?? null),
      ),
      ex.mcp.notifications?.length
        ? h(
            'div',
            {},
            h('div', { class: 'label' }, `${ex.mcp.notifications.length} notification(s) before the answer`),
            jsonView(ex.mcp.notifications, { open: false }),
          )
        : null,
    );
  out.push(
    h(
      'h3',
      {},
      `Tool results so far (${d.toolResultsTotal}${d.toolResultsTotal > d.toolResults.length ? `; the latest ${d.toolResults.length} shown` : ''})`,
    ),
  );
  if (d.toolResults.length === 0) out.push(h('p', { class: 'muted' }, 'none'));
  for (const r of d.toolResults)
    out.push(
      h(
        'div',
        { class: r.isError ? 'tool-result err' : 'tool-result' },
        h(
          'div',
          { class: 'label' },
          `step ${r.step} · ${r.source} · ${r.name ?? '?'}${r.toolCallId ? ` (${r.toolCallId})` : ''}${r.isError ? ' · ERROR' : ''}`,
        ),
        typeof r.result === 'string' ? h('pre', { class: 'text' }, r.result) : jsonView(r.result, { open: false }),
      ),
    );
  return out;
}

function headersTable(headers) {
  const rows = Object.entries(headers ?? {});
  if (rows.length === 0) return h('p', { class: 'muted' }, '(no headers)');
  return h(
    'table',
    { class: 'headers' },
    rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', { class: v === '[REDACTED]' ? 'j-redacted' : '' }, v))),
  );
}

function request(ex) {
  const q = ex.request.query.length ? `?${ex.request.query.map(([k, v]) => `${k}=${v}`).join('&')}` : '';
  return [
    h(
      'p',
      { class: 'mono' },
      `${ex.request.method} ${ex.route}${ex.request.path}${q}`,
      ex.upstream ? h('span', { class: 'muted' }, `  → ${ex.upstream}`) : null,
    ),
    h('h3', {}, 'Headers'),
    headersTable(ex.request.headers),
    h('h3', {}, 'Body'),
    bodyView(ex.request.body),
  ];
}

function response(ex) {
  const out = [];
  if (ex.error) out.push(h('p', { class: 'error-line' }, `${ex.error.code} (${ex.error.phase}): ${ex.error.message}`));
  if (!ex.response) return out.length ? out : [h('p', { class: 'muted' }, 'No response was recorded.')];
  out.push(h('p', { class: 'mono' }, `status ${ex.response.status}`), h('h3', {}, 'Headers'), headersTable(ex.response.headers));
  if (ex.response.events) {
    out.push(h('h3', {}, `Stream: ${ex.response.events.length} events`));
    out.push(
      h(
        'table',
        { class: 'events' },
        h('tr', {}, h('th', {}, '+ms'), h('th', {}, 'event'), h('th', {}, 'data')),
        ex.response.events.map((e) =>
          h('tr', {}, h('td', { class: 'num' }, e.offsetMs.toFixed(1)), h('td', {}, e.event ?? 'message'), h('td', {}, eventData(e.data))),
        ),
      ),
    );
    if (ex.response.tail)
      out.push(h('p', { class: 'muted' }, 'bytes after the last event:'), h('pre', { class: 'text' }, ex.response.tail));
  } else {
    out.push(h('h3', {}, 'Body'), bodyView(ex.response.body));
  }
  return out;
}

function eventData(data) {
  try {
    return jsonView(JSON.parse(data), { open: false });
  } catch {
    return h('span', { class: 'mono' }, data);
  }
}

function match(d, name) {
  const m = d.match;
  const rows = [
    ['kind', m.kind],
    ['stage', m.stage ?? '—'],
    ['score', m.score !== undefined ? m.score.toFixed(3) : '—'],
    ['served from', m.source ? `exchange ${m.source} of ${m.tape ?? '?'}` : '—'],
    ['why', m.reason ?? '—'],
  ];
  return [
    h(
      'table',
      { class: 'headers', id: 'match' },
      rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))),
    ),
    m.served && m.tape
      ? h(
          'p',
          {},
          h(
            'a',
            { href: hashOf('tape', { name: m.tape, step: m.served.i }) },
            `open the recorded step ${m.served.i} (${m.served.target}) in ${m.tape}`,
          ),
        )
      : null,
    d.notes ? [h('h3', {}, 'Notes'), jsonView(d.notes)] : null,
    h('p', { class: 'muted small' }, `replay tape ${name}`),
  ];
}
