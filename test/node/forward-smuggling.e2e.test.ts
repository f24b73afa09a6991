// No request smuggling into the local app, end to end: the real relay (workerd in Miniflare) and the real
// agent, a token source forwarding to an app that is a raw TCP server parsing every byte it is sent.
// Requests reach the relay over raw TCP, framed as a smuggler frames them (Transfer-Encoding and
// Content-Length both, obs-fold, bare CR or LF, NUL in a header value). Whatever the relay makes of
// each — a refusal, or one event —, the app sees only well-formed requests, one per event, each framed
// once (Content-Length, never Transfer-Encoding), with no header line holding CR, LF or NUL and no
// request it was not meant to get. A sentinel event sent last, in the source's order, says when
// everything that could arrive has arrived (no sleeps).
import { connect, createServer } from "node:net";
import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../local-agent/logger.ts";
import { inboxAccess } from "../../local-agent/relay/messages.ts";
import { addSource } from "../../local-agent/relay/sources.ts";
import { startAgent } from "../../local-agent/agent.ts";
import { journalPath } from "../../local-agent/settings.ts";
import { relayFixture, waitUntil } from "../support/node/stack.ts";

const fixture = relayFixture();

interface SeenRequest {
  /** The request line and header lines as sent, one string each. */
  head: string[];
  body: Buffer;
}

interface RawApp {
  port: number;
  requests: SeenRequest[];
  /** Bytes that did not parse as a request: a framing the app could read two ways. */
  malformed: string[];
  close(): Promise<void>;
}

/**
 * An app that parses HTTP/1.1 itself, strictly: a head ends at CRLF CRLF, every line ends in CRLF, a
 * body is framed by exactly one Content-Length. Anything else is recorded as malformed and the
 * connection closed. Answers 200 to each request.
 */
async function startRawApp(): Promise<RawApp> {
  const requests: SeenRequest[] = [];
  const malformed: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let pending = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf("\r\n\r\n");
        if (end < 0) return;
        const headText = pending.subarray(0, end).toString("latin1");
        const head = headText.split("\r\n");
        const lengths = head.slice(1).filter((line) => /^content-length:/i.test(line));
        const framedOnce = lengths.length === 1 && !head.some((line) => /^transfer-encoding:/i.test(line));
        const clean = !/[\0\r\n]/.test(head.join("")) && /^[A-Z]+ \/\S* HTTP\/1\.1$/.test(head[0]!);
        const length = framedOnce ? Number(/^content-length:\s*(\d+)\s*$/i.exec(lengths[0]!)?.[1] ?? NaN) : NaN;
        if (!clean || !Number.isSafeInteger(length)) {
          malformed.push(pending.toString("latin1"));
          socket.destroy();
          return;
        }
        if (pending.length < end + 4 + length) return;
        requests.push({ head, body: pending.subarray(end + 4, end + 4 + length) });
        pending = pending.subarray(end + 4 + length);
        socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: text/plain\r\n\r\nok");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return {
    port: address && typeof address !== "string" ? address.port : 0,
    requests,
    malformed,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Sends `raw` to the relay over one TCP connection and returns all it answered until it closed (each case ends in Connection: close). */
function rawExchange(port: number, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1", () => socket.write(Buffer.from(raw, "latin1")));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (err: NodeJS.ErrnoException) => (err.code === "ECONNRESET" ? resolve(Buffer.concat(chunks).toString("latin1")) : reject(err)));
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
  });
}

const statuses = (answer: string) => [...answer.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));

/** Who sent it, what path its event would have at the app, and its bytes. */
interface Smuggle {
  what: string;
  path: string;
  raw: string;
  /** The event's body as the sender meant it, when the relay takes the request. */
  body?: string;
}

