/**
 * Resumable streams in replay (the 2025-11-25 revision's resumability and redelivery). A server with an event store
 * gives each SSE event of a call's answer an `id` (a first "priming" event with an id, no data and a `retry`); when
 * the stream ends before the answer (the server closed it, the polling pattern of `closeSSEStream`, or the connection
 * broke), the client comes back with a GET carrying `Last-Event-ID` and gets the events after it. The tape keeps what
 * the server sent: the call's POST with its events and their ids, and each resuming GET with its `last-event-id`
 * header and the events it got.
 *
 * In replay (`indexResumptions`): a recorded call whose stream carried event ids and ended before its answer is
 * answered the same way (one answered on its own stream goes out as before, without ids). Its answer
 * is the POST's messages then those of the GETs that resumed it (each one found by the `last-event-id` it sent, one of
 * the ids before it), so it is matched and checked as one answer; the POST's stream carries what the recording's did,
 * with ids, and ends where it ended; the rest is kept in the replay session (`ResumableStreams`) for the client's GET
 * with `Last-Event-ID`. The ids replay gives are its own (`tapedeck-STREAM-INDEX`, unique in the session), so a
 * client resuming anywhere in what it was sent gets what followed, from the tape.
 */
import { recordedMessages, type Message, type TimedMessage } from '../../providers/mcp.js';
import { scaledDelay } from '../../replay/modes.js';
import { serializeSseFields } from '../../tape/framing/sse.js';
import type { Exchange, SseEvent } from '../../tape/schema.js';
import { roundMs } from '../../tape/timing.js';
import type { Timing } from '../../http/types.js';
import { openSse, sendBody, SSE_HEADERS } from '../../http/sink-send.js';
import type { ResponseSink } from '../../http/sink.js';
import type { HeaderMap } from '../../tape/schema.js';

/** A recorded call whose answer came over a resumable stream. */
export interface Resumable {
  /** The call's answer: the POST stream's messages, then those of the GETs that resumed it (offsets from the POST's start). */
  messages: TimedMessage[];
  /** Messages at or before this offset went on the call's own stream; the rest came on resuming GETs. */
  postEndMs: number;
  /** The `retry` the server gave on the call's stream. */
  retryMs?: number | undefined;
}

export interface RecordedResumptions {
  /** The resumable answer of a recorded Streamable HTTP POST, or undefined when its stream carried no event ids. */
  of(source: Exchange): Resumable | undefined;
}

/** The header a resuming GET carries (lower case, as the tape keeps headers). */
export const LAST_EVENT_ID = 'last-event-id';

/** Index a tape's resuming GETs, by route and the `last-event-id` they sent. */
export function indexResumptions(exchanges: readonly Exchange[]): RecordedResumptions {
  const resumes = new Map<string, Exchange>();
  for (const ex of exchanges) {
    const last = ex.request.headers[LAST_EVENT_ID];
    if (ex.request.method !== 'GET' || last === undefined || ex.response?.events === undefined) continue;
    const key = `${ex.route}\n${last}`;
    if (!resumes.has(key)) resumes.set(key, ex);
  }
  const cache = new Map<string, Resumable | undefined>();
  return {
    of(source) {
      if (!cache.has(source.id))
        cache.set(
          source.id,
          resumableOf(source, (id) => resumes.get(`${source.route}\n${id}`)),
        );
      return cache.get(source.id);
    },
  };
}

