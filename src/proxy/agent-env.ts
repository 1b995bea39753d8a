/**
 * The environment that points an agent's SDKs at tapedeck: base URLs for the LLM APIs (through the default route
 * prefixes), `TAPEDECK_URL` for anything else.
 */

export interface AgentEnvOptions {
  /** The proxy's base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
}

/** Variable -> value, in the order they are printed. */
export function agentEnv(opts: AgentEnvOptions): Record<string, string> {
  const url = opts.url;
  return {
    TAPEDECK_URL: url,
    // The OpenAI SDKs (Python, Node, and most OpenAI-compatible clients) take the base URL with its `/v1`.
    OPENAI_BASE_URL: `${url}/openai/v1`,
    // The Anthropic SDKs add `/v1/messages` themselves (the Vercel AI SDK wants `${url}/anthropic/v1`).
    ANTHROPIC_BASE_URL: `${url}/anthropic`,
    // Google's Gen AI SDKs (Python and JavaScript) and the Gemini CLI.
    GOOGLE_GEMINI_BASE_URL: `${url}/gemini`,
    GEMINI_BASE_URL: `${url}/gemini`,
  };
}
