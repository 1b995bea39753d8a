/**
 * What an answer does once its tape can no longer be written (disk full, the database gone): `refuse` cuts an answer
 * it could not record (and refuses new calls), `serve` lets answers through unrecorded. One policy for every
 * transport, read by the tee (`tee.ts`) and by each transport's refusal of new calls.
 */
export type TapeFailurePolicy = 'refuse' | 'serve';
