import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface EverythingServer {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Start the real `@modelcontextprotocol/server-everything` on a free port (transport `streamableHttp` or `sse`). */
export async function startEverything(transport: 'streamableHttp' | 'sse'): Promise<EverythingServer> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child = spawn(process.execPath, [EVERYTHING, transport], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    const ok = await new Promise<boolean>((resolve) => {
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
        if (/listening on port|running on port/i.test(err)) resolve(true);
        if (/in use/i.test(err)) resolve(false);
      });
      child.once('exit', () => resolve(false));
    });
    if (ok) {
      const stop = async (): Promise<void> => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGKILL');
        await exited;
      };
      return { url: `http://127.0.0.1:${port}`, port, child, stop };
    }
    child.kill('SIGKILL');
    if (attempt >= 3) throw new Error(`server-everything did not start: ${err}`);
  }
}
