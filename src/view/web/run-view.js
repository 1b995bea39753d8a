/* global document, history, EventSource, requestAnimationFrame, HTMLElement */
// A run: the lanes overview (LLM calls and MCP/HTTP calls against time), the waterfall (one row per step: start,
// time to first byte, duration, stream events as ticks; errors, blocked calls and semantic matches marked) and
// the opened step in full. Rows are fetched a page at a time as they scroll into view; left/right step through.
import { api } from './api.js';
import { renderDetail } from './detail-panel.js';
import { clear, fmtDate, fmtMs, fmtTokens, h, hashOf } from './dom.js';
import { drawOverview } from './overview.js';
import { virtualList } from './virtual-list.js';

const PAGE = 200;
const ROW = 26;
const GLYPH = { e: '!', b: '⊘', m: '?', s: '≈', '.': '' };

/**
 * A URL's `step=`: the step number, as `tapedeck show` prints it; a link made before it was (an exchange id, such as
 * `000042` or `000042.1`: never a plain number) still opens its exchange.
 */
function stepParam(step) {
  if (step === undefined || step === null || step === '') return null;
  return /^(0|[1-9]\d*)$/.test(step) ? { i: Number(step) } : { id: step };
}

export async function runView(main, params) {
  const name = params.name;
  const state = {
    name,
    meta: null,
    pages: new Map(),
    loading: new Set(),
    selected: null,
    // The open step's exchange id: it stays open while a live tape grows, even where its number shifts.
    selectedId: null,
    tab: 'conversation',
    zoom: 'run',
    scale: null,
    version: 0,
    seq: 0,
  };
  const [meta, first] = await Promise.all([api.tape(name), api.rows(name, 0, PAGE)]);
  state.meta = meta;
  state.version = meta.version;
  state.pages.set(0, first.items);

  const head = header(meta);
  const canvas = h('canvas', { class: 'overview', id: 'overview', height: 64 });
  const ruler = h('div', { class: 'ruler' });
  const listBox = h('div', { class: 'waterfall', id: 'waterfall', tabindex: '0' });
  const panel = h('section', { class: 'detail', id: 'detail' }, h('p', { class: 'muted' }, 'Click a step (or press → ) to open it.'));
  const zoom = h('button', { type: 'button', class: 'button small', id: 'zoom' }, 'time axis: whole run');
  const live = h('span', { class: 'live-badge', id: 'live-badge', hidden: true }, '● live');
  head.querySelector('.links').append(h('span', { class: 'head-actions' }, live, zoom));
  main.append(head, canvas, h('div', { class: 'split' }, h('div', { class: 'left' }, ruler, listBox), panel));

  const item = (i) => state.pages.get(Math.floor(i / PAGE))?.[i % PAGE] ?? null;
  const need = (i) => {
    const p = Math.floor(i / PAGE);
    if (state.pages.has(p) || state.loading.has(p)) return;
    state.loading.add(p);
    const version = state.version;
    api.rows(name, p * PAGE, PAGE).then(
      (r) => {
        state.loading.delete(p);
        if (version !== state.version) return;
        state.pages.set(p, r.items);
        list.fill();
      },
      (err) => (state.loading.delete(p), banner(main, err)),
    );
  };

  const scaleOf = () => {
    if (state.zoom === 'run' || state.scale === null) return { t0: 0, t1: Math.max(state.meta.spanMs, 1) };
    return state.scale;
  };

  const render = (i) => {
    const it = item(i);
    if (!it) {
      need(i);
      return null;
    }
    const mark = markOf(it);
    const { t0, t1 } = scaleOf();
    const pct = (t) => `${((100 * (t - t0)) / (t1 - t0)).toFixed(3)}%`;
    const bar = h('div', { class: 'bar' });
    bar.style.left = pct(it.start);
    bar.style.width = `max(2px, ${((100 * it.dur) / (t1 - t0)).toFixed(3)}%)`;
    if (it.ttfb !== null && it.dur > 0) {
      const wait = h('div', { class: 'wait' });
      wait.style.width = `${Math.min(100, (100 * it.ttfb) / it.dur).toFixed(2)}%`;
      bar.append(wait);
    }
    for (const t of it.ticks) {
      const tick = h('div', { class: 'tick' });
      tick.style.left = it.dur > 0 ? `${Math.min(100, (100 * t) / it.dur).toFixed(2)}%` : '0';
      bar.append(tick);
    }
    const title = `step ${it.i} · ${it.kind} ${it.target} · start +${fmtMs(it.start)} · first byte ${fmtMs(it.ttfb)} · ${fmtMs(it.dur)}${it.events ? ` · ${it.events} events` : ''}${it.error ? ` · ${it.error}` : ''}`;
    return h(
      'div',
      {
        class: `row lane-${it.lane} mark-${mark === '.' ? 'ok' : mark}${i === state.selected ? ' selected' : ''}`,
        dataset: { i, id: it.id },
        title,
        onclick: () => select(i),
      },
      h('span', { class: 'c-i' }, h('span', { class: 'glyph' }, GLYPH[mark]), i),
      h('span', { class: `kind kind-${it.kind}` }, it.kind),
      h('span', { class: 'c-what' }, h('b', {}, it.target), ' ', h('span', { class: 'muted' }, summary(it))),
      h('span', { class: 'c-bar' }, bar),
      h('span', { class: 'c-dur' }, fmtMs(it.dur)),
    );
  };
  const placeholder = (i) =>
    h(
      'div',
      { class: 'row placeholder', dataset: { i, placeholder: '1' } },
      h('span', { class: 'c-i' }, i),
      h('span', { class: 'muted' }, '…'),
    );

  let overview = null;
  const onRange = (first, last) => {
    const visible = [];
    for (let i = first; i <= last; i++) if (item(i)) visible.push(item(i));
    if (visible.length > 0) {
      const t0 = Math.min(...visible.map((it) => it.start));
      const t1 = Math.max(...visible.map((it) => it.start + it.dur), t0 + 1);
      const changed = !state.scale || Math.abs(state.scale.t0 - t0) > 0.5 || Math.abs(state.scale.t1 - t1) > 0.5;
      state.scale = { t0, t1 };
      if (overview) overview.band(t0, t1);
      if (changed && state.zoom === 'rows') requestAnimationFrame(() => list.refresh());
    }
    drawRuler(ruler, scaleOf());
  };
  const list = virtualList({ container: listBox, rowHeight: ROW, total: meta.total, render, placeholder, onRange });

  const loadOverview = async () => {
    const o = await api.overview(name);
    overview = drawOverview(canvas, o, (i) => select(i));
    if (state.scale) overview.band(state.scale.t0, state.scale.t1);
  };
  void loadOverview().catch((err) => banner(main, err));

  zoom.addEventListener('click', () => {
    state.zoom = state.zoom === 'run' ? 'rows' : 'run';
    zoom.textContent = state.zoom === 'run' ? 'time axis: whole run' : 'time axis: rows in view';
    list.refresh();
    drawRuler(ruler, scaleOf());
  });

  const mark = (i) => {
    state.selected = i;
    for (const el of listBox.querySelectorAll('.row.selected')) el.classList.remove('selected');
    listBox.querySelector(`.row[data-i="${i}"]`)?.classList.add('selected');
    list.scrollTo(i);
  };

  /** Open step `i` (or the step with exchange id `opts.id`, whose position is known once the server answers). */
  async function select(i, opts = {}) {
    if (opts.id === undefined && (i < 0 || i >= state.meta.total)) {
      if (opts.fromUrl) panel.replaceChildren(h('p', { class: 'error-line' }, `no step ${i} on "${name}" (${state.meta.total} steps)`));
      return;
    }
    if (opts.id === undefined) mark(i);
    const seq = ++state.seq;
    panel.classList.add('loading');
    try {
      const d = await api.step(name, opts.id !== undefined ? { id: opts.id } : { i });
      if (seq !== state.seq) return;
      if (d.item.i !== state.selected) mark(d.item.i);
      state.selectedId = d.item.id;
      // The URL names the step by its number, as tapedeck show does: a reload or a shared link comes back to it.
      history.replaceState(null, '', hashOf('tape', { name, step: d.item.i }));
      renderDetail(panel, d, name, state);
    } catch (err) {
      if (seq === state.seq) panel.replaceChildren(h('p', { class: 'error-line' }, String(err.message ?? err)));
    } finally {
      if (seq === state.seq) panel.classList.remove('loading');
    }
  }

  const onKey = (e) => {
    if (e.target instanceof HTMLElement && e.target.closest('input, textarea, select')) return;
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const cur = state.selected ?? -1;
    if (e.key === 'ArrowRight' || e.key === 'j') select(Math.min(cur + 1, state.meta.total - 1));
    else if (e.key === 'ArrowLeft' || e.key === 'k') select(Math.max(cur - 1, 0));
    else if (e.key === 'Home') select(0);
    else if (e.key === 'End') select(state.meta.total - 1);
    else return;
    e.preventDefault();
  };
  document.addEventListener('keydown', onKey);

  // Live: the server polls the file and says when it changed; fetch what is shown again.
  const source = new EventSource(api.liveUrl(name));
  source.addEventListener('update', async (ev) => {
    const u = JSON.parse(ev.data);
    if (u.version === state.version) return;
    const follow = list.atEnd();
    state.version = u.version;
    state.meta = await api.tape(name);
    state.pages.clear();
    live.hidden = false;
    live.textContent = `● live · ${state.meta.total} steps`;
    head.querySelector('.facts').textContent = facts(state.meta);
    list.refresh(state.meta.total);
    if (follow) list.scrollTo(state.meta.total - 1);
    void loadOverview();
    if (state.selectedId) void select(0, { id: state.selectedId });
  });

  /** Open the step a URL names (`step=`). */
  const open = (asked) => {
    if (asked?.id !== undefined) return asked.id === state.selectedId ? undefined : select(0, { id: asked.id });
    if (asked?.i !== undefined && asked.i !== state.selected) return select(asked.i, { fromUrl: true });
    return undefined;
  };
  await open(stepParam(params.step));
  listBox.focus();

  return {
    update(p) {
      void open(stepParam(p.step));
    },
    dispose() {
      source.close();
      document.removeEventListener('keydown', onKey);
      list.destroy();
    },
  };
}

