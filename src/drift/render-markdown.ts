/**
 * `tapedeck drift --markdown`: the report as a pull-request comment. The verdict first (whether it fails the gate),
 * then one row per call sent, then the changes by severity, what was not sent and the thresholds, folded.
 */
import { formatCost } from '../inspect/format.js';
import { MARK, mdCell, mdDetails, mdTable, mdText } from '../inspect/markdown.js';
import type { Severity } from './finding.js';
import { atLeast, type CallVerdict, type DriftReport } from './run-drift.js';

const SHOWN: Record<CallVerdict, string> = { breaking: '❌ breaking', notable: '⚠️ notable', noise: 'noise', unchanged: 'unchanged' };

export function renderDriftMarkdown(r: DriftReport, failOn: Severity): string[] {
  const failed = r.verdict !== 'unchanged' && atLeast(r.verdict, failOn);
  const mark = failed ? MARK.fail : r.verdict === 'unchanged' || r.verdict === 'noise' ? MARK.pass : MARK.warn;
  const c = r.counts;
  const verdict = r.verdict === 'unchanged' ? 'no drift' : `${r.verdict} drift`;
  const out = [
    `### ${mark} tapedeck drift \`${mdCell(r.tape, 60)}\`: ${verdict} in ${r.calls.length} call(s) sent ` +
      `(${c.breaking} breaking, ${c.notable} notable, ${c.noise} noise, ${c.unchanged} unchanged)`,
    '',
  ];
  if (failed) out.push(`**Fails:** ${r.verdict} drift (the gate fails on ${failOn}${failOn === 'breaking' ? '' : ' and worse'})`, '');
  if (r.calls.length > 0)
    out.push(
      ...mdTable(
        ['step', 'call', 'verdict', 'status', 'answer', 'first change'],
        r.calls.map((call) => [
          String(call.step),
          mdCell(call.call, 50),
          SHOWN[call.verdict],
          call.recorded.status === call.fresh.status
            ? String(call.fresh.status ?? '-')
            : `${call.recorded.status ?? '-'} → ${call.fresh.status ?? '-'}`,
          call.similarity === null ? '-' : call.similarity.toFixed(2),
          call.findings[0]
            ? mdCell(call.findings[0].message, 100) + (call.findings.length > 1 ? ` (+${call.findings.length - 1})` : '')
            : '',
        ]),
        ['r', 'l', 'l', 'l', 'r', 'l'],
      ),
    );
  else out.push('Nothing was sent.');
  for (const level of ['breaking', 'notable', 'noise'] as const) {
    const rows = r.calls.flatMap((call) =>
      call.findings.filter((f) => f.severity === level).map((f) => `- step ${call.step} ${mdText(call.call)}: ${mdText(f.message)}`),
    );
    out.push('', ...mdDetails(`${level} (${rows.length})`, rows));
  }
  out.push(
    '',
    ...mdDetails(
      `not sent (${r.skipped.length})`,
      r.skipped.map((s) => `- step ${s.step} ${mdText(s.label)}: ${mdText(s.reason)}`),
    ),
  );
  if (r.withheld.length > 0)
    out.push(
      '',
      ...mdDetails(
        `keys not sent (${r.withheld.length})`,
        r.withheld.map((w) => `- ${mdText(w.names.join(', '))} on ${mdText(w.route)} to ${mdText(w.host)}: ${mdText(w.reason)}`),
      ),
    );
  const t = r.thresholds;
  out.push(
    '',
    ...mdDetails('how it was checked', [
      `- sent to ${r.hosts.map((h) => `${mdText(h.host)} (${h.calls})`).join(', ') || 'no host'}; cost ${formatCost(r.costUsd)} (estimated ${formatCost(r.estimatedCostUsd)})`,
      `- notable: answer similarity below ${t.minSimilarity}, cost beyond ×${t.costRatio}, first byte beyond ×${t.latencyRatio} (and ${t.latencyFloorMs} ms)`,
      ...(r.refreshed !== null ? [`- the fresh answers were written to tape \`${mdCell(r.refreshed, 100)}\``] : []),
    ]),
  );
  return out;
}
