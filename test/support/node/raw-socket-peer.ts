// A WebSocket client on a bare TCP socket, for the tests of what the relay does to sockets that never
// authenticate (test/node/auth-deadline.e2e.test.ts, socket-close.e2e.test.ts): it sees each frame the
// server sends as it arrives (a `ws` client only reports a close once the TCP connection ends), can
// ping, and never answers a close frame — the peer the relay must end itself.
import { randomBytes } from "node:crypto";
import net from "node:net";

export interface ServerFrame {
  /** The opcode: 1 text, 8 close, 10 pong… */
  op: number;
  /** A close frame's code. */
  code?: number;
  /** A text frame's text. */
  text?: string;
  /** Date.now() when it arrived. */
  at: number;
}

export interface RawSocketPeer {
  /** Date.now() just before the upgrade request was written: the relay's clock for the socket starts later. */
  requestedAt: number;
  frames: ServerFrame[];
  /** Resolves with Date.now() when the TCP connection ends, whoever ends it; fails after `timeoutMs` saying so. */
  ended(timeoutMs?: number): Promise<number>;
  /** The first frame (already here or still to come) that `matches`; fails after `timeoutMs` saying what was awaited. */
  frame(what: string, matches: (frame: ServerFrame) => boolean, timeoutMs?: number): Promise<ServerFrame>;
  write(bytes: Buffer): void;
  destroy(): void;
}

/** A client frame: text, FIN, masked as RFC 6455 requires of clients. */
export function maskedText(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  const n = payload.length;
  const header = n < 126 ? Buffer.from([0x81, 0x80 | n]) : Buffer.alloc(10);
  if (n >= 126) {
    header[0] = 0x81;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(n), 2);
  }
  for (let i = 0; i < n; i++) payload[i] = payload[i]! ^ mask[i % 4]!;
  return Buffer.concat([header, mask, payload]);
}

/** `frame` sent at once after the upgrade, then every `everyMs`. */
export interface Pinging {
  frame: string;
  everyMs: number;
}

/** Opens GET /inbox/{agentId}/connect on the relay at `port`, optionally pinging. */
export function rawSocketPeer(port: number, agentId: string, ping?: Pinging): Promise<RawSocketPeer> {
  return new Promise((resolve, reject) => {
    const frames: ServerFrame[] = [];
    const waiters = new Set<() => void>();
    let upgraded = false;
    let buffered = Buffer.alloc(0);
    const requestedAt = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    const sendPing = () => ping && upgraded && !socket.destroyed && socket.write(maskedText(ping.frame));
    const pinger = ping ? setInterval(sendPing, ping.everyMs) : null;
    const endedAt = new Promise<number>((done) =>
      socket.once("close", () => {
        if (pinger) clearInterval(pinger);
        done(Date.now());
        for (const wake of [...waiters]) wake();
      }),
    );
    // A refused connection rejects below; a reset after the upgrade is what the relay does to a deaf peer.
    socket.on("error", (err) => upgraded || reject(err));
    const frame = (what: string, matches: (f: ServerFrame) => boolean, timeoutMs = 15_000) =>
      new Promise<ServerFrame>((found, fail) => {
        const look = () => {
          const hit = frames.find(matches);
          if (!hit && !socket.destroyed) return;
          clearTimeout(timer);
          waiters.delete(look);
          if (hit) found(hit);
          else fail(new Error(`the connection ended without ${what}; frames: ${JSON.stringify(frames)}`));
        };
        const timer = setTimeout(() => {
          waiters.delete(look);
          fail(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; frames so far: ${JSON.stringify(frames)}`));
        }, timeoutMs);
        waiters.add(look);
        look();
      });
    const ended = (timeoutMs = 15_000) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`the connection did not end within ${timeoutMs} ms; frames: ${JSON.stringify(frames)}`)), timeoutMs);
      });
      return Promise.race([endedAt, late]).finally(() => clearTimeout(timer));
    };
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!upgraded) {
        const end = buffered.indexOf("\r\n\r\n");
        if (end < 0) return;
        if (!buffered.subarray(0, 12).toString().includes("101")) return reject(new Error(buffered.toString()));
        upgraded = true;
        buffered = buffered.subarray(end + 4);
        sendPing();
        resolve({ requestedAt, frames, ended, frame, write: (bytes) => void socket.write(bytes), destroy: () => socket.destroy() });
      }
      // Unmasked server frames; short ones only (the relay's are).
      while (buffered.length >= 2) {
        const length = buffered[1]! & 0x7f;
        const offset = length === 126 ? 4 : 2;
        const size = length === 126 ? buffered.readUInt16BE(2) : length;
        if (buffered.length < offset + size) break;
        const op = buffered[0]! & 0x0f;
        const payload = buffered.subarray(offset, offset + size);
        const at = Date.now();
        frames.push(op === 8 ? { op, ...(size >= 2 ? { code: payload.readUInt16BE(0) } : {}), at } : op === 1 ? { op, text: payload.toString("utf8"), at } : { op, at });
        buffered = buffered.subarray(offset + size);
      }
      for (const wake of [...waiters]) wake();
    });
    socket.write(
      `GET /inbox/${agentId}/connect HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\n\r\n`,
    );
  });
}
