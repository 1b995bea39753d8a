/**
 * Times as a tape writes them: offsets and durations in milliseconds, to the microsecond (`12.345`). Every path that
 * stamps an exchange, an event, a message or a frame rounds through here, so two records of the same moment agree.
 */
export function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
