/**
 * A session handler whose module is loaded by the first WebSocket session: the relay and the player bring in `ws`
 * (~55 ms of CPU to load, ~100 ms with tapedeck's session modules), which a run that never sees a WebSocket should not
 * pay at every start.
 */
import type { Logger } from '../../log.js';
import type { SessionHandler } from './types.js';

/** `track`: shutdown waits for what it is given (the exchange log's `track`), so a session that came while the module loaded is not lost. */
export function lazySessions(load: () => Promise<SessionHandler>, log: Logger, track: (work: Promise<unknown>) => void): SessionHandler {
  let loaded: SessionHandler | undefined;
  let loading: Promise<SessionHandler> | undefined;
  let closing = false;
  return {
    handle(up) {
      if (loaded !== undefined) return loaded.handle(up);
      loading ??= load().then((h) => (loaded = h));
      track(
        loading.then(
          (h) => {
            h.handle(up);
            // Stopping began while the module loaded: this session closes like the others.
            if (closing) h.closeAll();
          },
          (err: unknown) => {
            log.error({ err: (err as Error).message }, 'could not load the WebSocket session handler');
            up.socket.destroy();
          },
        ),
      );
    },
    closeAll() {
      closing = true;
      loaded?.closeAll();
    },
  };
}
