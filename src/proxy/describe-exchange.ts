import { describeLlm } from '../providers/index.js';
import { describeMcp } from '../providers/mcp.js';
import type { NewExchange } from '../tape/tape-writer.js';
import type { Logger } from '../log.js';

/**
 * Add what an exchange means (LLM call, MCP message) before it is written. A describer that fails never costs the
 * exchange: it is written without that meaning and the failure is logged.
 */
export function describeExchange(ex: NewExchange, log?: Logger): NewExchange {
  const out: NewExchange = { ...ex };
  try {
    const llm = describeLlm(ex);
    if (llm !== undefined) out.llm = llm;
  } catch (err) {
    log?.warn({ err: (err as Error).message, route: ex.route, path: ex.request.path }, 'could not describe LLM exchange');
  }
  try {
    const mcp = describeMcp(ex);
    if (mcp !== undefined) out.mcp = mcp;
  } catch (err) {
    log?.warn({ err: (err as Error).message, route: ex.route, path: ex.request.path }, 'could not describe MCP exchange');
  }
  return out;
}
