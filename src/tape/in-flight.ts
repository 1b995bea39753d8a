/** The appends a writer has under way, so that `close` waits for every one of them (whatever their outcome). */
export interface InFlight {
  /** Track `p` until it settles; returns `p`. */
  track<T>(p: Promise<T>): Promise<T>;
  /** Resolves once everything tracked so far has settled. */
  settled(): Promise<void>;
}

export function createInFlight(): InFlight {
  const pending = new Set<Promise<unknown>>();
  return {
    track(p) {
      pending.add(p);
      void p.finally(() => pending.delete(p)).catch(() => undefined);
      return p;
    },
    async settled() {
      await Promise.allSettled([...pending]);
    },
  };
}
