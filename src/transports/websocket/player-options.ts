/**
 * What a WebSocket replay is given (`player.ts` builds the handler, `play-session.ts` plays one session): apart from
 * both so that neither imports the other for it.
 */
import type { Logger } from '../../log.js';
import type { LlmOverrides } from '../../providers/types.js';
import type { OnMiss, Timing } from '../../replay/modes.js';
import type { RedactOptions } from '../../tape/redaction/redact.js';
import type { LoadedTape } from '../../tape/tape-reader.js';
import type { Exchange } from '../../tape/schema.js';
import type { Matcher } from '../../replay/matcher.js';
import type { BodySpill } from '../../http/body-spill.js';
import type { ExchangeLog } from '../../engine/exchange-log.js';
import type { SettleContext } from '../../engine/settle.js';

export interface SessionPlayerOptions {
  tape: LoadedTape;
  out: ExchangeLog;
  log: Logger;
  onMiss: OnMiss;
  timing: Timing;
  /** How secrets are recognised (a recorded marker matches the live secret). */
  redact?: RedactOptions;
  /** For sessions that go live: how long the upstream may take to switch protocols. */
  handshakeMs: number;
  /** Faults injected into the run (`--faults`): a session a rule picks is closed with its code after N server messages. */
  faults?: SettleContext['faults'];
  /** Modified replay: the overrides for a session whose LLM calls go live, or undefined to play it from the tape. */
  live?: (call: { route: string; provider: string; model?: string | undefined }) => LlmOverrides | undefined;
  /**
   * The matcher over the calls recorded in sessions of an API that asks for one call per message (Responses over
   * WebSocket): replay's, with the run's semantic settings. Default: exact, then the semantic stages' defaults.
   */
  callMatcher?: (steps: readonly Exchange[]) => Matcher;
  /** For sessions that go live: where messages too large to hold twice go as they are (the replay tape's store). */
  spill?: BodySpill;
}
