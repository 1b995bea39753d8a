/** `tapedeck drift` for people: the preflight (what will be sent where, at what cost) and the report. */
import { fit, formatCost, wrapText, type Style } from '../inspect/format.js';
import type { DriftPlan } from './plan.js';
import type { CallVerdict, DriftReport } from './run-drift.js';

export function renderPreflight(plan: DriftPlan, tape: string): string[] {
  const llm = plan.calls.filter((c) => c.kind === 'LLM').length;
  const mcp = plan.calls.length - llm;
  const out = [
    `drift "${tape}": ${plan.calls.length} call(s) to send (${llm} LLM, ${mcp} MCP)` +
      (plan.skipped.length > 0 ? `, ${plan.skipped.length} not sent` : ''),
  ];
  const width = Math.max(14, ...plan.hosts.map((h) => h.host.length));
  for (const h of plan.hosts) out.push(`  ${h.host.padEnd(width)}  ${h.calls} call(s)`);
  if (llm > 0)
    out.push(
      `  ${'estimated cost'.padEnd(width)}  ${plan.estimatedCostUsd === null ? '?' : formatCost(plan.estimatedCostUsd)} ` +
        `(the recorded usage at the price table's prices${plan.unpriced > 0 ? `; ${plan.unpriced} call(s) without a price` : ''})`,
    );
  for (const d of plan.needs.dropped)
    out.push(`  not sent: header ${d.name} on ${d.route} (redacted on the tape; --key ${d.route}=VAR sends a variable's value)`);
  out.push(...withheldLines(plan.needs.withheld));
  return out;
}

/** Keys drift did not send (the call went elsewhere than where they may go), and the flags that would send them. */
export function withheldLines(withheld: DriftPlan['needs']['withheld']): string[] {
  return withheld.map(
    (w) =>
      `  key not sent: ${w.names.join(', ')} on ${w.route} to ${w.host}: ${w.reason} (--route ${w.route}=URL or --allow-host ${w.host} sends it)`,
  );
}

export function renderNotSent(plan: Pick<DriftPlan, 'skipped'>, width: number, style: Style): string[] {
  if (plan.skipped.length === 0) return [];
  return [
    '',
    style.bold('not sent'),
    ...plan.skipped.flatMap((s) =>
      wrapText(`${s.label}: ${s.reason}`, width, `  step ${String(s.step).padEnd(4)} `, ' '.repeat(12)).map(style.dim),
    ),
  ];
}

const COLOUR: Record<CallVerdict, keyof Style> = { breaking: 'red', notable: 'yellow', noise: 'dim', unchanged: 'green' };

export function renderDrift(r: DriftReport, width: number, style: Style): string[] {
  const paint = (v: CallVerdict, s: string): string => style[COLOUR[v]](s);
  const c = r.counts;
  const out = [
    style.bold(`drift on "${r.tape}": ${r.calls.length} call(s) sent to ${r.hosts.map((h) => h.host).join(', ') || 'no host'}`),
    `verdict  ${paint(r.verdict, r.verdict === 'unchanged' ? 'no drift' : r.verdict)}  ` +
      `(${c.breaking} breaking, ${c.notable} notable, ${c.noise} noise, ${c.unchanged} unchanged)` +
      `${r.costUsd !== null && r.calls.some((x) => x.fresh.tokens !== null) ? `  cost ${formatCost(r.costUsd)}` : ''}`,
  ];
  if (r.calls.length > 0) {
    const label = Math.min(34, Math.max(4, ...r.calls.map((x) => x.call.length)));
    out.push('', style.dim(fit(`  ${'step'.padEnd(5)} ${'call'.padEnd(label)} ${'verdict'.padEnd(10)} first change`, width)));
    for (const call of r.calls) {
      const first = call.findings[0];
      const more = call.findings.length > 1 ? ` (+${call.findings.length - 1} more)` : '';
      const head = `  ${String(call.step).padEnd(5)} ${fit(call.call, label).padEnd(label)} `;
      const rest = first ? `${first.message}${more}` : '-';
      out.push(`${head}${paint(call.verdict, call.verdict.padEnd(10))} ${fit(rest, Math.max(10, width - head.length - 11))}`);
    }
  }
  for (const level of ['breaking', 'notable', 'noise'] as const) {
    const rows = r.calls.flatMap((call) => call.findings.filter((f) => f.severity === level).map((f) => ({ call, f })));
    if (rows.length === 0) continue;
    out.push('', paint(level, style.bold(level)));
    // The why of each finding, whole: wrapped under its step, never cut.
    for (const { call, f } of rows)
      out.push(...wrapText(`${call.call}: ${f.message}`, width, `  step ${String(call.step).padEnd(4)} `, ' '.repeat(12)));
  }
  out.push(...renderNotSent(r, width, style));
  if (r.withheld.length > 0) out.push('', style.bold('keys not sent'), ...withheldLines(r.withheld).map((l) => style.dim(fit(l, width))));
  if (r.refreshed !== null) out.push('', `refreshed: the fresh answers are on tape "${r.refreshed}"`);
  return out;
}
