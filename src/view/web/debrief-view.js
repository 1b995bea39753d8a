/* global location */
// The decision debrief: the goal, the path of tool calls with the model's own stated reasons, the assumptions it
// stated, how the run ended, and totals. Nothing is inferred: a call with no stated reason says so.
import { api } from './api.js';
import { fmtMs, h, hashOf } from './dom.js';
import { jsonView } from './json-view.js';

const SOURCES = { rationale: 'rationale block', 'text-before-call': 'said before the call', thinking: 'thinking' };

export async function debriefView(main, params) {
  const name = params.name;
  const d = await api.debrief(name);
  const step = (i) => h('a', { href: hashOf('tape', { name }), onclick: (e) => (e.preventDefault(), openStep(name, i)) }, `step ${i}`);
  const t = d.totals;
  main.append(
    h(
      'div',
      { class: 'run-head' },
      h('h1', {}, `Debrief · ${name}`),
      h('p', { class: 'links' }, h('a', { href: hashOf('tape', { name }) }, 'timeline')),
    ),
    h(
      'section',
      { class: 'card', id: 'goal' },
      h('h2', {}, 'Goal'),
      d.goal ? h('pre', { class: 'text' }, d.goal) : h('p', { class: 'muted' }, 'no user message on this tape'),
    ),
    h(
      'section',
      { class: 'card', id: 'path' },
      h('h2', {}, `Path: ${d.decisions.length} tool call(s)`),
      d.decisions.length === 0
        ? h('p', { class: 'muted' }, 'The model called no tool.')
        : h(
            'ol',
            { class: 'decisions' },
            d.decisions.map((dec) =>
              h(
                'li',
                { class: 'decision' },
                h(
                  'div',
                  {},
                  h('span', { class: 'tool-name' }, dec.tool),
                  ' · ',
                  step(dec.step),
                  dec.toolCallId ? h('span', { class: 'muted' }, ` · ${dec.toolCallId}`) : null,
                ),
                jsonView(dec.arguments),
                dec.reasons.length === 0
                  ? h('p', { class: 'muted' }, 'the model stated no reason')
                  : dec.reasons.map((r) =>
                      h(
                        'blockquote',
                        { class: `reason reason-${r.source}` },
                        h('span', { class: 'label' }, SOURCES[r.source] ?? r.source),
                        h('pre', { class: 'text' }, r.text),
                        r.alternatives?.length
                          ? h(
                              'ul',
                              { class: 'alternatives' },
                              r.alternatives.map((alt) =>
                                h(
                                  'li',
                                  {},
                                  `instead of ${alt.option}`,
                                  alt.rejectedBecause ? `: rejected because ${alt.rejectedBecause}` : '',
                                ),
                              ),
                            )
                          : null,
                      ),
                    ),
                dec.result
                  ? h(
                      'div',
                      { class: dec.result.isError ? 'tool-result err' : 'tool-result' },
                      h('span', { class: 'label' }, `result (`, step(dec.result.step), `)${dec.result.isError ? ' · ERROR' : ''}`),
                      typeof dec.result.value === 'string'
                        ? h('pre', { class: 'text' }, dec.result.value)
                        : jsonView(dec.result.value, { open: false }),
                    )
                  : null,
              ),
            ),
          ),
    ),
    h(
      'section',
      { class: 'card', id: 'assumptions' },
      h('h2', {}, 'Assumptions the model stated'),
      d.assumptions.length === 0
        ? h('p', { class: 'muted' }, 'none stated')
        : h(
            'ul',
            {},
            d.assumptions.map((a) =>
              h(
                'li',
                { title: a.text },
                step(a.step),
                ': ',
                a.assumption,
                a.because ? h('span', { class: 'muted' }, ` (because ${a.because})`) : null,
              ),
            ),
          ),
    ),
    h(
      'section',
      { class: 'card', id: 'ending' },
      h('h2', {}, 'Ending'),
      h('p', {}, d.ending.step === null ? 'no LLM call' : [step(d.ending.step), ` · stop reason ${d.ending.stopReason ?? '—'}`]),
      d.ending.error ? h('p', { class: 'error-line' }, d.ending.error) : null,
      d.ending.finalAnswer ? h('pre', { class: 'text' }, d.ending.finalAnswer) : null,
    ),
    h(
      'section',
      { class: 'card', id: 'totals' },
      h('h2', {}, 'Totals'),
      h(
        'p',
        {},
        `${t.steps} steps · ${t.llmCalls} LLM calls · ${t.toolCalls} tool calls · ${t.inputTokens}→${t.outputTokens} tokens · ${fmtMs(t.durationMs)} · ${t.errors} failing`,
      ),
    ),
  );
  return () => undefined;
}

function openStep(name, i) {
  // `step=` is the step number, as the debrief and `tapedeck show` give it.
  location.hash = hashOf('tape', { name, step: i });
}
