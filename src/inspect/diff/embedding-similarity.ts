/**
 * Output similarity through embeddings (`match.semantic.embeddings`, the endpoint semantic matching uses): the
 * cosine of the two texts' vectors, clamped to [0, 1]. Every pair is embedded ahead (one batch), so the diff itself
 * stays synchronous. Equal texts score 1 and two empty texts 1 without asking the endpoint.
 */
import { cosine, createEmbedder, type EmbeddingsOptions } from '../../replay/semantic/embeddings.js';
import { round4, type OutputSimilarity } from './similarity.js';

export async function embeddingSimilarity(pairs: readonly [string, string][], opts: EmbeddingsOptions): Promise<OutputSimilarity> {
  const embedder = createEmbedder(opts);
  const texts = [...new Set(pairs.flatMap(([a, b]) => (a === b ? [] : [a, b])).filter((t) => t.trim() !== ''))];
  const vectors = texts.length === 0 ? [] : await embedder.embed(texts);
  const byText = new Map(texts.map((t, i) => [t, vectors[i] as number[]]));
  return {
    method: 'embeddings',
    of(a, b) {
      if (a === b) return 1;
      const va = byText.get(a);
      const vb = byText.get(b);
      if (va === undefined || vb === undefined) return 0; // one side is empty, the other is not
      return round4(Math.min(1, Math.max(0, cosine(va, vb))));
    },
  };
}
