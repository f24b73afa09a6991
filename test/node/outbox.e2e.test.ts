// The outbox end to end (issue 32, item 6: "every receipt is a model turn"): `clawrelay send` records the
// message in the sender's own inbox before posting it; the receiver's ack sets the record's state and never
// reaches the sender's gateway (no agent run) unless the inbox's acks setting says deliver; `messages
// --outbox` lists the records. Against a relay from before the outbox, sending goes on and says once that
// the relay keeps none. The real bundled relay and the real agent, with stand-in gateways.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { draftEnvelope, signEnvelope } from "../../protocol/index.ts";
import type { OutboxRecord } from "../../protocol/index.ts";
import type { AgentStatusAnswer } from "../../local-agent/agent-status.ts";
import { statusText } from "../../local-agent/cli/cli-status.ts";
import { settingsIdentity } from "../../local-agent/identity.ts";
import { NO_OUTBOX_NOTE, OutboxSender } from "../../local-agent/relay/outbox.ts";
import { relayFixture, waitUntil } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();

interface OutboxView {
  records: OutboxRecord[];
  total: number;
  acks: string;
}

async function outboxOf(env: Record<string, string>): Promise<OutboxView> {
  const listed = await runCli(["messages", "--outbox", "--json"], env);
  expect(listed.code, listed.stderr).toBe(0);
  return JSON.parse(listed.stdout) as OutboxView;
}

function msgIdIn(stdout: string): string {
  const found = /\(msg_id ([0-9a-f-]{36})\)/.exec(stdout);
  if (!found) throw new Error(`no msg_id in: ${stdout}`);
  return found[1]!;
}

describe("the outbox", () => {
  it("regression (every receipt is a model turn): send is recorded, its ack sets the record and never reaches the sender's gateway; with --acks deliver it does", async () => {
    const { gateway: aliceGateway, home: alice } = await fixture.setUp("Alice");
    const { home: bob } = await fixture.setUp("Bob");
    const agent = await fixture.run(alice);
    const sent = await runCli(["send", "--to", bob.settings.agent_id, "--text", "hello bob"], alice.env);
    expect(sent.code, sent.stderr).toBe(0);
    const msgId = msgIdIn(sent.stdout);
    const record = (await outboxOf(alice.env)).records.find((r) => r.msg_id === msgId);
    expect(record).toMatchObject({ to: bob.settings.agent_id, type: "message", state: "acknowledged", receipt_type: "ack" });
    // Bob's own message comes after his ack in the same lane: had the ack been queued, it would reach Alice's gateway first.
    const reply = await runCli(["send", "--to", alice.settings.agent_id, "--text", "hello alice"], bob.env);
    expect(reply.code, reply.stderr).toBe(0);
    await waitUntil("bob's message at alice's gateway", () => aliceGateway.received.length >= 1);
    expect(aliceGateway.received.map((r) => r.body.toString("utf8").includes("hello alice"))).toEqual([true]);

    const listed = await runCli(["messages", "--outbox", "--acks", "deliver"], alice.env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("acks: recorded here and delivered to the gateway");
    expect(listed.stdout).toMatch(new RegExp(`${msgId}\\s+${bob.settings.agent_id}\\s+message\\s+acknowledged\\s+\\S+\\s+ack `));
    const again = await runCli(["send", "--to", bob.settings.agent_id, "--text", "hello again"], alice.env);
    const againId = msgIdIn(again.stdout);
    await waitUntil("the ack at alice's gateway", () => aliceGateway.received.length >= 2);
    expect((await outboxOf(alice.env)).records.find((r) => r.msg_id === againId)?.state).toBe("acknowledged");
    const status = (await (await fetch(`http://127.0.0.1:${agent.apiPort}/clawrelay/status`)).json()) as AgentStatusAnswer;
    expect(status.relay_outbox).toEqual({ total: 2, acks: "deliver" });
    expect(statusText(status, 1, Date.now())).toContain("receipts  2 sent message(s) in the outbox (clawrelay messages --outbox); acks: recorded here and delivered");
  });

  it("a refused post leaves its record refused with the relay's reason", async () => {
    const { home: alice } = await fixture.setUp("Alice");
    const sent = await runCli(["send", "--to", "ag_000000000000", "--text", "nobody home"], alice.env);
    expect(sent.code).toBe(1);
    const [record] = (await outboxOf(alice.env)).records;
    expect(record).toMatchObject({ to: "ag_000000000000", state: "refused", error_code: "inbox_not_claimed" });
    const listed = await runCli(["messages", "--outbox"], alice.env);
    expect(listed.stdout).toContain("refused");
    expect(listed.stdout).toContain("not sent: inbox_not_claimed");
    expect(listed.stdout).toContain("acks: recorded here only");
  });

  it("--acks takes record or deliver, and only with --outbox", async () => {
    const { home: alice } = await fixture.setUp("Alice");
    const wrong = await runCli(["messages", "--outbox", "--acks", "sometimes"], alice.env);
    expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringContaining("--acks must be one of record, deliver")]);
    const alone = await runCli(["messages", "--acks", "deliver"], alice.env);
    expect([alone.code, alone.stderr]).toEqual([2, expect.stringContaining("--acks goes with --outbox")]);
  });

  it("against a relay without the outbox (404 not_found), sends go on and the agent says once that the relay keeps none", async () => {
    const { home: alice } = await fixture.setUp("Alice");
    const asked: string[] = [];
    const older = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      req.resume();
      const found = req.url?.endsWith("/envelopes");
      res.writeHead(found ? 202 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify(found ? { queued: true, id: asked.length } : { error: { code: "not_found", message: `no route for ${req.method} ${req.url}` } }));
    });
    await new Promise<void>((resolve) => older.listen(0, "127.0.0.1", resolve));
    fixture.cleanups.push(() => new Promise((resolve) => older.close(resolve)));
    const identity = await settingsIdentity(alice.settings);
    const notes: string[] = [];
    const sender = new OutboxSender({ relayUrl: `http://127.0.0.1:${(older.address() as AddressInfo).port}`, agentId: alice.settings.agent_id, identity }, (note) => notes.push(note));
    for (const text of ["one", "two"]) {
      const envelope = await signEnvelope(await draftEnvelope({ from: alice.settings.agent_id, to: "ag_0123456789ab", type: "message", payload: { text } }), identity.keyId, identity.sign);
      expect((await sender.send(envelope)).status).toBe(202);
    }
    expect(notes).toEqual([NO_OUTBOX_NOTE]);
    expect(asked.filter((line) => line.includes("/outbox"))).toHaveLength(1);
    expect(asked.filter((line) => line.endsWith("/envelopes"))).toHaveLength(2);
  });
});
