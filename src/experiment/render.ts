/** An experiment as one table: per run, its configuration, score, ARS, first divergence, tool edits and deltas. */
import { fit, formatCost, formatMs, type Style } from '../inspect/format.js';
import { divergenceAt } from '../inspect/diff.js';
import type { ExperimentResult } from './run-experiment.js';

export function renderExperiment(r: ExperimentResult, width: number, style: Style): string[] {
  const repeats = r.runs.some((x) => x.repeat > 1);
  const label = Math.max(13, Math.min(30, Math.max(0, ...r.runs.map((x) => x.label.length + (repeats ? 3 : 0)))));
  const head =
    `  ${'#'.padEnd(4)}${'configuration'.padEnd(label)} ${'score'.padStart(5)} ${'ARS'.padStart(5)} ${'edits'.padStart(5)} ` +
    `${'tokens'.padStart(7)} ${'cost'.padStart(10)} ${'duration'.padStart(9)}  first divergence (why, below)`;
  const out = [style.bold(`experiment on "${r.tape}": ${r.configs.length} configuration(s), ${r.runs.length} run(s)`), '', style.dim(head)];
  r.runs.forEach((run, i) => {
    const name = repeats ? `${run.label} #${run.repeat}` : run.label;
    const d = run.diff;
    const n = `${i + 1}`.padEnd(4);
    if (d === null) {
      out.push(style.red(`  ${n}${fit(name, label).padEnd(label)} FAILED`), style.red(fit(`      ${run.failed ?? '?'}`, width)));
      return;
    }
    const first = d.firstDivergence === null ? 'none' : divergenceAt(d.firstDivergence, 'original', 'run');
    const line =
      `  ${n}${fit(name, label).padEnd(label)} ${d.score.toFixed(2).padStart(5)} ${d.ars.score.toFixed(2).padStart(5)} ` +
      `${String(d.toolSequenceDiff.length).padStart(5)} ${signed(d.tokensDelta).padStart(7)} ` +
      `${(d.costDelta === null ? '?' : signed(d.costDelta, formatCost)).padStart(10)} ${signed(d.durationDeltaMs, (x) => formatMs(x)).padStart(9)}  `;
    if (run.failed !== null) {
      out.push(style.red(`${line}FAILED`), style.red(fit(`      ${run.failed}`, width)));
      return;
    }
    out.push(line + first);
    if (d.firstDivergence !== null) out.push(style.dim(fit(`      ${d.firstDivergence.reason}`, width)));
  });
  if (repeats) {
    out.push('', style.bold('run-to-run variance (same configuration)'));
    for (const v of r.variance) {
      const s = v.score;
      out.push(
        fit(
          `  ${v.label}: ${v.runs} run(s)${v.failed > 0 ? `, ${v.failed} failed` : ''}; ` +
            (s === null
              ? 'no score'
              : `score ${s.min.toFixed(2)}..${s.max.toFixed(2)} (mean ${s.mean.toFixed(2)}, sd ${s.stdev.toFixed(2)}); ` +
                `${v.toolSequences} distinct tool sequence(s)`),
          width,
        ),
      );
    }
  }
  out.push('', style.dim(`deltas are the run minus the original "${r.tape}"; each run is saved as a tape (tapedeck diff ${r.tape} NAME)`));
  for (const [i, run] of r.runs.entries()) if (run.tape !== null) out.push(style.dim(`  ${i + 1}: ${run.tape}`));
  return out;
}

function signed(n: number, format: (x: number) => string = String): string {
  if (n === 0) return format(0);
  return n > 0 ? `+${format(n)}` : `-${format(-n)}`;
}
