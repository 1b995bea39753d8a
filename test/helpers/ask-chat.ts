/** A raw chat-completion client for crash tests: it reports the instant an answer has fully arrived. */
import { request } from 'node:http';

/** POST a chat completion; resolves with the status once the whole answer has arrived (or the connection broke). */
export function askChat(url: string, content: string, onComplete: () => void): Promise<{ status: number; complete: boolean }> {
  const u = new URL(url);
  const body = JSON.stringify({ model: 'gpt-4o-mini', stream: content.startsWith('stream'), messages: [{ role: 'user', content }] });
  return new Promise((resolve) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: '/openai/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          onComplete();
          resolve({ status: res.statusCode ?? 0, complete: true });
        });
        res.on('error', () => resolve({ status: res.statusCode ?? 0, complete: false }));
        res.on('aborted', () => resolve({ status: res.statusCode ?? 0, complete: false }));
      },
    );
    req.on('error', () => resolve({ status: 0, complete: false }));
    req.end(body);
  });
}
