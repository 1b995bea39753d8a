/**
 * The environment that points an agent at tapedeck: base URLs for the LLM APIs (each provider's variables, through
 * its default route prefix: `ProviderInfo.baseUrlEnv`),
 * `TAPEDECK_URL` for anything else, and, so that every other HTTP(S) call goes through tapedeck too, the forward-proxy
 * variables with the tapedeck CA trusted (combined with the system's roots where a variable replaces them).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rootCertificates } from 'node:tls';
import { providerInfos } from '../providers/registry.js';

export interface AgentEnvOptions {
  /** The proxy's base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** Set the forward-proxy variables, trusting this CA certificate. */
  forwardProxy?: {
    /** The CA certificate file (`NODE_EXTRA_CA_CERTS` adds it to Node's roots). */
    caCertPath: string;
    /**
     * The file holding the system's roots plus the CA (for `SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`,
     * which replace the roots rather than add to them); `writeCaBundle` makes it.
     */
    bundlePath: string;
  };
}

/** Variable -> value, in the order they are printed. */
export function agentEnv(opts: AgentEnvOptions): Record<string, string> {
  const url = opts.url;
  const vars: Record<string, string> = { TAPEDECK_URL: url };
  for (const p of providerInfos()) {
    if (p.route === undefined) continue;
    for (const v of p.baseUrlEnv ?? []) vars[v.name] = `${url}${p.route.prefix}${v.path ?? ''}`;
  }
  const fp = opts.forwardProxy;
  if (fp === undefined) return vars;
  const self = new URL(url).host;
  return {
    ...vars,
    // Both spellings: curl reads only the lower-case http_proxy; Python and Node read either.
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    // Only tapedeck itself goes direct (a client that proxies it anyway is answered as if it had not).
    NO_PROXY: self,
    no_proxy: self,
    // Node 22.21+ / 24: fetch and node:http honour the proxy variables.
    NODE_USE_ENV_PROXY: '1',
    NODE_EXTRA_CA_CERTS: fp.caCertPath,
    SSL_CERT_FILE: fp.bundlePath,
    REQUESTS_CA_BUNDLE: fp.bundlePath,
    CURL_CA_BUNDLE: fp.bundlePath,
  };
}

/** Where the system keeps its roots on common Linux distributions and macOS. */
const SYSTEM_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/ca-bundle.pem',
  '/etc/ssl/cert.pem',
];

/**
 * Write `dir/ca-bundle.pem`: the roots the agent would have trusted (its `SSL_CERT_FILE` if set, else the system's,
 * else Node's own), any `NODE_EXTRA_CA_CERTS` it had, and the tapedeck CA. Returns the file and a
 * `NODE_EXTRA_CA_CERTS` file (the CA plus the agent's own extra certificates).
 */
export function writeCaBundle(dir: string, caPem: string, env: NodeJS.ProcessEnv): { bundlePath: string; extraPath: string } {
  const read = (file: string | undefined): string | undefined => {
    if (file === undefined || file === '' || !existsSync(file)) return undefined;
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  };
  const system = read(env.SSL_CERT_FILE) ?? SYSTEM_BUNDLES.map((f) => read(f)).find((t) => t !== undefined) ?? rootCertificates.join('\n');
  const extra = read(env.NODE_EXTRA_CA_CERTS);
  const bundlePath = path.join(dir, 'ca-bundle.pem');
  const extraPath = path.join(dir, 'extra-ca.pem');
  const join = (...parts: (string | undefined)[]): string =>
    parts
      .filter((p): p is string => p !== undefined)
      .map((p) => (p.endsWith('\n') ? p : `${p}\n`))
      .join('');
  writeFileSync(bundlePath, join(system, extra, caPem));
  writeFileSync(extraPath, join(extra, caPem));
  return { bundlePath, extraPath };
}
