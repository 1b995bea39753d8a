/**
 * `tapedeck diff --markdown`: the diff as a pull-request comment. The verdict first (identical, differs, or which
 * gate it fails), then one table of the two runs side by side, then the first divergence; configuration changes,
 * tool calls, final outputs and the LLM-call table folded in `<details>`.
 */
import { cost, divergenceAt, tokens, type Run, type RunDiff } from './diff.js';
import type { CostFn } from '../cost.js';
import { formatCost, formatMs, oneLine } from '../format.js';
import { MARK, mdCell, mdDetails, mdFence, mdSigned, mdTable, mdText } from '../markdown.js';

export interface DiffMarkdownOptions {
  costOf: CostFn;
  /** The gates the diff failed (`score 0.71 is below --min-score 0.9`), empty when it passed them all. */
  failed: readonly string[];
}

export function renderDiffMarkdown(a: Run, b: Run, d: RunDiff, opts: DiffMarkdownOptions): string[] {
  const A = mdCell(a.tape.name, 60);
  const B = mdCell(b.tape.name, 60);
  const mark = opts.failed.length > 0 ? MARK.fail : d.identical ? MARK.pass : MARK.warn;
  const state = d.identical ? 'identical' : 'differs';
  const out = [
    `### ${mark} tapedeck diff \`${A}\` → \`${B}\`: ${state}, score ${d.score.toFixed(2)}, ARS ${d.ars.score.toFixed(2)} (${d.ars.band})`,
    '',
  ];
  for (const f of opts.failed) out.push(`**Fails:** ${mdText(f)}`, '');

  const llm = (r: Run): number => r.steps.filter((s) => s.kind === 'LLM').length;
  const ta = tokens(a.exchanges);
  const tb = tokens(b.exchanges);
  const ca = cost(a.exchanges, opts.costOf);
  const cb = cost(b.exchanges, opts.costOf);
  const edits = d.toolSequenceDiff.length;
  out.push(
    ...mdTable(
      ['', A, B, 'change'],
      [
        ['LLM calls', String(llm(a)), String(llm(b)), mdSigned(d.iterationsDelta)],
        ['tool calls', String(a.tools.length), String(b.tools.length), edits === 0 ? 'same' : `${edits} edit(s)`],
        ['tokens', String(ta.total), String(tb.total), mdSigned(d.tokensDelta)],
        ['cost', formatCost(ca), formatCost(cb), d.costDelta === null ? '?' : mdSigned(d.costDelta, formatCost)],
        ['duration', '', '', mdSigned(d.durationDeltaMs, formatMs)],
        ['final output', '', '', d.outputDiff.equal ? 'equal' : `similarity ${d.outputDiff.similarity.toFixed(2)}`],
      ],
      ['l', 'r', 'r', 'r'],
    ),
    '',
  );
  if (d.firstDivergence === null) out.push('**First divergence:** none, the runs match step for step.');
  else
    out.push(
      `**First divergence** at ${mdText(divergenceAt(d.firstDivergence, a.tape.name, b.tape.name))}: ${mdText(d.firstDivergence.reason)}`,
    );

  const details: string[] = [];
  if (d.configChanges.length > 0)
    details.push(
      '',
      ...mdDetails(
        `configuration (${d.configChanges.length} change(s))`,
        mdTable(
          ['field', A, B],
          d.configChanges.map((c) => [c.field, mdCell(oneLine(c.original ?? '-')), mdCell(oneLine(c.replay ?? '-'))]),
        ),
      ),
    );
  if (a.tools.length > 0 || b.tools.length > 0) {
    const rows: string[][] = [];
    for (let i = 0; i < Math.max(a.tools.length, b.tools.length); i++) {
      const call = (r: Run): string => {
        const t = r.tools[i];
        return t === undefined ? '' : `${mdCell(t.toolName, 40)}(${mdCell(oneLine(t.arguments), 60)})`;
      };
      rows.push([String(i), call(a), call(b)]);
    }
    const editLines = d.toolSequenceDiff.map((e) =>
      e.kind === 'added'
        ? `- added ${mdCell(e.toolName)} at ${e.atIndex} in ${B}`
        : e.kind === 'removed'
          ? `- removed ${mdCell(e.toolName)} at ${e.atIndex} in ${A}`
          : `- reordered ${mdCell(e.toolName)}: ${e.from} → ${e.to}`,
    );
    details.push(
      '',
      ...mdDetails(`tool calls (${edits === 0 ? 'same calls, same order' : `${edits} edit(s)`})`, [
        ...mdTable(['#', A, B], rows),
        ...(editLines.length > 0 ? ['', ...editLines] : []),
      ]),
    );
  }
  details.push(...onlyCalls(d, A, B));
  if (!d.outputDiff.equal)
    details.push(
      '',
      ...mdDetails(`final output (similarity ${d.outputDiff.similarity.toFixed(2)}, ${d.outputDiff.method})`, [
        `**${A}**`,
        '',
        ...mdFence(d.outputDiff.original ?? '(none)'),
        '',
        `**${B}**`,
        '',
        ...mdFence(d.outputDiff.replay ?? '(none)'),
      ]),
    );
  if (d.steps.length > 0)
    details.push(
      '',
      ...mdDetails(
        `LLM calls (${d.steps.length}, ${B} − ${A})`,
        mdTable(
          ['call', 'step', A, B, 'output', 'tokens', 'cost', 'duration'],
          d.steps.map((s) => [
            String(s.call),
            s.step === s.replayStep ? String(s.step) : `${s.step ?? '-'}/${s.replayStep ?? '-'}`,
            mdCell(s.original ?? '-', 40),
            mdCell(s.replay ?? '-', 40),
            s.outputSimilarity === null ? '-' : s.outputSimilarity.toFixed(2),
            mdSigned(s.tokensDelta),
            s.costDelta === null ? '?' : mdSigned(s.costDelta, formatCost),
            mdSigned(s.durationDeltaMs, formatMs),
          ]),
          ['r', 'l', 'l', 'l', 'r', 'r', 'r', 'r'],
        ),
      ),
    );
  const r = d.ars;
  details.push(
    '',
    ...mdDetails('scores', [
      `- score ${d.score.toFixed(2)} = 0.5 × output similarity + 0.5 × tool-sequence agreement × call agreement ${d.callAgreement.toFixed(2)}`,
      `- ARS ${r.score.toFixed(2)} (${r.band}) = 0.7 × output ${r.outputSimilarity.toFixed(2)} + 0.3 × tool accuracy ${r.toolAccuracy.toFixed(2)} ` +
        `(${r.usedTools}/${r.originalTools} tools used, ${r.newTools} new, ${r.unusedTools} unused)`,
      ...(d.unusedRecordings !== null ? [`- ${d.unusedRecordings} of ${a.exchanges.length} recorded exchange(s) never served`] : []),
    ]),
  );
  out.push(...details);
  return out;
}

/** The calls one run made and the other did not, folded (nothing when both made the same calls). */
function onlyCalls(d: RunDiff, A: string, B: string): string[] {
  const only = [
    ...d.removedCalls.map((c) => `- removed ${mdCell(c.call)} ${mdCell(c.asked, 60)} (step ${c.step} in ${A})`),
    ...d.addedCalls.map((c) => `- added ${mdCell(c.call)} ${mdCell(c.asked, 60)} (step ${c.step} in ${B})`),
  ];
  return only.length === 0 ? [] : ['', ...mdDetails(`LLM calls made by one run only (${only.length})`, only)];
}
