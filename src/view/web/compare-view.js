/* global document, location */
// Two runs side by side (typically a recording and its replay): verdict, score and ARS, configuration changes, the
// two tool sequences with the edit script highlighted, the compared steps (each with its step number on its own
// tape, as `tapedeck show` numbers it) with per-step deltas, blocked calls and the first divergence highlighted, the
// LLM calls with their output similarity, the final outputs, and the total deltas (B − A).
import { api } from './api.js';
import { fmtCost, fmtMs, fmtSigned, h, hashOf } from './dom.js';

const MARK_TEXT = { '-': 'only in A', '+': 'only in B', '~': 'moved' };

/** Where the runs part, in each tape's step numbers (as `tapedeck diff` says it). */
export function divergenceAt(d, a, b) {
  if (d.step !== null && d.replayStep !== null)
    return d.step === d.replayStep ? `step ${d.step}` : `step ${d.step} in ${a}, step ${d.replayStep} in ${b}`;
  if (d.step !== null) return `step ${d.step} in ${a} (${b} had ended)`;
  return `step ${d.replayStep} in ${b} (${a} had ended)`;
}

export async function compareView(main, params) {
  const { tapes } = await api.tapes();
  const names = tapes.filter((t) => t.ok).map((t) => t.name);
  const pick = (id, value) =>
    h(
      'select',
      { id },
      h('option', { value: '' }, '— pick a tape —'),
      names.map((n) => h('option', { value: n, selected: n === value }, n)),
    );
  const a = pick('pick-a', params.a);
  const b = pick('pick-b', params.b);
  const go = h('button', { type: 'submit', class: 'button' }, 'compare');
  const form = h('form', { class: 'toolbar', id: 'compare-form' }, h('h1', {}, 'Compare'), 'A ', a, ' B ', b, go);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (a.value && b.value) location.hash = hashOf('compare', { a: a.value, b: b.value });
  });
  main.append(form);
  if (!params.a || !params.b) {
    main.append(h('p', { class: 'muted' }, 'Pick two tapes: typically a recording (A) and a replay of it (B).'));
    return () => undefined;
  }
  const c = await api.compare(params.a, params.b);
  main.append(result(c));
  document.querySelector('.divergent')?.scrollIntoView({ block: 'nearest' });
  return () => undefined;
}

