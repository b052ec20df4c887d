// MCP sessions for clients that keep one. A session holds no identity: every
// HTTP request is identified afresh from its own headers, so a session id
// alone grants nothing. Sessions are kept in memory, bounded in number and
// dropped when idle; a client whose session is gone is told 404 and starts
// a new one, as the protocol asks.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Runtime } from "../runtime.ts";
import { approvalSeconds } from "../policy/approvals.ts";
import { askAtClient, createMcpServer, type ContextOf, type McpCallContext } from "./server.ts";

export interface Session {
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  seen: number;
}

export class McpSessions {
  private map = new Map<string, Session>();
  /** The id re-inserted last by live, so the newest in the map's order (or since dropped). */
  private last: string | null = null;

  constructor(
    private rt: Runtime,
    private contextOf: ContextOf,
    readonly max = 1000,
    readonly idleMs = 60 * 60 * 1000,
  ) {}

  get size() {
    return this.map.size;
  }

  /** A fresh session-keeping transport; it is registered once its initialize request is accepted. */
  async open(): Promise<WebStandardStreamableHTTPServerTransport> {
    this.sweep();
    const server = createMcpServer(this.rt, this.contextOf, { notifies: true });
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        while (this.map.size >= this.max) this.drop(this.map.keys().next().value!);
        this.map.set(id, { server, transport, seen: this.now() });
        this.last = id;
      },
      onsessionclosed: (id) => {
        this.map.delete(id);
      },
    });
    await server.connect(transport);
    return transport;
  }

  /** The live session with this id, or null when it never existed, was closed or sat idle too long. */
  get(id: string): WebStandardStreamableHTTPServerTransport | null {
    return this.live(id)?.transport ?? null;
  }

  /** The live session with this id (its transport and server), or null as `get` says: one lookup gives what a request needs of it. */
  live(id: string): Session | null {
    const s = this.map.get(id);
    if (!s) return null;
    const now = this.now();
    if (now - s.seen > this.idleMs) {
      this.drop(id);
      return null;
    }
    s.seen = now;
    // Re-inserting keeps the map in least-recently-used order for eviction; the session used last is already last.
    if (id !== this.last) {
      this.map.delete(id);
      this.map.set(id, s);
      this.last = id;
    }
    return s;
  }

  /** How to ask the session's person (elicitation), when its client declared it can be asked. */
  asker(id: string | Session, baseUrl: string): McpCallContext["ask"] {
    const s = typeof id === "string" ? this.map.get(id) : id;
    if (!s?.server.getClientCapabilities()?.elicitation) return undefined;
    return (q) => askAtClient(s.server, q, approvalSeconds(this.rt), baseUrl);
  }

  /** What the session's client declared at initialize. */
  client(id: string | Session) {
    return (typeof id === "string" ? this.map.get(id) : id)?.server.getClientCapabilities();
  }

  private now() {
    return this.rt.clock.now().getTime();
  }

  private sweep() {
    const now = this.now();
    for (const [id, s] of this.map) if (now - s.seen > this.idleMs) this.drop(id);
  }

  private drop(id: string) {
    const s = this.map.get(id);
    if (!s) return;
    this.map.delete(id);
    void s.server.close().catch(() => {});
  }
}
