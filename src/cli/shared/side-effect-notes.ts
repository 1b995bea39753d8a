/**
 * What a replay will do with the tape's tools, said before it serves: which tools count as side effects (a recorded
 * call is answered from the tape, an unrecorded one is blocked, never run), why when the tape cannot tell (no
 * `tools/list` on it), and what to run to decide for real (`tapedeck side-effects init`, review, `done: true`).
 */
import { policyForTape, recordedTools, type SideEffectsFile } from '../../replay/side-effects.js';
import type { Exchange } from '../../tape/schema.js';

const MAX_NAMES = 8;

function names(xs: readonly string[]): string {
  return xs.length > MAX_NAMES ? `${xs.slice(0, MAX_NAMES).join(', ')} and ${xs.length - MAX_NAMES} more` : xs.join(', ');
}

/** Preflight lines (without the `tapedeck: ` prefix); none when the tape has no MCP tools. */
export function sideEffectNotes(
  exchanges: readonly Exchange[],
  opts: { tape: string; file?: { path: string; data: SideEffectsFile }; onMiss: string },
): string[] {
  const listed = recordedTools(exchanges);
  const all = new Set(listed.keys());
  for (const ex of exchanges) if (ex.mcp?.method === 'tools/call' && ex.mcp.toolName !== undefined) all.add(ex.mcp.toolName);
  if (all.size === 0) return [];
  const policy = policyForTape(exchanges, opts.file?.data);
  const tools = [...all].sort();
  const effects = tools.filter((t) => policy.isSideEffect(t));
  const safe = tools.filter((t) => !policy.isSideEffect(t));
  const source = opts.file ? `side effects (${opts.file.path})` : 'side effects';
  const out: string[] = [];
  if (effects.length === 0) out.push(`${source}: none of the tape's ${tools.length} tool(s) counts as a side effect`);
  else
    out.push(
      `${source}: ${effects.length} of ${tools.length} tool(s) count as side effects: ${names(effects)}` +
        `${safe.length > 0 ? ` (safe: ${names(safe)})` : ''}; a recorded call of one is answered from the tape, an unrecorded one is blocked, never run`,
    );
  const toolsListed = exchanges.some((ex) => ex.mcp?.method === 'tools/list' && ex.mcp.result !== undefined);
  if (!opts.file) {
    if (!toolsListed && effects.length > 0)
      out.push(
        `side effects: the tape has no tools/list answer (the client never listed tools while recording), so no tool is known to be read-only`,
      );
    out.push(
      `side effects: to decide per tool, run tapedeck side-effects init ${opts.tape}, review side_effects.yaml, set done: true, ` +
        `then replay with --side-effects side_effects.yaml${opts.onMiss === 'live' ? ' (a tool marked true may then run for real on a miss)' : ''}`,
    );
  }
  return out;
}
