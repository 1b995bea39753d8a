/**
 * An HTTPS server with its own self-signed certificate (made with node-forge), for the forward-proxy tests: a
 * "search API" that is not an LLM, counting what it receives.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { isIP, type AddressInfo } from 'node:net';
import forge from 'node-forge';

export interface HttpsUpstream {
  url: string;
  /** The server's certificate (PEM): what a client must trust to reach it directly. */
  certPem: string;
  requests: string[];
  close(): Promise<void>;
}

export function selfSignedCert(ip: string): { key: string; cert: string } {
  const keys = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKey);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const subject = [{ name: 'commonName', value: ip }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'subjectAltName', altNames: [isIP(ip) ? { type: 7, ip } : { type: 2, value: ip }] },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keys.privateKey), forge.md.sha256.create());
  return { key: keys.privateKey, cert: forge.pki.certificateToPem(cert) };
}

/** A JSON search API on `https://HOST:PORT/search?q=...` (HOST 127.0.0.2 by default: not tapedeck's address). */
export async function startHttpsSearch(host = '127.0.0.2'): Promise<HttpsUpstream> {
  const { key, cert } = selfSignedCert(host);
  const requests: string[] = [];
  const server: Server = createServer({ key, cert }, (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const q = new URL(req.url ?? '/', 'https://x').searchParams.get('q');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ query: q, results: [`${q} result 1`, `${q} result 2`] }));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://${host}:${port}`,
    certPem: cert,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
