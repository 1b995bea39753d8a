/**
 * The signing seam: how a request forwarded to a provider is signed for it. Most providers take the client's key as
 * it came (a header the client sent, passed through untouched): they have no signer. A provider whose requests are
 * signed over their bytes (AWS SigV4: the method, the URL, the headers and the body's hash) cannot take the client's
 * signature: the client signed for tapedeck's address, and `--llm live` and experiments change the body. Its
 * `ProviderInfo.signer` signs each forwarded request again, with tapedeck's own credentials, just before it leaves:
 * in the live forward (record, `--on-miss live`, `--llm live`, experiments, which all forward through it) and in
 * `tapedeck drift`, which sends through the same forward. The shape is `@smithy/signature-v4`'s `sign(request)`.
 *
 * A signer names the headers that carry a signature (`signatureHeaders`): the client's are dropped before signing,
 * and every provider's are redacted on every tape (`registry.ts` adds them to the secret headers; `signerFor` there
 * finds a call's signer), so neither the client's signature nor tapedeck's ever reaches a tape, except those it names
 * readable (`readableHeaders`: a signing date, a body's hash, which are no secret and help read a tape). The tape
 * records the request as the client sent it; what was signed and sent is the forward's business.
 */

/** A request as a signer sees it: what goes to the upstream, once tapedeck has chosen its headers. */
export interface SignableRequest {
  method: string;
  /** The upstream URL, query included. */
  url: URL;
  /** Lower-case names: the headers that will be sent (hop-by-hop ones already gone). */
  headers: Record<string, string>;
  /**
   * The body's bytes, or undefined when it is not held (a body too large to hold goes upstream as a stream from the
   * store): a signer that hashes the body signs such a request as an unsigned payload, or refuses it.
   */
  body: Uint8Array | undefined;
}

export interface SignOptions {
  /** The time to sign at (default now): the contract suite signs twice at one time and compares. */
  signingDate?: Date | undefined;
}

/** How a provider's forwarded requests are signed (`@smithy/signature-v4`'s shape). */
export interface RequestSigner {
  /** Its name (`sigv4`), for logs and errors. */
  readonly name: string;
  /**
   * The headers (lower case) a signature lives in (`authorization`, `x-amz-date`, `x-amz-content-sha256`,
   * `x-amz-security-token`): the client's are removed before signing, and they are redacted on every tape unless
   * named in `readableHeaders`.
   */
  readonly signatureHeaders: readonly string[];
  /**
   * Those of `signatureHeaders` that hold no secret and stay readable on a tape (SigV4's `x-amz-date`, the signing
   * time, and `x-amz-content-sha256`, the body's SHA-256: anyone with the body can compute it). Default: none.
   */
  readonly readableHeaders?: readonly string[];
  /**
   * The request signed: a new request (the one given is not changed) whose headers are the given ones with the
   * signature's set. Rejects when it cannot sign (no credentials): the client then gets an error that says so.
   */
  sign(request: SignableRequest, opts?: SignOptions): Promise<SignableRequest>;
}

/**
 * `request` signed by `signer`: the client's signature headers dropped first, so a signer never builds on them and
 * none of them travels beside the new signature.
 */
export function signRequest(signer: RequestSigner, request: SignableRequest, opts?: SignOptions): Promise<SignableRequest> {
  const headers: Record<string, string> = {};
  for (const k in request.headers) if (!signer.signatureHeaders.includes(k)) headers[k] = request.headers[k] as string;
  return signer.sign({ method: request.method, url: request.url, headers, body: request.body }, opts);
}
