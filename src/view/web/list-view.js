// The tapes: what `tapedeck list` prints, newest first, each replay tape under the tape it replayed, searchable.
import { api } from './api.js';
import { fmtCost, fmtDate, fmtMs, h, hashOf } from './dom.js';

export async function listView(main) {
  const data = await api.tapes();
  const search = h('input', { type: 'search', id: 'search', placeholder: 'search tapes (name, model of replay…)', autofocus: true });
  const body = h('tbody');
  const table = h(
    'table',
    { class: 'tapes' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['tape', 'created', 'steps', 'LLM', 'tools', 'tokens', 'cost', 'duration', 'errors', 'replay', ''].map((t) => h('th', {}, t)),
      ),
    ),
    body,
  );
  const empty = h('p', { class: 'muted' }, `no tapes in ${data.dir}: record one with tapedeck record`);
  main.append(
    h(
      'div',
      { class: 'toolbar' },
      h('h1', {}, 'Tapes'),
      h('span', { class: 'muted' }, data.dir),
      search,
      h('a', { href: hashOf('compare'), class: 'button' }, 'compare two tapes'),
    ),
    data.tapes.length === 0 ? empty : table,
  );

  const groups = groupByOriginal(data.tapes);
  const draw = () => {
    const q = search.value.trim().toLowerCase();
    body.replaceChildren();
    for (const g of groups) {
      const hits = [g.tape, ...g.replays].filter(
        (t) => q === '' || t.name.toLowerCase().includes(q) || (t.replayOf?.tape ?? '').toLowerCase().includes(q),
      );
      if (hits.length === 0) continue;
      body.append(row(g.tape, false, g.replays.length));
      for (const r of g.replays) if (hits.includes(r) || hits.includes(g.tape)) body.append(row(r, true, 0));
    }
  };
  search.addEventListener('input', draw);
  draw();
  return () => undefined;
}

/** Originals newest first; each with its replays (newest first). A replay whose original is gone stands alone. */
function groupByOriginal(tapes) {
  const newest = (a, b) => (b.createdAt ?? b.modifiedAt).localeCompare(a.createdAt ?? a.modifiedAt);
  const byName = new Map(tapes.map((t) => [t.name, t]));
  const replays = new Map();
  const roots = [];
  for (const t of tapes) {
    const orig = t.ok ? t.replayOf?.tape : undefined;
    if (orig !== undefined && byName.has(orig) && orig !== t.name) {
      if (!replays.has(orig)) replays.set(orig, []);
      replays.get(orig).push(t);
    } else roots.push(t);
  }
  return roots.sort(newest).map((t) => ({ tape: t, replays: (replays.get(t.name) ?? []).sort(newest) }));
}

function row(t, indented, replayCount) {
  const open = hashOf('tape', { name: t.name });
  if (!t.ok)
    return h('tr', { class: 'bad', dataset: { name: t.name } }, h('td', {}, t.name), h('td', { colspan: 10 }, `unreadable: ${t.error}`));
  const m = t.matches;
  const replay = m
    ? `of ${t.replayOf?.tape ?? '?'}: exact ${m.exact} · semantic ${m.semantic} · live ${m.live} · blocked ${m.blocked} · miss ${m.miss}`
    : replayCount > 0
      ? `${replayCount} replay(s)`
      : '';
  return h(
    'tr',
    { class: indented ? 'replay' : '', dataset: { name: t.name } },
    h('td', {}, indented ? h('span', { class: 'indent' }, '↳ ') : null, h('a', { href: open, class: 'tape-link' }, t.name)),
    h('td', { class: 'nowrap' }, fmtDate(t.createdAt)),
    h('td', { class: 'num' }, t.exchanges),
    h('td', { class: 'num' }, t.llmCalls),
    h('td', { class: 'num' }, t.toolCalls),
    h('td', { class: 'num' }, t.tokens.total),
    h('td', { class: 'num' }, fmtCost(t.cost)),
    h('td', { class: 'num' }, fmtMs(t.durationMs)),
    h('td', { class: t.errors > 0 ? 'num err' : 'num' }, t.errors || ''),
    h('td', { class: 'small' }, replay, t.problems.length > 0 ? h('span', { class: 'warn' }, ` · ${t.problems.length} bad line(s)`) : null),
    h(
      'td',
      { class: 'nowrap' },
      h('a', { href: hashOf('debrief', { name: t.name }) }, 'debrief'),
      t.replayOf ? [' · ', h('a', { href: hashOf('compare', { a: t.replayOf.tape, b: t.name }) }, 'compare')] : null,
    ),
  );
}
