/**
 * A real HTTP server for a test's upstream: node:http on 127.0.0.1, port 0, with its URL and a close that ends open
 * connections too (a held stream or a keep-alive socket never keeps a test's end waiting). The scripted upstreams
 * (`scripted-upstream.ts`, `bedrock-upstream.ts`) stand on it; a test whose upstream must do something none of them
 * does (split a line across writes, check a signature) passes its own handler.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

export async function startLocalServer(handler: RequestListener): Promise<LocalServer> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A request's whole body. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
