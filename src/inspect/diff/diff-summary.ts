/** `tapedeck diff` for people: verdict and score, configuration changes, the tool sequences side by side, edits, first divergence, output, deltas. */
import { divergenceAt, type Run, type RunDiff } from './diff.js';
import { fit, formatCost, formatMs, oneLine, shorten, wrapText, type Style } from '../format.js';
import type { StepDelta } from './step-deltas.js';
import { editMarks, type ToolCallEntry } from './tool-sequence.js';

/** The diff for people: verdict and score, configuration changes, the two tool sequences side by side, edits, first divergence, output, deltas. */
export function renderDiff(a: Run, b: Run, d: RunDiff, width: number, style: Style): string[] {
  const out: string[] = [];
  const verdict = d.identical ? style.green('identical') : style.yellow('differs');
  out.push(
    `${style.bold(fit(`${a.tape.name} → ${b.tape.name}`, Math.max(10, width - 50)))}  ${verdict}  score ${d.score.toFixed(2)}  ` +
      `ARS ${d.ars.score.toFixed(2)} (${d.ars.band})`,
  );
  if (d.configChanges.length > 0) {
    out.push('', style.bold('configuration'));
    for (const c of d.configChanges) out.push(fit(`  ${c.field}: ${oneLine(c.original ?? '-')} → ${oneLine(c.replay ?? '-')}`, width));
  }

  out.push('', style.bold('tool calls'));
  if (a.tools.length === 0 && b.tools.length === 0) out.push('  (none in either run)');
  else {
    const marks = editMarks(d.toolSequenceDiff);
    // Unlimited width (`--wide`): each column as wide as its longest entry.
    const col = Number.isFinite(width)
      ? Math.max(16, Math.floor((width - 8) / 2))
      : Math.max(a.tape.name.length, ...a.tools.map((t) => cell(t, ' ', Infinity).length + 1));
    out.push(style.dim(`  ${'#'.padEnd(3)} ${fit(a.tape.name, col).padEnd(col)} ${fit(b.tape.name, col)}`));
    for (let i = 0; i < Math.max(a.tools.length, b.tools.length); i++) {
      const left = cell(a.tools[i], marks.a.get(i), col);
      const right = cell(b.tools[i], marks.b.get(i), col);
      out.push(`  ${String(i).padEnd(3)} ${left.padEnd(col)} ${right}`.trimEnd());
    }
    if (d.toolSequenceDiff.length === 0) out.push(style.dim('  same calls, same order, same arguments'));
    for (const e of d.toolSequenceDiff) {
      const what = `${e.toolName} (args ${e.argsHash})`;
      if (e.kind === 'added') out.push(style.green(fit(`  + added ${what} at ${e.atIndex} in ${b.tape.name}`, width)));
      else if (e.kind === 'removed') out.push(style.red(fit(`  - removed ${what} at ${e.atIndex} in ${a.tape.name}`, width)));
      else out.push(style.yellow(fit(`  ~ reordered ${what}: ${e.from} → ${e.to}`, width)));
    }
  }

  if (d.removedCalls.length > 0 || d.addedCalls.length > 0) {
    out.push('', `${style.bold('LLM calls made by one run only')}  (call agreement ${d.callAgreement.toFixed(2)})`);
    for (const c of d.removedCalls) out.push(style.red(fit(`  - removed ${c.call} ${c.asked} (step ${c.step} in ${a.tape.name})`, width)));
    for (const c of d.addedCalls) out.push(style.green(fit(`  + added ${c.call} ${c.asked} (step ${c.step} in ${b.tape.name})`, width)));
  }
  if (d.firstDivergence === null) out.push('', `${style.bold('first divergence')}  none: the runs match step for step`);
  else
    out.push(
      '',
      `${style.bold('first divergence')}  ${divergenceAt(d.firstDivergence, a.tape.name, b.tape.name)}`,
      // Why, whole: wrapped, never cut.
      ...wrapText(d.firstDivergence.reason, width, '  '),
    );
  out.push(
    '',
    `${style.bold('final output')}  ${d.outputDiff.equal ? 'equal' : `differs (similarity ${d.outputDiff.similarity.toFixed(2)}, ${d.outputDiff.method})`}`,
  );
  if (!d.outputDiff.equal) {
    out.push(`  ${a.tape.name}: ${shorten(d.outputDiff.original ?? '(none)', Math.max(10, width - a.tape.name.length - 4))}`);
    out.push(`  ${b.tape.name}: ${shorten(d.outputDiff.replay ?? '(none)', Math.max(10, width - b.tape.name.length - 4))}`);
  } else if (d.outputDiff.original !== null) out.push(`  ${shorten(d.outputDiff.original, width - 2)}`);

  const t = d.tokensDeltaDetail;
  const cost = d.costDelta === null ? 'cost ? (a model has no price)' : `cost ${signed(d.costDelta, (x) => formatCost(x))}`;
  out.push('', style.bold('deltas (replay − original)'));
  out.push(
    fit(
      `  LLM calls ${signed(d.iterationsDelta)} · tokens ${signed(d.tokensDelta)} (in ${signed(t.input)}, out ${signed(t.output)}) · ` +
        `${cost} · duration ${signed(d.durationDeltaMs, (x) => formatMs(x))}`,
      width,
    ),
  );
  if (d.steps.length > 0) out.push(...stepTable(d.steps, width, style));
  const r = d.ars;
  const [ars = '', ...how] = wrapText(
    `${r.score.toFixed(2)} ${r.band} = 0.7 × output ${r.outputSimilarity.toFixed(2)} + 0.3 × tool accuracy ` +
      `${r.toolAccuracy.toFixed(2)} (${r.usedTools}/${r.originalTools} tools used, ${r.newTools} new, ${r.unusedTools} unused)`,
    width,
    'ARS  ',
    '     ',
  );
  out.push('', `${style.bold('ARS')}${ars.slice(3)}`, ...how);
  if (d.unusedRecordings !== null)
    out.push(`${style.bold('unused recordings')}  ${d.unusedRecordings} of ${a.exchanges.length} recorded exchange(s) never served`);
  return out;
}

