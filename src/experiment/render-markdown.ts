/**
 * `tapedeck experiment --markdown`: the experiment as a pull-request comment. The verdict first (how many runs,
 * how many failed, the best configuration by score), then one row per run, then folded details: why each run parts
 * from the original, blocked calls, failures, run-to-run variance, the saved tapes.
 */
import { divergenceAt } from '../inspect/diff/diff.js';
import { formatCost, formatMs } from '../inspect/format.js';
import { MARK, mdCell, mdDetails, mdSigned, mdTable, mdText } from '../inspect/markdown.js';
import type { ExperimentResult } from './run-experiment.js';

export function renderExperimentMarkdown(r: ExperimentResult): string[] {
  const failed = r.runs.filter((x) => x.failed !== null);
  const scored = r.runs.filter((x) => x.failed === null && x.diff !== null);
  const best = scored.reduce<(typeof scored)[number] | undefined>(
    (b, x) => (b === undefined || (x.diff?.score ?? 0) > (b.diff?.score ?? 0) ? x : b),
    undefined,
  );
  const repeats = r.runs.some((x) => x.repeat > 1);
  const label = (config: number, text: string, repeat: number): string => `${config}. ${mdCell(text, 80)}${repeats ? ` #${repeat}` : ''}`;
  const verdict =
    `### ${failed.length > 0 ? MARK.fail : MARK.pass} tapedeck experiment on \`${mdCell(r.tape, 60)}\`: ` +
    `${r.configs.length} configuration(s), ${r.runs.length} run(s)` +
    (failed.length > 0 ? `, ${failed.length} failed` : '') +
    (best?.diff ? `; closest to the original: ${mdCell(best.label, 80)} (score ${best.diff.score.toFixed(2)})` : '');
  const out = [verdict, ''];
  out.push(
    ...mdTable(
      ['run', 'configuration', 'score', 'ARS', 'tool edits', 'tokens', 'cost', 'duration', 'first divergence'],
      r.runs.map((run, i) => {
        const d = run.diff;
        const cells = [String(i + 1), label(run.config, run.label, run.repeat)];
        if (d === null) return [...cells, '', '', '', '', '', '', `${MARK.fail} failed`];
        return [
          ...cells,
          d.score.toFixed(2),
          `${d.ars.score.toFixed(2)} (${d.ars.band})`,
          String(d.toolSequenceDiff.length),
          mdSigned(d.tokensDelta),
          d.costDelta === null ? '?' : mdSigned(d.costDelta, formatCost),
          mdSigned(d.durationDeltaMs, formatMs),
          run.failed !== null
            ? `${MARK.fail} failed`
            : d.firstDivergence
              ? mdText(divergenceAt(d.firstDivergence, 'original', 'run'))
              : 'none',
        ];
      }),
      ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
    ),
  );
  const why: string[] = [];
  for (const [i, run] of r.runs.entries()) {
    const notes: string[] = [];
    if (run.failed !== null) notes.push(`failed: ${mdText(run.failed)}`);
    if (run.diff?.firstDivergence) notes.push(mdText(run.diff.firstDivergence.reason));
    for (const b of run.blocked) notes.push(`blocked at step ${b.step}: ${mdCell(b.tool)} (${mdText(b.reason)})`);
    for (const e of run.upstreamErrors) notes.push(`${mdText(e.call)} failed upstream at step ${e.step}: ${mdText(e.what)}`);
    if (notes.length > 0) why.push(`- run ${i + 1}: ${notes.join('; ')}`);
  }
  out.push('', ...mdDetails('why runs part from the original', why));
  if (repeats)
    out.push(
      '',
      ...mdDetails(
        'run-to-run variance (same configuration)',
        mdTable(
          ['configuration', 'runs', 'failed', 'score min..max', 'mean', 'sd', 'tool sequences'],
          r.variance.map((v) => [
            label(v.config, v.label, 1).replace(/ #1$/, ''),
            String(v.runs),
            String(v.failed),
            v.score ? `${v.score.min.toFixed(2)}..${v.score.max.toFixed(2)}` : '-',
            v.score ? v.score.mean.toFixed(2) : '-',
            v.score ? v.score.stdev.toFixed(2) : '-',
            String(v.toolSequences),
          ]),
          ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
        ),
      ),
    );
  const tapes = r.runs.flatMap((run, i) => (run.tape === null ? [] : [`- run ${i + 1}: \`${mdCell(run.tape, 100)}\``]));
  out.push('', ...mdDetails(`saved tapes (deltas are each run minus the original; tapedeck diff ${r.tape} NAME)`, tapes));
  return out;
}
