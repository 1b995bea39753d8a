/**
 * Mocked answers (`replay --mock FILE`): a tool's result, or an HTTP route's answer, given by the user instead of
 * the tape's, e.g. a fake success for a side-effect tool the tape never recorded. A mock is asked before the tape;
 * answers it gives are marked `match.kind: "mock"` on the replay tape.
 *
 * ```yaml
 * mocks:
 *   - tool: send_email                 # an MCP tools/call of this tool
 *     arguments: { to: a@example.com } # optional: only calls whose arguments contain these (deep equal per key)
 *     result: { content: [{ type: text, text: sent }] }   # the tools/call result (or `text: sent` for that shape)
 *   - route: /payments                 # an HTTP request on this route prefix
 *     method: POST                     # optional
 *     path: /v1/charges                # optional: the path below the prefix
 *     status: 200                      # default 200
 *     body: { id: ch_1, status: succeeded }
 * ```
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { readYamlFile } from '../config/yaml-file.js';
import stringify from 'fast-json-stable-stringify';
import { z } from 'zod';

const ToolMockSchema = z
  .object({
    tool: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()).optional(),
    result: z.unknown().optional(),
    text: z.string().optional(),
    isError: z.boolean().optional(),
  })
  .strict()
  .refine((m) => m.result !== undefined || m.text !== undefined, { message: 'a tool mock needs result or text' });

const HttpMockSchema = z
  .object({
    route: z.string().startsWith('/'),
    method: z.string().optional(),
    path: z.string().startsWith('/').optional(),
    status: z.number().int().min(100).max(599).default(200),
    // Checked as Node will check them when the answer is sent: a CR or LF in a value is refused here, at load.
    headers: z
      .record(z.string(), z.string())
      .default({})
      .superRefine((headers, ctx) => {
        for (const [name, value] of Object.entries(headers)) {
          try {
            validateHeaderName(name);
            validateHeaderValue(name, value);
          } catch {
            const why = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)
              ? 'a header value cannot hold CR, LF or other control characters'
              : 'not a valid header name';
            ctx.addIssue({ code: 'custom', path: [name], message: why });
          }
        }
      }),
    body: z.unknown().optional(),
  })
  .strict();

export const MockFileSchema = z.object({ mocks: z.array(z.union([ToolMockSchema, HttpMockSchema])) }).strict();
export type ToolMock = z.infer<typeof ToolMockSchema>;
export type HttpMock = z.infer<typeof HttpMockSchema>;

export interface Mocks {
  file: string;
  tools: ToolMock[];
  http: HttpMock[];
}

export function loadMocks(file: string): Mocks {
  const data = readYamlFile(file, MockFileSchema, 'mock file');
  const tools: ToolMock[] = [];
  const http: HttpMock[] = [];
  for (const m of data.mocks) {
    if ('tool' in m) tools.push(m as ToolMock);
    else http.push(m as HttpMock);
  }
  return { file, tools, http };
}

/** The first tool mock for a call: same tool, and every argument it names equal. */
export function findToolMock(mocks: Mocks | undefined, tool: string, args: unknown): ToolMock | undefined {
  const given = args !== null && typeof args === 'object' ? (args as Record<string, unknown>) : {};
  return mocks?.tools.find(
    (m) => m.tool === tool && Object.entries(m.arguments ?? {}).every(([k, v]) => stringify(given[k] ?? null) === stringify(v ?? null)),
  );
}

/** The tools/call result a tool mock gives. */
export function toolMockResult(m: ToolMock): unknown {
  if (m.result !== undefined) return m.result;
  return { content: [{ type: 'text', text: m.text ?? '' }], ...(m.isError ? { isError: true } : {}) };
}

/** The first HTTP mock for a request on a route. */
export function findHttpMock(mocks: Mocks | undefined, route: string, method: string, path: string): HttpMock | undefined {
  return mocks?.http.find(
    (m) =>
      m.route.replace(/\/+$/, '') === route &&
      (m.method === undefined || m.method.toUpperCase() === method.toUpperCase()) &&
      (m.path === undefined || m.path === path),
  );
}
