/**
 * The framings tapedeck knows, asked in turn by content type: SSE from the start, and any a provider registers
 * (`registerFraming`, as `registerProvider` adds an adapter). A recorded stream whose content type no framing claims (a
 * tape of an older tapedeck, or a server that streamed SSE under another type) is served as SSE, as every recorded
 * stream was before there were others.
 */
import type { ResponseRecord } from '../schema.js';
import type { StreamFraming } from './framing.js';
import { awsEventStreamFraming } from './aws-eventstream.js';
import { ndjsonFraming } from './ndjson.js';
import { sseFraming } from './sse.js';

// AWS's binary event-stream (Bedrock) and NDJSON (Ollama, many self-hosted servers) beside SSE.
const framings: StreamFraming[] = [awsEventStreamFraming, ndjsonFraming, sseFraming];

/** Add a framing, asked before those already known (a more specific content type wins); returns a function that takes it back. */
export function registerFraming(framing: StreamFraming): () => void {
  framings.unshift(framing);
  return () => {
    const at = framings.indexOf(framing);
    if (at !== -1) framings.splice(at, 1);
  };
}

/** The framing of an answer with this content type, when it is a stream tapedeck knows how to split. */
export function framingFor(contentType: string | undefined): StreamFraming | undefined {
  if (contentType === undefined) return undefined;
  for (const f of framings) if (f.accepts(contentType)) return f;
  return undefined;
}

/** The framing a recorded stream is served with: its content type's, else SSE. */
export function recordedFraming(response: Pick<ResponseRecord, 'headers'>): StreamFraming {
  return framingFor(response.headers['content-type']) ?? sseFraming;
}