function result(c) {
  const d = c.diff;
  const A = c.a.name;
  const B = c.b.name;
  const stepLink = (name, cell) =>
    cell && cell.i !== null ? h('a', { href: hashOf('tape', { name, step: cell.i }) }, cell.label) : cell ? cell.label : '';
  const stepTd = (name, cell) =>
    h(
      'td',
      { class: cell?.blocked ? 'blocked' : cell?.error ? 'err' : '', title: cell?.blocked ?? '' },
      cell ? [h('span', { class: 'num step-no' }, cell.i ?? ''), ' ', cell.blocked ? '⊘ ' : '', stepLink(name, cell)] : '',
    );
  return h(
    'div',
    { class: 'compare', id: 'compare' },
    h(
      'div',
      { class: 'verdict' },
      h('span', { class: d.identical ? 'pill ok' : 'pill differs', id: 'verdict' }, d.identical ? 'identical' : 'differs'),
      h('span', { class: 'score', id: 'score' }, `score ${d.score.toFixed(2)}`),
      h('span', { class: 'score', id: 'ars' }, `ARS ${d.ars.score.toFixed(2)} (${d.ars.band})`),
      h('span', { class: 'muted' }, ` ${A} → ${B}`),
    ),
    d.firstDivergence
      ? h(
          'p',
          { class: 'divergence-banner', id: 'first-divergence' },
          h('b', {}, `First divergence at ${divergenceAt(d.firstDivergence, A, B)}: `),
          d.firstDivergence.reason,
        )
      : h('p', { class: 'muted', id: 'first-divergence' }, 'No divergence: the runs match step for step.'),
    d.configChanges.length
      ? h(
          'section',
          { class: 'card' },
          h('h2', {}, 'Configuration'),
          h(
            'table',
            { class: 'headers' },
            d.configChanges.map((ch) =>
              h(
                'tr',
                {},
                h('th', {}, ch.field),
                h('td', {}, JSON.stringify(ch.original)),
                h('td', {}, '→'),
                h('td', {}, JSON.stringify(ch.replay)),
              ),
            ),
          ),
        )
      : null,
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Tool calls'),
      c.tools.length === 0
        ? h('p', { class: 'muted' }, 'Neither run called a tool.')
        : h(
            'table',
            { class: 'side', id: 'tool-table' },
            h('tr', {}, h('th', {}, '#'), h('th', {}, `A · ${A}`), h('th', {}, `B · ${B}`)),
            c.tools.map((r, i) => h('tr', {}, h('td', { class: 'num' }, i), toolTd(r.a), toolTd(r.b))),
          ),
      d.toolSequenceDiff.length === 0
        ? h('p', { class: 'muted' }, 'same calls, same order, same arguments')
        : h(
            'ul',
            { class: 'edits', id: 'edits' },
            d.toolSequenceDiff.map((e) =>
              h(
                'li',
                { class: `edit edit-${e.kind}` },
                e.kind === 'added'
                  ? `+ added ${e.toolName} (args ${e.argsHash}) at ${e.atIndex} in B`
                  : e.kind === 'removed'
                    ? `− removed ${e.toolName} (args ${e.argsHash}) at ${e.atIndex} in A`
                    : `~ moved ${e.toolName} (args ${e.argsHash}): ${e.from} → ${e.to}`,
              ),
            ),
          ),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Steps (LLM calls and MCP requests side by side; each with its step number on its tape)'),
      h(
        'table',
        { class: 'side', id: 'step-table' },
        h('tr', {}, h('th', {}, `A · ${A}`), h('th', {}, `B · ${B}`), h('th', {}, 'Δ time'), h('th', {}, 'Δ tokens')),
        c.steps.map((r) => [
          h(
            'tr',
            { class: r.divergent ? 'divergent' : '', dataset: { step: r.a?.i ?? '', replayStep: r.b?.i ?? '' } },
            stepTd(A, r.a),
            stepTd(B, r.b),
            h('td', { class: 'num' }, r.delta.durationMs === null ? '' : fmtSigned(r.delta.durationMs, fmtMs)),
            h('td', { class: 'num' }, r.delta.tokens === null ? '' : fmtSigned(r.delta.tokens)),
          ),
          r.divergent
            ? h('tr', { class: 'divergent-reason' }, h('td', { colspan: 4 }, `first divergence: ${d.firstDivergence.reason}`))
            : null,
        ]),
      ),
    ),
    d.steps.length
      ? h(
          'section',
          { class: 'card' },
          h('h2', {}, 'LLM calls (B − A), call by call'),
          h(
            'table',
            { class: 'side', id: 'call-table' },
            h(
              'tr',
              {},
              h('th', {}, 'call'),
              h('th', { title: 'its step number on each tape (A/B when they differ)' }, 'step'),
              h('th', {}, `A · ${A}`),
              h('th', {}, `B · ${B}`),
              h('th', { title: 'how alike the two answers are (0 to 1)' }, 'output similarity'),
              h('th', {}, 'Δ tokens'),
              h('th', {}, 'Δ cost'),
              h('th', {}, 'Δ time'),
            ),
            d.steps.map((s) =>
              h(
                'tr',
                {},
                h('td', { class: 'num' }, s.call),
                h('td', { class: 'num' }, s.step === s.replayStep ? s.step : `${s.step ?? '-'}/${s.replayStep ?? '-'}`),
                h('td', {}, s.original ?? '-'),
                h('td', {}, s.replay ?? '-'),
                h('td', { class: 'num' }, s.outputSimilarity === null ? '-' : s.outputSimilarity.toFixed(2)),
                h('td', { class: 'num' }, fmtSigned(s.tokensDelta)),
                h('td', { class: 'num' }, s.costDelta === null ? '?' : fmtSigned(s.costDelta, fmtCost)),
                h('td', { class: 'num' }, fmtSigned(s.durationDeltaMs, fmtMs)),
              ),
            ),
          ),
        )
      : null,
    h(
      'section',
      { class: 'card' },
      h('h2', {}, `Final output: ${d.outputDiff.equal ? 'equal' : `differs (similarity ${d.outputDiff.similarity.toFixed(2)})`}`),
      h(
        'div',
        { class: 'outputs' },
        h('div', {}, h('div', { class: 'label' }, A), h('pre', { class: 'text' }, d.outputDiff.original ?? '(none)')),
        h('div', {}, h('div', { class: 'label' }, B), h('pre', { class: 'text' }, d.outputDiff.replay ?? '(none)')),
      ),
    ),
    h(
      'section',
      { class: 'card', id: 'deltas' },
      h('h2', {}, 'Totals (B − A)'),
      h(
        'p',
        {},
        `LLM calls ${fmtSigned(d.iterationsDelta)} · tokens ${fmtSigned(d.tokensDelta)} (in ${fmtSigned(d.tokensDeltaDetail.input)}, out ${fmtSigned(d.tokensDeltaDetail.output)}) · cost ${d.costDelta === null ? '? (a model has no price)' : fmtSigned(d.costDelta, fmtCost)} · duration ${fmtSigned(d.durationDeltaMs, fmtMs)}`,
      ),
      h(
        'p',
        { id: 'ars-detail' },
        `ARS ${d.ars.score.toFixed(2)} ${d.ars.band} = 0.7 × output ${d.ars.outputSimilarity.toFixed(2)} + 0.3 × tool accuracy ${d.ars.toolAccuracy.toFixed(2)} (${d.ars.usedTools}/${d.ars.originalTools} tools used, ${d.ars.newTools} new, ${d.ars.unusedTools} unused)`,
      ),
    ),
  );
}

function toolTd(cell) {
  if (!cell) return h('td', {});
  const mark = cell.mark ? `mark mark-${{ '-': 'removed', '+': 'added', '~': 'moved' }[cell.mark]}` : '';
  return h(
    'td',
    {
      class: `${mark}${cell.blocked ? ' blocked' : ''}`.trim(),
      title: [cell.mark ? MARK_TEXT[cell.mark] : '', cell.blocked ? `blocked: ${cell.blocked}` : ''].filter(Boolean).join('; '),
    },
    h('span', { class: 'mark-sign' }, cell.mark ?? ' '),
    ' ',
    cell.blocked ? h('span', { class: 'blocked-sign' }, '⊘ ') : null,
    h('span', { class: 'tool-name' }, cell.toolName),
    h('span', { class: 'mono small' }, `(${cell.args})`),
  );
}
