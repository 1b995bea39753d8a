/**
 * Answer one MCP request from a tape: the core shared by the HTTP responder and the stdio replayer. It finds the
 * recorded exchange (exact key ignores the JSON-RPC id and `_meta`; no semantic matching for side-effect tools),
 * rewrites ids and progress tokens to the incoming ones, blocks unrecorded side effects, and says why it did what it did.
 */
import { TapedeckError } from '../errors.js';
import { rpcErrorMessage } from '../providers/errors.js';
import { progressToken, recordedMessages, rewriteForIncoming, type Message, type RequestId, type TimedMessage } from '../providers/mcp.js';
import { isRequestMessage } from '../providers/mcp-batch.js';
import { roundMs } from '../tape/timing.js';
import type { Exchange, MatchInfo } from '../tape/schema.js';
import type { IncomingRequest, Matcher } from './matcher.js';
import { missCandidates, missError } from './miss.js';
import type { OnMiss } from './modes.js';
import type { SideEffectPolicy, Verdict } from './side-effects.js';
import { findToolMock, toolMockResult, type Mocks } from './mocks.js';

export interface AnswerOptions {
  matcher: Matcher;
  policy: SideEffectPolicy;
  onMiss: OnMiss;
  tapeName: string;
  /** Every exchange of the tape (for the initialize fallback). */
  exchanges: readonly Exchange[];
  /** Mocked tool results (`--mock`), asked before the tape. */
  mocks?: Mocks | undefined;
  /** The recorded messages of an exchange (default: its response's SSE events and body). Legacy SSE looks them up on the GET stream. */
  messagesOf?: (ex: Exchange) => TimedMessage[];
}

export type McpAnswer =
  /** Send these messages (notifications first, the answer last). */
  | { kind: 'answer'; messages: TimedMessage[]; match: MatchInfo; source?: Exchange }
  /** A safe request the tape cannot answer, when misses go live: the caller forwards it to the real server. */
  | { kind: 'live'; match: MatchInfo };

/** What one client message gets: a notification (or a client's answer to a server request) is only accepted. */
export type McpOutcome = McpAnswer | { kind: 'accepted'; match: MatchInfo };

/**
 * The one decision every client message gets in replay, sent alone or inside a JSON-RPC batch, over Streamable HTTP,
 * legacy SSE and stdio alike: accepted (notifications), answered (from the tape, a mock, blocked, a miss), or
 * forwarded live (a safe request the tape cannot answer, when misses go live). A batch is decided message by message.
 */
export async function answerMessage(message: Message, incoming: () => IncomingRequest, opts: AnswerOptions): Promise<McpOutcome> {
  if (!isRequestMessage(message)) return { kind: 'accepted', match: { kind: 'exact', reason: 'a notification needs no answer' } };
  return answerRequest(message, incoming(), opts);
}

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
  const mock = tool === undefined ? undefined : findToolMock(opts.mocks, tool.tool, (message.params as { arguments?: unknown }).arguments);
  if (mock !== undefined)
    return {
      kind: 'answer',
      messages: [{ offsetMs: 0, message: { jsonrpc: '2.0', id, result: toolMockResult(mock) } as Message }],
      match: { kind: 'mock', reason: `answered by a mock of ${mock.tool} from ${opts.mocks?.file ?? 'the mock file'}` },
    };
  const sideEffect = tool?.verdict.sideEffect === true;
  const outcome = await opts.matcher.match(incoming, { allowSemantic: !sideEffect });
  let source: Exchange | undefined;
  let match: MatchInfo;
  if (outcome.kind !== 'miss') {
    source = outcome.exchange;
    match = { kind: outcome.kind, source: source.id, stage: outcome.stage, score: roundMs(outcome.score), reason: outcome.explanation };
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
      // The server died (or was cut) while recording: the recorded failure is the answer.
      const why = source.error ? `${source.error.code}: ${source.error.message}` : `status ${source.response?.status ?? 'none'}`;
      const failed = new TapedeckError('UPSTREAM_ERROR', `tapedeck: the recorded server gave no answer to this request (${why})`, {
        details: { source: source.id },
      });
      messages.push({ offsetMs: source.timing.durationMs, message: rpcErrorMessage(failed, id) });
    }
    return { kind: 'answer', messages, match, source };
  }

  // A tool call the tape cannot answer runs for real only when misses go live and a reviewed file says it is safe.
  const run = tool !== undefined && opts.onMiss === 'live' ? opts.policy.liveTool(tool.tool) : undefined;
  if (tool !== undefined && (sideEffect || run?.sideEffect === true)) {
    const why = sideEffect ? tool.verdict.reason : (run?.reason ?? tool.verdict.reason);
    const reason = `${why}; the tape has no recording of this call, and replay never executes a side effect`;
    const blocked = new TapedeckError('SIDE_EFFECT_BLOCKED', `tapedeck blocked the call to tool "${tool.tool}": ${reason}.`);
    return {
      kind: 'answer',
      messages: [{ offsetMs: 0, message: rpcErrorMessage(blocked, id, { toolResult: true }) }],
      match: { kind: 'blocked', reason },
    };
  }
  if (opts.onMiss === 'live') {
    return {
      kind: 'live',
      match: { kind: 'live', reason: `${match.reason ?? 'miss'}; forwarded to the real server${run ? ` (${run.reason})` : ''}` },
    };
  }
  const reason = match.reason ?? 'miss';
  const closest = outcome.kind === 'miss' ? missCandidates(outcome.candidates) : [];
  const miss = missError({
    tape: opts.tapeName,
    asked: tool ? `tools/call "${tool.tool}"` : String(message.method),
    reason,
    onMiss: opts.onMiss,
    closest,
    details: { tape: opts.tapeName, onMiss: opts.onMiss, reason, closest },
  });
  // Lenient: a tool miss becomes a tool error the agent can read and carry on from.
  return {
    kind: 'answer',
    messages: [{ offsetMs: 0, message: rpcErrorMessage(miss, id, { toolResult: opts.onMiss === 'lenient' && tool !== undefined }) }],
    match,
  };
}