/** The LLM calls side by side: models, output similarity, token / cost / duration deltas. */
function stepTable(steps: readonly StepDelta[], width: number, style: Style): string[] {
  const model = Math.max(8, Math.min(22, Math.floor((width - 46) / 2)));
  const at = steps.map((s) => (s.step === s.replayStep ? String(s.step) : `${s.step ?? '-'}/${s.replayStep ?? '-'}`));
  const stepCol = Math.max(4, ...at.map((x) => x.length));
  const head = `  ${'call'.padEnd(4)} ${'step'.padEnd(stepCol)} ${'original'.padEnd(model)} ${'replay'.padEnd(model)} ${'output'.padStart(6)} ${'tokens'.padStart(7)} ${'cost'.padStart(10)} ${'duration'.padStart(9)}`;
  const rows = steps.map(
    (s, i) =>
      `  ${String(s.call).padEnd(4)} ${(at[i] as string).padEnd(stepCol)} ${fit(s.original ?? '-', model).padEnd(model)} ${fit(s.replay ?? '-', model).padEnd(model)} ` +
      `${(s.outputSimilarity === null ? '-' : s.outputSimilarity.toFixed(2)).padStart(6)} ${signed(s.tokensDelta).padStart(7)} ` +
      `${(s.costDelta === null ? '?' : signed(s.costDelta, (x) => formatCost(x))).padStart(10)} ${signed(s.durationDeltaMs, (x) => formatMs(x)).padStart(9)}`,
  );
  return ['', style.bold('LLM calls (replay − original)'), style.dim(head), ...rows.map((r) => fit(r, width))];
}

function cell(entry: ToolCallEntry | undefined, mark: string | undefined, width: number): string {
  if (entry === undefined) return '';
  return fit(`${mark ?? ' '} ${entry.toolName}(${shorten(entry.arguments, Math.max(8, width - entry.toolName.length - 5))})`, width);
}

function signed(n: number, format: (x: number) => string = String): string {
  if (n === 0) return format(0);
  return n > 0 ? `+${format(n)}` : `-${format(-n)}`;
}
