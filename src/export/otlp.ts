/**
 * A tape as an OpenTelemetry trace: one trace per tape, a root span for the run and one child span per exchange
 * (names and attributes in otel-attributes.ts), with the recorded start and end times. Ids are derived from the
 * tape (its name and creation time) and the exchange id, so exporting a tape twice gives the same trace and a
 * backend can tell it is the same run. The spans are the SDK's `ReadableSpan`s; the OTLP/JSON payload is the
 * official transformer's, and pushing uses the official OTLP/HTTP exporter, in batches.
 */
import { createHash } from 'node:crypto';
import { SpanKind, SpanStatusCode, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { ExportResultCode, hrTimeDuration, millisToHrTime, type InstrumentationScope } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';
import { TapedeckError } from '../errors.js';
import type { Exchange } from '../tape/schema.js';
import type { LoadedTape } from '../tape/tape-reader.js';
import { isSessionResponse } from '../providers/sessions/expand.js';
import { VERSION } from '../version.js';
import { timelineOf } from '../view/model.js';
import { spanShape } from './otel-attributes.js';
import { redactUrlCredentials } from '../tape/redaction/url-credentials.js';

/**
 * The semantic conventions followed: 1.41.0, the last release that carried the GenAI and MCP conventions before
 * they moved to their own repository (attribute names are unchanged there; all at Development status).
 */
export const SCHEMA_URL = 'https://opentelemetry.io/schemas/1.41.0';

/** Spans per OTLP/HTTP request when pushing (a 10,000-exchange tape goes in 10 requests, each well under collectors' limits). */
const BATCH = 1000;

export interface TraceOptions {
  /** Include prompts, answers, tool arguments and results (opt-in attributes in the conventions). Default true. */
  content?: boolean;
  /** `service.name` of the resource (default `tapedeck`). */
  serviceName?: string;
}

export function tapeSpans(tape: LoadedTape, opts: TraceOptions = {}): ReadableSpan[] {
  const h = tape.header;
  const traceId = hex(`${tape.name}\n${h.createdAt}`, 32);
  const resource = resourceFromAttributes(
    { 'service.name': opts.serviceName ?? 'tapedeck', 'service.version': VERSION, 'tapedeck.tape.name': tape.name },
    { schemaUrl: SCHEMA_URL },
  );
  const scope: InstrumentationScope = { name: 'tapedeck', version: VERSION, schemaUrl: SCHEMA_URL };
  const exchanges = timelineOf(tape.exchanges);
  const root: SpanContext = { traceId, spanId: hex(`${traceId}:run`, 16), traceFlags: TraceFlags.SAMPLED };
  const spans: ReadableSpan[] = [];
  let first = Date.parse(h.createdAt);
  let last = first;
  let failed = 0;
  for (const ex of exchanges) {
    const start = Date.parse(ex.startedAt);
    const end = start + ex.timing.durationMs;
    first = Math.min(first, start);
    last = Math.max(last, end);
    const shape = spanShape(ex, opts.content !== false);
    if (shape.error) failed++;
    spans.push(
      span({
        name: shape.name,
        kind: SpanKind.CLIENT,
        context: { traceId, spanId: hex(`${traceId}:${ex.id}`, 16), traceFlags: TraceFlags.SAMPLED },
        // A session's responses are children of its span.
        parent: isSessionResponse(ex)
          ? { traceId, spanId: hex(`${traceId}:${String(ex.notes?.session)}`, 16), traceFlags: TraceFlags.SAMPLED }
          : root,
        start,
        end,
        attributes: shape.attributes,
        status: shape.error ? { code: SpanStatusCode.ERROR, message: shape.error.message } : { code: SpanStatusCode.UNSET },
        events: eventsOf(ex, start),
        resource,
        scope,
      }),
    );
  }
  const rootAttributes = {
    'tapedeck.tape.name': tape.name,
    'tapedeck.tape.mode': h.mode,
    'tapedeck.tape.created_at': h.createdAt,
    'tapedeck.exchanges': exchanges.length,
    ...(h.replayOf ? { 'tapedeck.replay_of': h.replayOf.tape } : {}),
  };
  spans.unshift(
    span({
      name: `${h.mode} ${tape.name}`,
      kind: SpanKind.INTERNAL,
      context: root,
      start: first,
      end: last,
      attributes: rootAttributes,
      status: failed > 0 ? { code: SpanStatusCode.ERROR, message: `${failed} exchange(s) failed` } : { code: SpanStatusCode.UNSET },
      events: [],
      resource,
      scope,
    }),
  );
  return spans;
}

/** MCP notifications and server requests that arrived before the answer, as span events at their time. */
function eventsOf(ex: Exchange, start: number): TimedEvent[] {
  return (ex.mcp?.notifications ?? []).map((n) => {
    const method = (n.message as { method?: unknown } | null)?.method;
    return {
      name: typeof method === 'string' ? method : 'message',
      time: millisToHrTime(start + n.offsetMs),
      attributes: typeof method === 'string' ? { 'mcp.method.name': method } : {},
    };
  });
}

interface SpanInit {
  name: string;
  kind: SpanKind;
  context: SpanContext;
  parent?: SpanContext;
  start: number;
  end: number;
  attributes: ReadableSpan['attributes'];
  status: ReadableSpan['status'];
  events: TimedEvent[];
  resource: Resource;
  scope: InstrumentationScope;
}

function span(s: SpanInit): ReadableSpan {
  const startTime = millisToHrTime(s.start);
  const endTime = millisToHrTime(Math.max(s.end, s.start));
  return {
    name: s.name,
    kind: s.kind,
    spanContext: () => s.context,
    ...(s.parent ? { parentSpanContext: s.parent } : {}),
    startTime,
    endTime,
    duration: hrTimeDuration(startTime, endTime),
    status: s.status,
    attributes: s.attributes,
    links: [],
    events: s.events,
    ended: true,
    resource: s.resource,
    instrumentationScope: s.scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

function hex(seed: string, length: number): string {
  return createHash('sha256').update(seed).digest('hex').slice(0, length);
}

/** The OTLP/JSON `ExportTraceServiceRequest` for the spans (what an OTLP/HTTP JSON exporter would POST). */
export function otlpJson(spans: ReadableSpan[]): string {
  const bytes = JsonTraceSerializer.serializeRequest(spans);
  return bytes === undefined ? '{"resourceSpans":[]}' : Buffer.from(bytes).toString('utf8');
}

/** `http://host:4318` and `http://host:4318/` mean the standard traces path; any other path is used as given. */
export function tracesUrl(endpoint: string): string {
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    throw new TapedeckError(
      'BAD_ARGS',
      `not a URL: "${redactUrlCredentials(endpoint)}" (an OTLP/HTTP endpoint looks like http://127.0.0.1:4318)`,
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new TapedeckError(
      'BAD_ARGS',
      `not an http(s) URL: "${redactUrlCredentials(endpoint)}" (an OTLP/HTTP endpoint looks like http://127.0.0.1:4318)`,
    );
  if (u.pathname === '' || u.pathname === '/') u.pathname = '/v1/traces';
  return u.toString();
}

/** Push the spans to an OTLP/HTTP endpoint with the official exporter (JSON encoding), in batches. */
export async function pushOtlp(
  spans: ReadableSpan[],
  endpoint: string,
  opts: { headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<void> {
  const url = tracesUrl(endpoint);
  const exporter = new OTLPTraceExporter({ url, headers: opts.headers ?? {}, timeoutMillis: opts.timeoutMs ?? 10_000 });
  try {
    for (let i = 0; i < spans.length; i += BATCH) {
      const result = await new Promise<{ code: ExportResultCode; error?: Error }>((resolve) =>
        exporter.export(spans.slice(i, i + BATCH), resolve),
      );
      if (result.code !== ExportResultCode.SUCCESS)
        throw new TapedeckError(
          'EXPORT_FAILED',
          redactUrlCredentials(`could not push spans to ${url}: ${result.error?.message ?? 'the exporter failed'}`),
          { cause: result.error },
        );
    }
  } finally {
    await exporter.shutdown();
  }
}