describe("no request smuggling into the local app", () => {
  it("conflicting Transfer-Encoding and Content-Length, obs-fold, bare CR/LF, NUL and non-ASCII header values: the app gets one well-formed request per event, or none", async () => {
    const { home } = await fixture.setUp("Smuggled");
    const agent = await startAgent({ settings: home.settings, env: home.env, logger: silentLogger, apiPort: 0, journalFile: journalPath(home.env.CLAWRELAY_HOME) });
    fixture.cleanups.push(() => agent.close());
    const app = await startRawApp();
    fixture.cleanups.push(() => app.close());
    const source = await addSource(await inboxAccess(home.settings), { name: "app", kind: "token", target: { forward: `http://127.0.0.1:${app.port}/hooks`, allowPublic: false } });
    const base = new URL(source.post_url).pathname;
    const host = `Host: 127.0.0.1:${fixture.relay().port}\r\n`;
    // What a smuggler hides after the first body: a request of its own for the app.
    const hidden = "POST /hooks/smuggled HTTP/1.1\r\nHost: app\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    const post = (path: string, headers: string, body: string, close = true) => `POST ${base}${path} HTTP/1.1\r\n${host}${headers}${close ? "Connection: close\r\n" : ""}\r\n${body}`;
    const cases: Smuggle[] = [
      { what: "TE.CL", path: "/te-cl", raw: post("/te-cl", "Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n", `7\r\n{"a":1}\r\n0\r\n\r\n${hidden}`), body: '{"a":1}' },
      { what: "CL.TE", path: "/cl-te", raw: post("/cl-te", "Transfer-Encoding: chunked\r\nContent-Length: 60\r\n", `7\r\n{"b":2}\r\n0\r\n\r\n${hidden}`), body: '{"b":2}' },
      // Asked to keep the connection: RFC 9112 §6.3 has a server close it after a message framed both ways.
      { what: "TE.CL pipelined", path: "/pipelined", raw: post("/pipelined", "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", `7\r\n{"p":0}\r\n0\r\n\r\n${hidden}`, false), body: '{"p":0}' },
      { what: "an unknown Transfer-Encoding", path: "/te-unknown", raw: post("/te-unknown", "Content-Length: 7\r\nTransfer-Encoding: xchunked\r\n", '{"c":3}') },
      { what: "obs-fold", path: "/fold", raw: post("/fold", "X-Fold: a\r\n Transfer-Encoding: chunked\r\nContent-Length: 7\r\n", '{"d":4}') },
      { what: "a bare CR in a value", path: "/bare-cr", raw: post("/bare-cr", "X-Evil: a\rTransfer-Encoding: chunked\r\nContent-Length: 7\r\n", '{"e":5}') },
      { what: "a bare LF in a value", path: "/bare-lf", raw: post("/bare-lf", "X-Evil: a\nTransfer-Encoding: chunked\r\nContent-Length: 7\r\n", '{"f":6}') },
      { what: "a NUL in a value", path: "/nul", raw: post("/nul", "X-Evil: a\0b\r\nContent-Length: 7\r\n", '{"g":7}') },
      { what: "a control character in a value", path: "/ctl", raw: post("/ctl", "X-Evil: a\x01b\r\nContent-Length: 7\r\n", '{"h":8}') },
      { what: "a byte outside ASCII in a value", path: "/latin", raw: post("/latin", "X-Name: caf\xe9\r\nContent-Length: 7\r\n", '{"i":9}') },
    ];
    const raws = new Map<string, string>();
    for (const smuggle of cases) raws.set(smuggle.path, await rawExchange(fixture.relay().port, smuggle.raw));
    const answers = new Map([...raws].map(([path, raw]) => [path, statuses(raw)]));
    // A body that ends before its chunked framing says is the sender's fault: a 400, never a 500 or an unhandled error.
    expect(fixture.relay().takeLogs(/unhandled error/)).toEqual([]);

    // Sent last in the source's order: once it is at the app, every event before it has been posted.
    expect((await fetch(`${source.post_url}/sentinel`, { method: "POST", body: "{}" })).status).toBe(200);
    await waitUntil("the sentinel at the app", () => app.requests.some((r) => r.head[0] === "POST /hooks/sentinel HTTP/1.1") || app.malformed.length > 0, 20_000);

    expect(app.malformed).toEqual([]);
    for (const request of app.requests) {
      const names = request.head.slice(1).map((line) => line.slice(0, line.indexOf(":")).toLowerCase());
      expect(names.filter((name) => name === "content-length")).toHaveLength(1);
      expect(names).not.toContain("transfer-encoding");
      expect(request.head.join("\n")).not.toMatch(/smuggled|[\0\r\x01\x80-\xff]/);
    }
    for (const smuggle of cases) {
      const [first, ...later] = answers.get(smuggle.path)!;
      const atApp = app.requests.filter((r) => r.head[0] === `POST /hooks${smuggle.path} HTTP/1.1`);
      if (first === 200) {
        // Taken: exactly one request at the app, with the body the chunked framing carried.
        expect(atApp, smuggle.what).toHaveLength(1);
        expect(atApp[0]!.body.toString("latin1"), smuggle.what).toBe(smuggle.body);
      } else {
        expect(first, `${smuggle.what}: refused`).toBeGreaterThanOrEqual(400);
        expect(atApp, smuggle.what).toEqual([]);
      }
      // The hidden request, when the relay read it at all, was a request to the relay (404), not the app.
      for (const status of later) expect(status, smuggle.what).toBe(404);
    }
    // The cases that carry a hidden request were taken (one event each) rather than refused: the path worth checking ran.
    expect(["/te-cl", "/cl-te", "/pipelined"].map((path) => answers.get(path)![0])).toEqual([200, 200, 200]);
    // The connection framed both ways was closed after its answer: the hidden request was never read.
    expect(answers.get("/pipelined")).toEqual([200]);
    expect(raws.get("/pipelined")).toMatch(/\r\nconnection: close\r\n/i);
    // The relay's own guard: values the agent could not send are refused there (400 invalid_header_value).
    for (const [path, header] of [["/ctl", "x-evil"], ["/latin", "x-name"]] as const) {
      expect(answers.get(path)).toEqual([400]);
      expect(raws.get(path)).toContain('"code":"invalid_header_value"');
      expect(raws.get(path)).toContain(`header ${header}`);
    }
    expect(answers.get("/bare-lf")![0]).toBe(400);
    expect(raws.get("/bare-lf")).toContain('"code":"body_unreadable"');
    expect(app.requests).toHaveLength(4);
  });
});
