/** The tests' HMAC signer (`hmac-signer.ts`, shaped like SigV4) through the signer contract (`signer-contract.ts`). */
import { hmacSigner, verifyHmac } from './hmac-signer.js';
import { signerContract } from './signer-contract.js';

const secret = 'tapedecks-own-secret';
signerContract(hmacSigner(secret), {
  request: {
    method: 'POST',
    url: new URL('https://runtime.example/model/m1/invoke?x=1'),
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: Buffer.from('{"messages":[{"role":"user","content":"hi"}]}'),
  },
  signsBody: true,
  signsStreamedBody: true,
  accepted: (signed) => verifyHmac(secret, { ...signed, body: Buffer.from(signed.body ?? []) }),
});
