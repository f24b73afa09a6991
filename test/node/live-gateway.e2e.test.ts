// Live requests to the gateway end to end (the real relay, the real agent): a live source without a
// forward target is posted to the gateway's hooks as its delivery would be (the sender's credentials left
// out), and the gateway's answer goes back to the sender; the gateway's A2A channel published with `clawrelay a2a enable` (a stand-in A2A
// gateway on loopback): refused while channels.a2a is off, the card's and the endpoint's URLs printed, a
// peer whose ${VAR} is unset named and refused at the relay, the card fetched live with its endpoint
// rewritten, SendMessage with a peer's token answered by the gateway, a wrong token refused at the relay
// (the gateway never sees it), `a2a status` and `a2a disable`. The real gateway's A2A run is elsewhere
// (the interop test).
import { createServer } from "node:http";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { inboxAccess } from "../../local-agent/relay/messages.ts";
import { addSource } from "../../local-agent/relay/sources.ts";
import { queueItems, relayFixture, waitUntil } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();

interface A2aCall {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** A gateway's A2A channel on loopback: its card, and SendMessage for the bearer token `token`. */
async function startA2aGateway(token: string) {
  const calls: A2aCall[] = [];
  let port = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      calls.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body: Buffer.concat(chunks).toString() });
      if (req.url === "/.well-known/agent-card.json" && req.method === "GET") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ name: "Stand-in", url: `http://127.0.0.1:${port}/a2a/v1`, supportedInterfaces: [{ url: `http://127.0.0.1:${port}/a2a/v1`, protocolBinding: "JSONRPC" }] }));
      }
      if (req.url === "/a2a/v1" && req.method === "POST") {
        if (req.headers.authorization !== `Bearer ${token}`) return res.writeHead(401, { "content-type": "application/json" }).end('{"error":"Unauthorized"}');
        const call = JSON.parse(Buffer.concat(chunks).toString()) as { id: string };
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result: { task: { id: "t1", status: { state: "TASK_STATE_COMPLETED" }, artifacts: [{ parts: [{ text: "hello from the gateway" }] }] } } }));
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as { port: number }).port;
  fixture.cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port, calls };
}

async function writeConfig(path: string, port: number, a2a: string): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, `{ gateway: { port: ${port} }, hooks: { enabled: true, token: "hooks-token", path: "/hooks" }, channels: { a2a: ${a2a} } }\n`);
}

describe("live requests to the gateway", () => {
  it("posts a live source's request to the gateway's hooks, without the sender's credentials, and returns the gateway's answer", async () => {
    const { gateway, home } = await fixture.setUp("Live gateway");
    const source = await addSource(await inboxAccess(home.settings), { name: "ci", kind: "token", subpath: "agentgram_inbox/agent", liveSec: 10 });
    const agent = await fixture.run(home);
    await waitUntil("live", () => agent.status().live?.relay === true);
    const credentials = { authorization: "Bearer sk_live_sender0123", cookie: "session=sender-c0ffee", "x-api-key": "key-sender-4567" };
    const answer = await fetch(source.post_url, { method: "POST", headers: { "content-type": "application/json", ...credentials }, body: '{"message":"build green"}' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ ok: true, runId: expect.stringMatching(/^run-/) });
    expect(gateway.received.map((r) => r.body.toString())).toEqual(['{"message":"build green"}']);
    // The gateway gets the agent's hooks token, never the sender's credentials (they go to a forward target only).
    const { headers } = gateway.received[0]!;
    expect(headers.authorization).toBe(`Bearer ${gateway.token}`);
    expect(headers.cookie).toBeUndefined();
    expect(headers["x-api-key"]).toBeUndefined();
    for (const value of Object.values(credentials)) expect(JSON.stringify(headers)).not.toContain(value);
    expect(await queueItems(fixture.relay().url, home)).toEqual([]);
  });

  it("publishes the gateway's A2A channel: card, SendMessage for a peer, a wrong token refused at the relay, status, disable", async () => {
    const { home } = await fixture.setUp("A2A");
    const a2a = await startA2aGateway("hermes-secret");
    const config = home.env.OPENCLAW_CONFIG_PATH;
    await writeConfig(config, a2a.port, `{ enabled: false, peers: { hermes: { token: "\${A2A_HERMES_TOKEN}" } } }`);
    const env = { ...home.env, A2A_HERMES_TOKEN: "hermes-secret" };
    const off = await runCli(["a2a", "enable"], env);
    expect(off.code).not.toBe(0);
    expect(off.stderr).toContain("channels.a2a is missing or has enabled: false");

    await writeConfig(config, a2a.port, `{ enabled: true, replyTimeoutMs: 5000, peers: { hermes: { token: "\${A2A_HERMES_TOKEN}" }, ghost: { token: "\${A2A_GHOST_TOKEN}" } } }`);
    const agent = await fixture.run(home);
    await waitUntil("live", () => agent.status().live?.relay === true);
    const enabled = await runCli(["a2a", "enable"], env);
    expect(enabled.code, enabled.stderr).toBe(0);
    const base = `${fixture.relay().url}/inbox/${home.settings.agent_id}`;
    expect(enabled.stdout).toContain(`Agent Card: ${base}/.well-known/agent-card.json`);
    expect(enabled.stdout).toContain(`Endpoint:   ${base}/a2a/v1`);
    expect(enabled.stdout).toContain('peer "ghost" is refused at the relay');
    expect(enabled.stdout).toContain("Calls wait up to 10 s");

    const card = await fetch(`${base}/.well-known/agent-card.json`);
    expect(card.status).toBe(200);
    expect(((await card.json()) as { url: string }).url).toBe(`${base}/a2a/v1`);
    const call = { jsonrpc: "2.0", id: "r1", method: "SendMessage", params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] } } };
    const sent = await fetch(`${base}/a2a/v1`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer hermes-secret" }, body: JSON.stringify(call) });
    expect(sent.status).toBe(200);
    expect(await sent.json()).toMatchObject({ id: "r1", result: { task: { artifacts: [{ parts: [{ text: "hello from the gateway" }] }] } } });
    const sentCalls = a2a.calls.filter((c) => c.url === "/a2a/v1");
    expect(sentCalls.map((c) => c.authorization)).toEqual(["Bearer hermes-secret"]);

    const wrong = await fetch(`${base}/a2a/v1`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer guessed" }, body: JSON.stringify(call) });
    expect(wrong.status).toBe(401);
    expect(a2a.calls.filter((c) => c.url === "/a2a/v1").length).toBe(1);

    const status = await runCli(["a2a", "status"], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`A2A is published at ${base}/a2a/v1`);
    expect(status.stdout).toContain("peers:    hermes");
    expect(status.stdout).toContain('peer "ghost" is refused at the relay: its token refers to ${A2A_GHOST_TOKEN}');

    const disabled = await runCli(["a2a", "disable"], env);
    expect(disabled.code, disabled.stderr).toBe(0);
    const after = await fetch(`${base}/a2a/v1`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer hermes-secret" }, body: JSON.stringify(call) });
    expect(after.status).toBe(404);
  });
});