function resumableOf(source: Exchange, resumeAfter: (id: string) => Exchange | undefined): Resumable | undefined {
  const events = source.response?.events ?? [];
  if (source.request.method !== 'POST' || source.mcp?.transport !== 'streamable-http' || !events.some((e) => e.id !== undefined))
    return undefined;
  const messages = recordedMessages(source);
  const answered = (ms: TimedMessage[]): boolean =>
    ms.some((m) => m.message.method === undefined && m.message.id === source.mcp?.jsonrpcId);
  // An answer that came whole on the POST's stream goes out as before: nothing was resumed.
  if (answered(messages)) return undefined;
  const postEndMs = events.at(-1)?.offsetMs ?? 0;
  const retryMs = events.find((e) => e.retry !== undefined)?.retry;
  let ids = events.map((e) => e.id).filter((id): id is string => id !== undefined);
  const seen = new Set<Exchange>();
  while (!answered(messages)) {
    // The GET that resumed after the latest of these ids: its events follow them.
    const get = [...ids]
      .reverse()
      .map(resumeAfter)
      .find((g) => g !== undefined && !seen.has(g));
    if (get === undefined) break;
    seen.add(get);
    const shift = get.offsetMs - source.offsetMs;
    for (const m of recordedMessages(get))
      messages.push({ offsetMs: roundMs(Math.max(shift + m.offsetMs, postEndMs + 0.001)), message: m.message });
    ids = (get.response?.events ?? []).map((e) => e.id).filter((id): id is string => id !== undefined);
  }
  return { messages, postEndMs, retryMs };
}

/** One answer replay sent over a resumable stream: every message of it, with the ids they go out with. */
interface ReplayStream {
  messages: TimedMessage[];
}

/** The resumable streams of one replay session: what a GET with `Last-Event-ID` gets. */
export class ResumableStreams {
  private readonly streams: ReplayStream[] = [];

  /**
   * Keep an answer for resumption and say what goes on the call's own stream: the priming event (an id, the recorded
   * retry), then the messages the recording's stream carried, each with its id. The rest waits for a resuming GET.
   */
  open(messages: TimedMessage[], resumable: Resumable): SseEvent[] {
    const n = this.streams.length;
    this.streams.push({ messages });
    const priming: SseEvent = { offsetMs: 0, id: eventId(n, 0), data: '' };
    if (resumable.retryMs !== undefined) priming.retry = resumable.retryMs;
    const cut = messages.findIndex((m) => m.offsetMs > resumable.postEndMs);
    const onPost = cut === -1 ? messages : messages.slice(0, cut);
    return [priming, ...onPost.map((m, i) => messageEvent(m, eventId(n, i + 1)))];
  }

  /** The events after `lastEventId` (one replay gave in this session), or undefined when it gave no such id. */
  after(lastEventId: string): SseEvent[] | undefined {
    const at = /^tapedeck-(\d+)-(\d+)$/.exec(lastEventId);
    const stream = at === null ? undefined : this.streams[Number(at[1])];
    if (at === null || stream === undefined || Number(at[2]) > stream.messages.length) return undefined;
    const from = Number(at[2]);
    const first = stream.messages[from]?.offsetMs ?? 0;
    return stream.messages
      .slice(from)
      .map((m, i) => messageEvent({ ...m, offsetMs: m.offsetMs - first }, eventId(Number(at[1]), from + i + 1)));
  }
}

function eventId(stream: number, index: number): string {
  return `tapedeck-${stream}-${index}`;
}

function messageEvent(m: { offsetMs: number; message: Message }, id: string): SseEvent {
  return { offsetMs: roundMs(m.offsetMs), event: 'message', id, data: JSON.stringify(m.message) };
}

/** Send SSE events with their recorded gaps under the timing mode (all in one write when instant). Resolves once sent, or the client has gone. */
export async function sendEvents(
  sink: ResponseSink,
  status: number,
  headers: HeaderMap,
  events: SseEvent[],
  timing: Timing,
): Promise<void> {
  if (timing.mode === 'instant') return sendBody(sink, status, { ...SSE_HEADERS, ...headers }, events.map(serializeSseFields).join(''));
  const stream = openSse(sink, status, headers);
  let last = 0;
  for (const ev of events) {
    const wait = scaledDelay(ev.offsetMs - last, timing);
    last = ev.offsetMs;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (!(await stream.write(serializeSseFields(ev)))) return;
  }
  stream.end();
}
