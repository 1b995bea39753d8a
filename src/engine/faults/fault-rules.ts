/**
 * Fault rules (`--faults FILE`, `--fault RULE`): which calls of a real recorded (or live) run get something else
 * instead of their answer. A rule says which calls (`when`: the API or provider, route, model, MCP tool or method,
 * the Nth such call, a probability) and what happens (`then`: an HTTP status in the provider's own error shape, a
 * stream cut after N events or bytes, a reset connection, delays, an MCP tool error or JSON-RPC error, a WebSocket
 * closed with a code). The file:
 *
 *   faults:
 *     - when: { api: openai, call: 2 }
 *       then: { status: 429, retryAfter: 0 }
 *
 * `--fault` takes one rule inline, in the same shape, as YAML's flow style:
 * `--fault '{when: {api: openai, call: 2}, then: {status: 429}}'`.
 */
import { z } from 'zod';
import { TapedeckError } from '../../errors.js';
import { parseUserYaml } from '../../config/user-file.js';
import { readYamlFile } from '../../config/yaml-file.js';

export const FaultWhenSchema = z.strictObject({
  /** A provider (`openai`, `anthropic`, `gemini`, `openai-compatible`) or an API family (`chat.completions`, `messages`, ...). */
  api: z.string().min(1).optional(),
  /** A route prefix (`/openai`), or a stdio MCP server's name. */
  route: z.string().min(1).optional(),
  /** The model an LLM call asks for (as sent). */
  model: z.string().min(1).optional(),
  /** An MCP tool (`tools/call` with this name). */
  tool: z.string().min(1).optional(),
  /** An MCP method (`tools/call`, `resources/read`, ...). */
  method: z.string().min(1).optional(),
  /** The Nth call that matches the rest of `when` (1-based), counted over the run. */
  call: z.number().int().positive().optional(),
  /** Each matching call is hit with this probability (repeatable with `--seed`). */
  probability: z.number().min(0).max(1).optional(),
});
export type FaultWhen = z.infer<typeof FaultWhenSchema>;

/**
 * The longest delay a rule may ask for: the longest a timer holds (2^31 - 1 ms, about 24.8 days). Node runs a longer
 * timer at once (with a TimeoutOverflowWarning), so a delay past it would answer at once: refused instead, at start.
 */
export const MAX_DELAY_MS = 2 ** 31 - 1;

const delayMs = z
  .number()
  .min(0)
  .max(MAX_DELAY_MS, { error: `must be at most ${MAX_DELAY_MS} ms (about 24.8 days, the longest a timer holds)` });

export const FaultThenSchema = z
  .strictObject({
    /** Answer with this HTTP status, in the provider's own error shape (an LLM call) or as a plain JSON error. */
    status: z.number().int().min(400).max(599).optional(),
    /** With `status`: the `retry-after` header, in seconds. */
    retryAfter: z.number().min(0).optional(),
    /** With `status` (or `toolError`, `rpcError`): the error's message. */
    message: z.string().optional(),
    /** Serve the answer, then cut the connection after this many SSE events, or this many bytes. */
    cut: z.strictObject({ afterEvents: z.number().int().min(0).optional(), afterBytes: z.number().int().min(0).optional() }).optional(),
    /** Reset the connection before any byte of the answer. */
    reset: z.literal(true).optional(),
    /** Hold the first byte back this long, and wait this long between events (each at most MAX_DELAY_MS). */
    delay: z.strictObject({ firstByteMs: delayMs.optional(), betweenEventsMs: delayMs.optional() }).optional(),
    /** An MCP tool call answered with a result that has `isError` and this text. */
    toolError: z.string().optional(),
    /** An MCP request answered with this JSON-RPC error. */
    rpcError: z.strictObject({ code: z.number().int(), message: z.string() }).optional(),
    /** A WebSocket session closed with this code (and reason), after this many server messages. */
    close: z
      .strictObject({
        code: z.number().int().min(1000).max(4999),
        reason: z.string().optional(),
        afterMessages: z.number().int().min(0).optional(),
      })
      .optional(),
  })
  .refine((t) => Object.keys(t).some((k) => !['retryAfter', 'message'].includes(k)), {
    message: 'says nothing to do: give status, cut, reset, delay, toolError, rpcError or close',
  });
export type FaultThen = z.infer<typeof FaultThenSchema>;

export const FaultRuleSchema = z.strictObject({
  when: FaultWhenSchema.default({}),
  then: FaultThenSchema,
  /** How many calls the rule hits: default 1 with `call` (that call; its retries are answered as recorded), else every one. */
  times: z.number().int().positive().optional(),
});
export type FaultRule = z.infer<typeof FaultRuleSchema>;

export const FaultFileSchema = z.strictObject({ faults: z.array(FaultRuleSchema) });

/** The rules of a faults file (BAD_CONFIG naming the file and the first problem). */
export function readFaultsFile(file: string): FaultRule[] {
  return readYamlFile(file, FaultFileSchema, 'faults file').faults;
}

/** One `--fault` rule, in the file's shape written inline (YAML flow style). */
export function parseFaultRule(text: string): FaultRule {
  const value = parseUserYaml(text, '--fault');
  const parsed = FaultRuleSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TapedeckError(
      'BAD_ARGS',
      `bad --fault ${JSON.stringify(text)}: ${issue ? `${issue.path.join('.') || '(top)'}: ${issue.message}` : 'invalid'}; e.g. --fault '{when: {api: openai, call: 2}, then: {status: 429}}'`,
    );
  }
  return parsed.data;
}

/** A rule in a few words, for the replay tape and the log: `#1 openai call 2 -> 429`. */
export function describeRule(rule: FaultRule, index: number): string {
  const w = rule.when;
  const when = [
    w.api,
    w.route,
    w.model,
    w.tool && `tool ${w.tool}`,
    w.method,
    w.call && `call ${w.call}`,
    w.probability !== undefined && `p=${w.probability}`,
  ]
    .filter(Boolean)
    .join(' ');
  const t = rule.then;
  const then = [
    t.status && `${t.status}`,
    t.cut && `cut after ${t.cut.afterEvents !== undefined ? `${t.cut.afterEvents} events` : `${t.cut.afterBytes ?? 0} bytes`}`,
    t.reset && 'reset',
    t.delay &&
      `delay ${[t.delay.firstByteMs && `${t.delay.firstByteMs}ms first`, t.delay.betweenEventsMs && `${t.delay.betweenEventsMs}ms between`].filter(Boolean).join(', ')}`,
    t.toolError !== undefined && 'tool error',
    t.rpcError && `JSON-RPC error ${t.rpcError.code}`,
    t.close && `close ${t.close.code}`,
  ]
    .filter(Boolean)
    .join(', ');
  return `#${index + 1} ${when || 'every call'} -> ${then}`;
}
