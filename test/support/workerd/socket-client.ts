// A local agent's WebSocket, as the workerd tests drive it: frames queue up as they arrive and
// `next()` takes them in order, failing with what it was waiting for instead of hanging the test.
// Used by test/worker/websocket-*.test.ts and every workerd test that holds a socket.
import { connectSigningInput, toBase64 } from "../../../protocol/index.ts";
import type { DeliveryFrame, ServerFrame } from "../../../protocol/index.ts";
import { relayFetch } from "./agents.ts";

export type FrameOf<T extends ServerFrame["type"]> = Extract<ServerFrame, { type: T }>;

export interface Signer {
  publicKey: string;
  sign(message: Uint8Array): Uint8Array;
}

export interface CloseInfo {
  code: number;
  reason: string;
}

export interface AuthOptions {
  after?: number;
  window?: number;
  /** What the agent speaks beyond the first protocol (protocol/lanes.ts), e.g. ["lanes"]. */
  features?: string[];
}

/** How long a wait for a frame may take before it fails saying what it waited for (a loaded machine is slow). */
const DEFAULT_WAIT_MS = 10_000;

/** Every socket a test opened, so afterEach can close what a failing test left open. */
const open = new Set<SocketClient>();

export class SocketClient {
  /** Every text frame received, in order, as sent (for byte-exact checks such as the pong). */
  readonly raw: string[] = [];
  private readonly queue: ServerFrame[] = [];
  private closeInfo: CloseInfo | null = null;
  private readonly waiters = new Set<() => void>();

  readonly ws: WebSocket;

  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.addEventListener("message", (event) => {
      const text = typeof event.data === "string" ? event.data : `<binary ${(event.data as ArrayBuffer).byteLength} bytes>`;
      this.raw.push(text);
      this.queue.push(JSON.parse(text) as ServerFrame);
      for (const wake of [...this.waiters]) wake();
    });
    ws.addEventListener("close", (event) => {
      this.closeInfo = { code: event.code, reason: event.reason };
      open.delete(this);
      for (const wake of [...this.waiters]) wake();
    });
    ws.accept();
    open.add(this);
  }

  get closed(): CloseInfo | null {
    return this.closeInfo;
  }

  /** Frames received but not yet taken by next(). */
  pending(): readonly ServerFrame[] {
    return this.queue;
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  ack(id: number): void {
    this.send({ type: "ack", id });
  }

  /** Tells the relay the gateway refused `id` (status, attempts optional, as the frame allows). */
  reject(id: number, reason: string, extra: { status?: number; attempts?: number } = {}): void {
    this.send({ type: "reject", id, reason, ...extra });
  }

  /**
   * The next frame in arrival order; with `type`, fails unless it is of that type. Fails when the
   * socket closes first or nothing arrives within `timeoutMs`.
   */
  async next<T extends ServerFrame["type"]>(type?: T, timeoutMs = DEFAULT_WAIT_MS): Promise<FrameOf<T>> {
    const what = type ? `a "${type}" frame` : "a frame";
    await this.until(() => this.queue.length > 0 || this.closeInfo !== null, timeoutMs, `waited ${timeoutMs} ms for ${what}`);
    const frame = this.queue.shift();
    if (!frame) throw new Error(`socket closed (${this.closeInfo?.code} ${this.closeInfo?.reason}) while awaiting ${what}`);
    if (type && frame.type !== type) {
      throw new Error(`awaited ${what} but got ${JSON.stringify(frame)}; still queued: ${JSON.stringify(this.queue)}`);
    }
    return frame as FrameOf<T>;
  }

  /** The next `count` frames, each of which must be a delivered message. */
  async messages(count: number, timeoutMs = DEFAULT_WAIT_MS): Promise<DeliveryFrame[]> {
    const out: DeliveryFrame[] = [];
    for (let i = 0; i < count; i++) out.push(await this.next("message", timeoutMs));
    return out;
  }

  /** Waits for the server to close the socket; frames sent before the close stay queued. */
  async closeEvent(timeoutMs = DEFAULT_WAIT_MS): Promise<CloseInfo> {
    await this.until(() => this.closeInfo !== null, timeoutMs, `waited ${timeoutMs} ms for the server to close the socket`);
    return this.closeInfo!;
  }

  /**
   * Asserts nothing arrived and the socket is open, by a round trip through the Durable Object (as
   * sync()): it handles events in order and sends synchronously, so whatever an earlier step made it
   * send comes before the pong. The way to prove a window is full, without waiting a while.
   */
  async expectQuiet(): Promise<void> {
    if (this.queue.length > 0) throw new Error(`expected no frame, got ${JSON.stringify(this.queue)}`);
    this.send('{ "type": "ping" }');
    const frame = await this.next();
    if (frame.type !== "pong") throw new Error(`expected no frame before the pong, got ${JSON.stringify(frame)}; then ${JSON.stringify(this.queue)}`);
  }

  /**
   * A round trip through the Durable Object itself: a ping spelled differently from PING_FRAME is not
   * matched by the runtime's auto-response, so its pong proves every earlier frame was handled.
   */
  async sync(): Promise<void> {
    this.send('{ "type": "ping" }');
    await this.next("pong");
  }

  /** Answers the challenge (taken from the queue) with `signer`'s key; returns the ready frame. */
  async auth(signer: Signer, options: AuthOptions = {}): Promise<FrameOf<"ready">> {
    const challenge = await this.next("challenge");
    this.send(authFrame(challenge, signer, options));
    return this.next("ready");
  }

  /**
   * Where a frame under test is sent from: past the challenge only, or (`authed`) authenticated and
   * holding the one queued message the inbox was given.
   */
  async reach(signer: Signer, authed: boolean): Promise<void> {
    if (!authed) {
      await this.next("challenge");
      return;
    }
    await this.auth(signer);
    await this.next("message");
  }

  close(code = 1000, reason = "test done"): void {
    open.delete(this);
    try {
      this.ws.close(code, reason);
    } catch {
      // Already closed by the server.
    }
  }

  private until(done: () => boolean, timeoutMs: number, failure: string): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const wake = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        reject(new Error(`${failure}; still queued: ${JSON.stringify(this.queue)}; closed: ${JSON.stringify(this.closeInfo)}`));
      }, timeoutMs);
      this.waiters.add(wake);
    });
  }
}

/** The auth frame a client sends: `signer`'s key and its signature over the challenge. */
export function authFrame(challenge: FrameOf<"challenge">, signer: Signer, options: AuthOptions = {}) {
  return {
    type: "auth" as const,
    key: signer.publicKey,
    signature: toBase64(signer.sign(connectSigningInput(challenge.agent_id, challenge.nonce))),
    ...options,
  };
}

/** The headers of a WebSocket handshake, as a browser or the `ws` library sends them. */
export const UPGRADE_HEADERS = { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" };

/** Opens GET /inbox/{agentId}/connect as a WebSocket; fails with the HTTP answer if it is refused. */
export async function connect(agentId: string): Promise<SocketClient> {
  const res = await relayFetch(`/inbox/${agentId}/connect`, { headers: UPGRADE_HEADERS });
  if (res.status !== 101 || !res.webSocket) throw new Error(`connect refused: ${res.status} ${await res.text()}`);
  return new SocketClient(res.webSocket);
}

/** Closes every socket a test left open (call from afterEach). */
export function closeAllSockets(): void {
  for (const client of [...open]) client.close();
}
