/**
 * Optional embedding similarity through any OpenAI-compatible `/v1/embeddings` endpoint (a local server is fine).
 * Off by default; vectors are cached per text, so each text is embedded at most once per replay.
 */
import { TapedeckError } from '../../errors.js';

export interface EmbeddingsOptions {
  /** Base URL (`http://127.0.0.1:11434/v1`) or the full `/embeddings` endpoint. */
  url: string;
  model: string;
  /** Environment variable holding the API key, if the endpoint needs one. */
  apiKeyEnv?: string | undefined;
  /** Threshold on cosine similarity (default: the semantic threshold). */
  threshold?: number | undefined;
}

export interface Embedder {
  /** One vector per text, in order. Throws a `TapedeckError` when the endpoint fails. */
  embed(texts: readonly string[]): Promise<number[][]>;
}

export function createEmbedder(opts: EmbeddingsOptions): Embedder {
  const endpoint = opts.url.replace(/\/+$/, '').endsWith('/embeddings') ? opts.url : `${opts.url.replace(/\/+$/, '')}/embeddings`;
  const cache = new Map<string, Promise<number[]>>();

  async function fetchVectors(texts: string[]): Promise<number[][]> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const key = opts.apiKeyEnv ? process.env[opts.apiKeyEnv] : undefined;
    if (key) headers.authorization = `Bearer ${key}`;
    let res: Response;
    try {
      res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify({ model: opts.model, input: texts }) });
    } catch (err) {
      throw new TapedeckError('EMBEDDINGS_FAILED', `embeddings endpoint ${endpoint} unreachable: ${(err as Error).message}`);
    }
    const body = (await res.json().catch(() => undefined)) as { data?: { index?: number; embedding?: unknown }[] } | undefined;
    if (!res.ok || !Array.isArray(body?.data) || body.data.length !== texts.length) {
      throw new TapedeckError(
        'EMBEDDINGS_FAILED',
        `embeddings endpoint ${endpoint} answered ${res.status} without ${texts.length} vectors`,
      );
    }
    const vectors: number[][] = new Array<number[]>(texts.length);
    body.data.forEach((d, i) => {
      if (!Array.isArray(d.embedding))
        throw new TapedeckError('EMBEDDINGS_FAILED', `embeddings endpoint ${endpoint} returned a malformed vector`);
      vectors[d.index ?? i] = d.embedding as number[];
    });
    return vectors;
  }

  return {
    async embed(texts) {
      const missing = [...new Set(texts.filter((t) => !cache.has(t)))];
      if (missing.length > 0) {
        const batch = fetchVectors(missing);
        missing.forEach((t, i) => {
          const one = batch.then((v) => v[i] as number[]);
          one.catch(() => cache.delete(t)); // a failed call is retried next time, not cached
          cache.set(t, one);
        });
      }
      return Promise.all(texts.map((t) => cache.get(t) as Promise<number[]>));
    },
  };
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
