/**
 * The local certificate authority that lets tapedeck see HTTPS an agent sends through it as a forward proxy
 * (`HTTPS_PROXY`): created once (the private key readable by the user only), then a certificate per host, made on
 * demand and kept for the process. Certificates are built and signed with node-forge; keys come from node:crypto.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import path from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { createRequire } from 'node:module';
import type Forge from 'node-forge';
import { TapedeckError } from '../errors.js';

/**
 * node-forge, loaded on first use: only a run that intercepts HTTPS makes certificates, and loading it costs every
 * start ~35 ms of CPU (record, replay and each wrapped run). In the single executable (a CommonJS bundle,
 * scripts/build-exe.mjs) the bundler sees the plain `require` and bundles node-forge, still run on first use; as ES
 * modules (npm package, checkout) there is no `require`, and Node's own finds it in node_modules.
 */
let forgeLib: typeof Forge | undefined;
const forge = (): typeof Forge =>
  (forgeLib ??= (
    typeof require === 'function'
      ? // eslint-disable-next-line @typescript-eslint/no-require-imports
        require('node-forge')
      : createRequire(import.meta.url)('node-forge')
  ) as typeof Forge);

export const CA_CERT_FILE = 'ca.pem';
export const CA_KEY_FILE = 'ca-key.pem';

export interface CertificateAuthority {
  /** The CA certificate (PEM): what a client must trust. */
  readonly certPem: string;
  readonly certPath: string;
  readonly keyPath: string;
  /** Whether this call created it. */
  readonly created: boolean;
  /** SHA-256 fingerprint of the CA certificate, `AB:CD:...`. */
  readonly fingerprint: string;
  /** A TLS context presenting a certificate for `host` (a name or an IP address), signed by this CA; cached. */
  contextFor(host: string): SecureContext;
}

/**
 * Where the CA lives: `$TAPEDECK_CA_DIR`, else `$XDG_CONFIG_HOME/tapedeck`, else `~/.config/tapedeck`
 * (`%APPDATA%\tapedeck` on Windows).
 */
export function defaultCaDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TAPEDECK_CA_DIR) return env.TAPEDECK_CA_DIR;
  if (process.platform === 'win32' && env.APPDATA) return path.join(env.APPDATA, 'tapedeck');
  return path.join(env.XDG_CONFIG_HOME || path.join(homedir(), '.config'), 'tapedeck');
}

/** Load the CA in `dir`, creating it first when there is none (or when `regenerate` says to replace it). */
export function loadOrCreateCa(dir: string, opts: { regenerate?: boolean } = {}): CertificateAuthority {
  const certPath = path.join(dir, CA_CERT_FILE);
  const keyPath = path.join(dir, CA_KEY_FILE);
  let created = false;
  if (opts.regenerate === true || !existsSync(certPath) || !existsSync(keyPath)) {
    createCa(dir, certPath, keyPath);
    created = true;
  }
  let certPem: string;
  let caCert: Forge.pki.Certificate;
  let caKey: Forge.pki.rsa.PrivateKey;
  try {
    certPem = readFileSync(certPath, 'utf8');
    caCert = forge().pki.certificateFromPem(certPem);
    caKey = forge().pki.privateKeyFromPem(readFileSync(keyPath, 'utf8'));
  } catch (err) {
    throw new TapedeckError('BAD_CONFIG', `the tapedeck CA in ${dir} cannot be read (${(err as Error).message}); regenerate it`, {
      cause: err,
    });
  }
  // One key for every host certificate of this process: only signing happens per host.
  let leaf: { privateKey: string; publicKey: Forge.pki.PublicKey } | undefined;
  const contexts = new Map<string, SecureContext>();
  const der = forge().asn1.toDer(forge().pki.certificateToAsn1(caCert)).getBytes();
  const fingerprint = (forge().md.sha256.create().update(der).digest().toHex().match(/../g) ?? []).join(':').toUpperCase();
  return {
    certPem,
    certPath,
    keyPath,
    created,
    fingerprint,
    contextFor(host) {
      const name = host.toLowerCase();
      let ctx = contexts.get(name);
      if (ctx === undefined) {
        if (leaf === undefined) {
          const keys = rsaKeys();
          leaf = { privateKey: keys.privateKey, publicKey: forge().pki.publicKeyFromPem(keys.publicKey) };
        }
        const cert = hostCertificate(name, leaf.publicKey, caCert, caKey);
        ctx = createSecureContext({ key: leaf.privateKey, cert: forge().pki.certificateToPem(cert) + certPem });
        if (contexts.size < 4096) contexts.set(name, ctx);
      }
      return ctx;
    },
  };
}

function rsaKeys(): { privateKey: string; publicKey: string } {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

function serial(): string {
  // Positive, 16 bytes.
  const b = randomBytes(16);
  b[0] = (b[0] as number) & 0x7f;
  return b.toString('hex');
}

function createCa(dir: string, certPath: string, keyPath: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const keys = rsaKeys();
  const publicKey = forge().pki.publicKeyFromPem(keys.publicKey);
  const privateKey = forge().pki.privateKeyFromPem(keys.privateKey);
  const cert = forge().pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 24 * 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 10 * 365 * 24 * 3600_000);
  const subject = [
    { name: 'commonName', value: `tapedeck local CA (${new Date().toISOString().slice(0, 10)})` },
    { name: 'organizationName', value: 'tapedeck' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(privateKey, forge().md.sha256.create());
  // The key first, readable by the user only, each file written whole and then renamed into place.
  const tmpKey = `${keyPath}.${process.pid}.tmp`;
  writeFileSync(tmpKey, keys.privateKey, { mode: 0o600 });
  chmodSync(tmpKey, 0o600);
  renameSync(tmpKey, keyPath);
  const tmpCert = `${certPath}.${process.pid}.tmp`;
  writeFileSync(tmpCert, forge().pki.certificateToPem(cert), { mode: 0o644 });
  renameSync(tmpCert, certPath);
}

function hostCertificate(
  host: string,
  publicKey: Forge.pki.PublicKey,
  caCert: Forge.pki.Certificate,
  caKey: Forge.pki.rsa.PrivateKey,
): Forge.pki.Certificate {
  const cert = forge().pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial();
  // Within the 398 days clients accept for a server certificate.
  cert.validity.notBefore = new Date(Date.now() - 24 * 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: host.slice(0, 64) }]);
  cert.setIssuer(caCert.subject.attributes);
  const ip = isIP(host) !== 0;
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [ip ? { type: 7, ip: host } : { type: 2, value: host }] },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge().md.sha256.create());
  return cert;
}
