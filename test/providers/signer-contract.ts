/**
 * The promises every request signer keeps (`src/providers/signing.ts`), as one suite a signer runs: the tests' HMAC
 * signer (`signer-contract.test.ts`), and the providers' (SigV4). A signer passes when it signs without changing what
 * it was given, puts its signature only in the headers it names (so none reaches a tape), replaces a client's
 * signature rather than building on it, signs the same request at the same time the same way, and covers the body.
 */
import { describe, expect, it } from 'vitest';
import { signRequest, type RequestSigner, type SignableRequest } from '../../src/providers/signing.js';

export interface SignerContractOptions {
  /** A request of the provider's, to sign (a JSON POST, say). */
  request: SignableRequest;
  /** Whether the signature covers the body (SigV4 does). */
  signsBody: boolean;
  /** Whether a request whose body is not held (streamed from the store) can be signed. */
  signsStreamedBody: boolean;
  /** Optional: whether an upstream of this provider would accept the signed request (its own check). */
  accepted?: (signed: SignableRequest) => boolean;
}

const AT = new Date('2026-05-01T12:00:00Z');

const copy = (r: SignableRequest): SignableRequest => ({
  method: r.method,
  url: new URL(r.url.href),
  headers: { ...r.headers },
  body: r.body === undefined ? undefined : Buffer.from(r.body),
});

export function signerContract(signer: RequestSigner, opts: SignerContractOptions): void {
  describe(`signer contract: ${signer.name}`, () => {
    it('names its signature headers in lower case', () => {
      expect(signer.signatureHeaders.length).toBeGreaterThan(0);
      for (const h of signer.signatureHeaders) expect(h).toBe(h.toLowerCase());
    });

    it('names readable only headers among its signature headers, and keeps at least one secret', () => {
      const readable = signer.readableHeaders ?? [];
      for (const h of readable) expect(signer.signatureHeaders, h).toContain(h);
      expect(signer.signatureHeaders.filter((h) => !readable.includes(h)).length).toBeGreaterThan(0);
    });

    it('signs a new request: the one it was given is unchanged', async () => {
      const given = copy(opts.request);
      const before = copy(given);
      const signed = await signRequest(signer, given, { signingDate: AT });
      expect(signed).not.toBe(given);
      expect(given).toEqual(before);
      expect(given.url.href).toBe(before.url.href);
    });

    it('puts its signature only in the headers it names, and keeps every other header as given', async () => {
      const signed = await signRequest(signer, copy(opts.request), { signingDate: AT });
      for (const [name, value] of Object.entries(signed.headers)) {
        if (signer.signatureHeaders.includes(name)) continue;
        expect(opts.request.headers[name], `header ${name}`).toBe(value);
      }
      for (const name of Object.keys(opts.request.headers))
        if (!signer.signatureHeaders.includes(name)) expect(signed.headers[name], `header ${name}`).toBe(opts.request.headers[name]);
      expect(signer.signatureHeaders.some((h) => signed.headers[h] !== undefined)).toBe(true);
      for (const name of Object.keys(signed.headers)) expect(name).toBe(name.toLowerCase());
      expect(signed.method).toBe(opts.request.method);
      expect(Buffer.from(signed.body ?? [])).toEqual(Buffer.from(opts.request.body ?? []));
    });

    it("replaces a client's signature: none of the client's signature values is left", async () => {
      const client = copy(opts.request);
      for (const h of signer.signatureHeaders) client.headers[h] = `client-${h}-value`;
      const signed = await signRequest(signer, client, { signingDate: AT });
      const plain = await signRequest(signer, copy(opts.request), { signingDate: AT });
      for (const h of signer.signatureHeaders) expect(signed.headers[h], h).not.toBe(`client-${h}-value`);
      expect(signed.headers).toEqual(plain.headers);
    });

    it('signs the same request at the same time the same way, and another time otherwise', async () => {
      const a = await signRequest(signer, copy(opts.request), { signingDate: AT });
      const b = await signRequest(signer, copy(opts.request), { signingDate: AT });
      const later = await signRequest(signer, copy(opts.request), { signingDate: new Date(AT.getTime() + 60_000) });
      expect(a.headers).toEqual(b.headers);
      expect(later.headers).not.toEqual(a.headers);
    });

    if (opts.signsBody)
      it('covers the body: another body, another signature', async () => {
        const other = copy(opts.request);
        other.body = Buffer.from(`${Buffer.from(opts.request.body ?? []).toString()} `);
        const a = await signRequest(signer, copy(opts.request), { signingDate: AT });
        const b = await signRequest(signer, other, { signingDate: AT });
        expect(b.headers).not.toEqual(a.headers);
      });

    it(opts.signsStreamedBody ? 'signs a request whose body is streamed' : 'refuses a request whose body is streamed', async () => {
      const streamed = { ...copy(opts.request), body: undefined };
      const signing = signRequest(signer, streamed, { signingDate: AT });
      if (opts.signsStreamedBody) await expect(signing).resolves.toBeDefined();
      else await expect(signing).rejects.toThrow();
    });

    if (opts.accepted !== undefined) {
      const accepted = opts.accepted;
      it("is accepted by the provider's check, and a changed body is not", async () => {
        const signed = await signRequest(signer, copy(opts.request), { signingDate: new Date() });
        expect(accepted(signed)).toBe(true);
        if (opts.signsBody) expect(accepted({ ...signed, body: Buffer.from('{"changed":true}') })).toBe(false);
      });
    }
  });
}