function markOf(it) {
  if (it.match === 'blocked') return 'b';
  if (it.match === 'miss') return 'm';
  if (it.error !== null) return 'e';
  if (it.match === 'semantic') return 's';
  return '.';
}

function summary(it) {
  const parts = [];
  if (it.args) parts.push(it.args);
  if (it.result) parts.push(`→ ${it.result}`);
  if (it.tokens) parts.push(`· ${fmtTokens(it.tokens)}`);
  if (it.error) parts.push(`· ${it.error}`);
  return parts.join(' ');
}

function facts(meta) {
  const h = meta.header;
  return [
    h.mode === 'replay' ? `replay of ${h.replayOf?.tape ?? '?'}` : 'recording',
    `created ${fmtDate(h.createdAt)}`,
    `${meta.total} steps (${meta.lanes.llm} LLM, ${meta.lanes.tool} MCP/HTTP)`,
    `${fmtMs(meta.spanMs)}`,
    meta.errors ? `${meta.errors} failing` : 'no failures',
    meta.problems.length ? `${meta.problems.length} unreadable line(s)` : '',
  ]
    .filter(Boolean)
    .join(' · ');
}

function header(meta) {
  const orig = meta.header.replayOf?.tape;
  return h(
    'div',
    { class: 'run-head' },
    h('h1', {}, meta.name),
    h('p', { class: 'facts' }, facts(meta)),
    h(
      'p',
      { class: 'links' },
      h('a', { href: hashOf('debrief', { name: meta.name }) }, 'debrief'),
      orig ? [' · ', h('a', { href: hashOf('compare', { a: orig, b: meta.name }), id: 'compare-original' }, `compare with ${orig}`)] : null,
      orig ? [' · ', h('a', { href: hashOf('tape', { name: orig }) }, `open ${orig}`)] : null,
      ' · ',
      h('span', { class: 'muted small' }, 'keys: ← → step · Home/End'),
      h(
        'span',
        { class: 'legend' },
        h('span', { class: 'lg lg-llm' }, 'LLM'),
        h('span', { class: 'lg lg-tool' }, 'MCP/HTTP'),
        h('span', { class: 'lg lg-wait' }, 'waiting for first byte'),
        h('span', { class: 'lg lg-e' }, '! error'),
        h('span', { class: 'lg lg-b' }, '⊘ blocked'),
        h('span', { class: 'lg lg-s' }, '≈ semantic match'),
      ),
    ),
  );
}

/** Time marks over the bar column (the ruler has the rows' columns, so its bar column lines up with theirs). */
function drawRuler(ruler, { t0, t1 }) {
  const bar = h('span', { class: 'c-bar' });
  for (let k = 0; k <= 3; k++) {
    const mark = h('span', { class: 'ruler-mark' }, fmtMs(t0 + ((t1 - t0) * k) / 3));
    mark.style.left = `${(k * 100) / 3}%`;
    bar.append(mark);
  }
  clear(ruler).append(
    h('span', { class: 'c-i' }, '#'),
    h('span', { class: 'kind' }),
    h('span', { class: 'c-what' }, 'step'),
    bar,
    h('span', { class: 'c-dur' }, 'time'),
  );
}

function banner(main, err) {
  main.prepend(h('p', { class: 'error-line' }, String(err?.message ?? err)));
}
