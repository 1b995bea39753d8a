/**
 * Answer one MCP request from a tape: the core shared by the HTTP responder and the stdio replayer. It finds the
 * recorded exchange (exact key ignores the JSON-RPC id and `_meta`; no semantic matching for side-effect tools),
 * rewrites ids and progress tokens to the incoming ones, blocks unrecorded side effects, and says why it did what it did.
 */
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import {
  progressToken,
  recordedMessages,
  rewriteForIncoming,
  rpcError,
  type Message,
  type RequestId,
  type TimedMessage,
} from '../providers/mcp.js';
import { round } from '../tape/sse.js';
import type { Exchange, MatchInfo } from '../tape/schema.js';
import type { IncomingRequest, Matcher } from './matcher.js';
import type { OnMiss } from './modes.js';
import type { SideEffectPolicy, Verdict } from './side-effects.js';

export interface AnswerOptions {
  matcher: Matcher;
  policy: SideEffectPolicy;
  onMiss: OnMiss;
  tapeName: string;
  /** Every exchange of the tape (for the initialize fallback). */
  exchanges: readonly Exchange[];
  /** The recorded messages of an exchange (default: its response's SSE events and body). Legacy SSE looks them up on the GET stream. */
  messagesOf?: (ex: Exchange) => TimedMessage[];
}

export type McpAnswer =
  /** Send these messages (notifications first, the answer last). */
  | { kind: 'answer'; messages: TimedMessage[]; match: MatchInfo; source?: Exchange }
  /** A safe request the tape cannot answer, with `--on-miss live`: the caller forwards it to the real server. */
  | { kind: 'live'; match: MatchInfo };

/** The tool a `tools/call` names and the policy's verdict on it, or undefined for other methods. */
export function toolVerdict(message: Message, policy: SideEffectPolicy): { tool: string; verdict: Verdict } | undefined {
  if (message.method !== 'tools/call') return undefined;
  const name = (message.params as { name?: unknown } | undefined)?.name;
  if (typeof name !== 'string') return undefined;
  return { tool: name, verdict: policy.classifyTool(name) };
}

export async function answerRequest(message: Message, incoming: IncomingRequest, opts: AnswerOptions): Promise<McpAnswer> {
  const id = message.id as RequestId;
  const tool = toolVerdict(message, opts.policy);
  const sideEffect = tool?.verdict.sideEffect === true;
  const outcome = await opts.matcher.match(incoming, { allowSemantic: !sideEffect });
  let source: Exchange | undefined;
  let match: MatchInfo;
  if (outcome.kind !== 'miss') {
    source = outcome.exchange;
    match = { kind: outcome.kind, source: source.id, stage: outcome.stage, score: round(outcome.score), reason: outcome.explanation };
  } else if (message.method === 'initialize') {
    // The handshake is always answerable: a client whose name or capabilities changed still gets the recorded server.
    source = opts.exchanges.find((ex) => ex.route === incoming.route && ex.mcp?.method === 'initialize' && ex.mcp.result !== undefined);
    match = source
      ? {
          kind: 'semantic',
          source: source.id,
          stage: 'mcp-initialize',
          reason: `initialize differed from the recording (${outcome.candidates[0]?.differences.slice(0, 2).join('; ') || outcome.explanation}); answered with the recorded handshake`,
        }
      : { kind: 'miss', reason: outcome.explanation };
  } else {
    match = { kind: 'miss', reason: outcome.explanation };
  }

  if (source !== undefined) {
    const recordedRequest = source.request.body.kind === 'json' ? source.request.body.json : undefined;
    const recorded = {
      id: source.mcp?.jsonrpcId ?? (recordedRequest as { id?: RequestId } | undefined)?.id,
      progressToken: progressToken(recordedRequest),
    };
    const now = { id, progressToken: progressToken(message) };
    const messages: TimedMessage[] = [];
    let answered = false;
    for (const m of (opts.messagesOf ?? recordedMessages)(source)) {
      const out = rewriteForIncoming(m.message, recorded, now);
      if (out === undefined) continue;
      if (!('method' in out) && out.id === id) answered = true;
      messages.push({ offsetMs: m.offsetMs, message: out });
    }
    if (!answered) {
      const why = source.error ? `${source.error.code}: ${source.error.message}` : `status ${source.response?.status ?? 'none'}`;
      messages.push({
        offsetMs: source.timing.durationMs,
        message: rpcError(id, ErrorCode.InternalError, `tapedeck: the recorded server gave no answer to this request (${why})`, {
          tapedeck: { source: source.id },
        }),
      });
    }
    return { kind: 'answer', messages, match, source };
  }

  if (sideEffect && tool) {
    const reason = `${tool.verdict.reason}; the tape has no recording of this call, and replay never executes a side effect`;
    const text = `tapedeck blocked the call to tool "${tool.tool}": ${reason}.`;
    return {
      kind: 'answer',
      messages: [{ offsetMs: 0, message: { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], isError: true } } }],
      match: { kind: 'blocked', reason },
    };
  }
  if (opts.onMiss === 'live')
    return {
      kind: 'live',
      match: { kind: 'live', reason: `${match.reason ?? 'miss'}; forwarded to the real server${tool ? ` (${tool.verdict.reason})` : ''}` },
    };

  const closest =
    outcome.kind === 'miss' ? outcome.candidates.map((c) => ({ id: c.exchange.id, score: c.score, differences: c.differences })) : [];
  const what = tool ? `tools/call "${tool.tool}"` : String(message.method);
  const text =
    `tapedeck: no recording on tape "${opts.tapeName}" matches ${what} (${match.reason ?? 'miss'}; on-miss ${opts.onMiss}).` +
    (closest.length > 0
      ? ` Closest: ${closest.map((c) => `#${c.id} score ${c.score} [${c.differences.slice(0, 3).join('; ') || 'no field differs'}]`).join(' | ')}`
      : '');
  if (opts.onMiss === 'lenient' && tool) {
    // Lenient: a tool miss becomes a tool error the agent can read and carry on from.
    return {
      kind: 'answer',
      messages: [{ offsetMs: 0, message: { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], isError: true } } }],
      match,
    };
  }
  return {
    kind: 'answer',
    messages: [
      {
        offsetMs: 0,
        message: rpcError(id, ErrorCode.InternalError, text, {
          tapedeck: { tape: opts.tapeName, onMiss: opts.onMiss, reason: match.reason, closest },
        }),
      },
    ],
    match,
  };
}
