/**
 * Replay sessions: tapedeck is the MCP server in replay, so it mints its own `Mcp-Session-Id`s (never the recorded
 * ones: a client must not be able to tell a replay from a fresh server) and forgets them on DELETE.
 */
import { randomUUID } from 'node:crypto';

export interface ReplaySession {
  id: string;
  route: string;
  /** The client's initialize request (used to open a live upstream session when misses go live). */
  initialize?: Record<string, unknown>;
  /** The real server's session id, once a miss going live opened one. */
  liveSessionId?: Promise<string | undefined>;
  /** Legacy HTTP+SSE: write an event to the open GET stream; resolves once the client can take more, false once it has gone. */
  push?: (event: string, data: string) => Promise<boolean>;
  /** Legacy HTTP+SSE: answers still being written to the stream, in order. */
  sending?: Promise<void>;
}

export class SessionStore {
  private readonly sessions = new Map<string, ReplaySession>();

  create(route: string): ReplaySession {
    const s: ReplaySession = { id: randomUUID(), route };
    this.sessions.set(s.id, s);
    return s;
  }

  /** The session with this id on this route; a session id from another route is unknown here. */
  get(id: string, route: string): ReplaySession | undefined {
    const s = this.sessions.get(id);
    return s?.route === route ? s : undefined;
  }

  delete(id: string): boolean {
    return this.sessions.delete(id);
  }
}
