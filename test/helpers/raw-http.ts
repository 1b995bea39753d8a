/** One HTTP request with full control over its headers (`Host`, `Origin`, `Expect`), which `fetch` does not give. */
import { request, type IncomingHttpHeaders } from 'node:http';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Informational answers seen before the final one (100 Continue). */
  informational: number[];
}

export function rawRequest(
  baseUrl: string,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const informational: number[] = [];
    const req = request(
      { host: url.hostname, port: url.port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers ?? {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, informational }));
      },
    );
    req.on('information', (info) => informational.push(info.statusCode));
    req.on('error', reject);
    if (opts.headers?.expect === '100-continue' && opts.body !== undefined) {
      const body = opts.body;
      req.on('continue', () => req.end(body));
    } else req.end(opts.body);
  });
}
