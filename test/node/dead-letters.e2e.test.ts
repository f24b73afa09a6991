// Messages the gateway will not take, end to end: each goes to the relay's dead shelf with a reason a
// person can act on, later messages go on, and only a config error (hooks off) holds everything back.
// A dead message can be read, replayed and dropped from the CLI. One test per bug it guards against.
import { describe, expect, it } from "vitest";
import type { AgentStatus } from "../../local-agent/agent-status.ts";
import type { QueueItem } from "../../protocol/index.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { ReceivedHook } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, ownerCall, postHook, queueItems, recordingLogger, relayFixture, waitUntil, writeOpenClawConfig } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();
const relayUrl = () => fixture.relay().url;
const AGENT = "agentgram_inbox/agent";

async function hook(home: AgentHome, body: string, subpath = AGENT): Promise<number> {
  const answer = await postHook(relayUrl(), home, subpath, body);
  expect(answer.status).toBe(202);
  return answer.body.id as number;
}

/** What polling sees: queued ids (dead ones are not delivered) and the backlog and dead counts. */
async function poll(home: AgentHome): Promise<{ ids: number[]; backlog: number; dead: number }> {
  const answer = await ownerCall(relayUrl(), home, "GET", "/messages?ack=false&limit=100");
  const body = answer.body as { messages: { id: number }[]; backlog: number; dead: number };
  return { ids: body.messages.map((m) => m.id), backlog: body.backlog, dead: body.dead };
}

const bodies = (hooks: ReceivedHook[]) => hooks.map((h) => h.body.toString());
const refusedWhen = (marker: string, status: number) => (h: ReceivedHook) => (h.body.toString().includes(marker) ? status : null);

describe("dead letters", () => {
  it("32 refusals do not stop the inbox: 40 refused hooks are dead with reasons and the 5 after them arrive in order", async () => {
    const { gateway, home } = await fixture.setUp();
    gateway.refuse = refusedWhen('"bad"', 400);
    const refused: number[] = [];
    for (let i = 1; i <= 40; i++) refused.push(await hook(home, JSON.stringify({ bad: i })));
    for (let n = 1; n <= 5; n++) await hook(home, JSON.stringify({ n }));
    const agent = await fixture.run(home);
    await waitUntil("the 5 good hooks behind 40 refused ones", () => gateway.received.length === 5, 20_000);
    expect(bodies(gateway.received)).toEqual([1, 2, 3, 4, 5].map((n) => JSON.stringify({ n })));
    await waitUntil("the relay's backlog to empty", async () => (await poll(home)).backlog === 0);
    const dead = await queueItems(relayUrl(), home, "dead");
    expect(dead.map((m) => m.id)).toEqual(refused);
    for (const item of dead) expect(item).toMatchObject({ state: "dead", last_status: 400, attempts: 1, reason: expect.stringContaining("400") });
    expect(await poll(home)).toEqual({ ids: [], backlog: 0, dead: 40 });
    expect(agent.status().delivery).toMatchObject({ delivered: 5, rejected: 40, paused: null });
  });

  it("an unmapped sub-path dead-letters only that message, naming hooks.mappings, and pauses nothing", async () => {
    const { gateway, home } = await fixture.setUp();
    const a1 = await hook(home, '{"n":1}');
    const p1 = await hook(home, '{"ref":"main"}', "github/push");
    const a2 = await hook(home, '{"n":2}');
    const p2 = await hook(home, '{"ref":"dev"}', "github/push");
    const a3 = await hook(home, '{"n":3}');
    const agent = await fixture.run(home);
    await waitUntil("the mapped hooks and both rejections", () => gateway.received.length === 3 && agent.status().delivery.rejected === 2);
    expect(bodies(gateway.received)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(gateway.received.map((h) => h.idempotencyKey)).toEqual([a1, a2, a3].map((id) => `clawrelay:${home.settings.agent_id}:${id}`));
    const dead = await queueItems(relayUrl(), home, "dead");
    expect(dead.map((m) => [m.id, m.subpath, m.last_status])).toEqual([
      [p1, "github/push", 404],
      [p2, "github/push", 404],
    ]);
    for (const item of dead) {
      expect(item.reason).toContain("hooks.mappings");
      expect(item.reason).toContain('match: { path: "github/push" }');
    }
    // Each 404 was settled by one probe of the built-in wake route, without a key the gateway could replay.
    expect(gateway.requests.filter((r) => r.subpath === "wake")).toEqual([
      expect.objectContaining({ status: 400, idempotencyKey: null }),
      expect.objectContaining({ status: 400, idempotencyKey: null }),
    ]);
    expect(agent.status().delivery.paused).toBeNull();
    expect((await poll(home)).backlog).toBe(0);
  });

  it("hooks off pauses everything: the probe's 404 keeps every message queued on the relay, none dead, no retry storm", async () => {
    // The gateway serves hooks elsewhere than openclaw.json says: every hook path, the probe's too, is a 404.
    const gateway = await startStandinGateway({ hooksPath: "/gateway-hooks" });
    const home = await makeAgentHome(fixture.relay(), gateway);
    fixture.cleanups.push(() => gateway.close(), () => home.cleanup());
    await writeOpenClawConfig(home.env.OPENCLAW_CONFIG_PATH, { ...gateway, hooksPath: "/hooks" });
    const ids = [await hook(home, '{"n":1}'), await hook(home, '{"n":2}')];
    const logger = recordingLogger();
    const agent = await fixture.run(home, logger);
    await waitUntil("delivery to pause", () => agent.status().delivery.paused !== null);
    const { delivery } = agent.status();
    expect(delivery.paused).toContain("hooks.enabled");
    expect(delivery.paused).toContain('hooks.path is not "/hooks"');
    expect(delivery.last_error?.id).toBe(ids[0]);
    // One post and one probe, then quiet until the once-a-minute retry (the agent's log says when it comes).
    await waitUntil("the agent's refusal line", () => logger.lines.some((l) => l.event === "gateway refused"));
    expect(logger.lines.find((l) => l.event === "gateway refused")!.fields).toMatchObject({ id: ids[0], retry_in_ms: 60_000 });
    expect(gateway.requests.map((r) => r.status)).toEqual([404, 404]);
    expect(gateway.received).toEqual([]);
    expect(agent.status().delivery).toMatchObject({ delivered: 0, rejected: 0, recent_rejections: [] });
    expect(await poll(home)).toEqual({ ids, backlog: 2, dead: 0 });
  });

  it("413 from the gateway dead-letters that body and the next goes on; over 256 KiB the relay edge refuses with payload_too_large", async () => {
    const { gateway, home } = await fixture.setUp();
    const tooBig = await postHook(relayUrl(), home, AGENT, JSON.stringify({ pad: "x".repeat(300 * 1024) }));
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toMatchObject({ error: { code: "payload_too_large" } });
    expect(await poll(home)).toEqual({ ids: [], backlog: 0, dead: 0 });

    // Under the relay's limit, yet the gateway says 413 (it counts bytes its own way, or was configured lower).
    gateway.refuse = (h) => (h.body.length > 100_000 ? 413 : null);
    const bigBody = JSON.stringify({ n: 1, pad: "x".repeat(150_000) });
    const big = await hook(home, bigBody);
    await hook(home, '{"n":2}');
    const agent = await fixture.run(home);
    await waitUntil("the message after the refused one", () => gateway.received.length === 1);
    expect(bodies(gateway.received)).toEqual(['{"n":2}']);
    await waitUntil("nothing waiting on the relay", async () => (await poll(home)).backlog === 0);
    const [dead] = await queueItems(relayUrl(), home, "dead");
    expect(dead).toMatchObject({ id: big, size: Buffer.byteLength(bigBody), last_status: 413, reason: expect.stringContaining("256 KiB") });
    expect(agent.status().delivery.recent_rejections).toEqual([expect.objectContaining({ id: big, status: 413, attempts: 1 })]);
  });

  it("a dead message replayed from the CLI after its mapping is fixed runs once under a fresh Idempotency-Key; show, drop and unknown ids", async () => {
    const setUp = await fixture.setUp();
    const home = setUp.home;
    const p1 = await hook(home, '{"ref":"refs/heads/main"}', "github/push");
    const p2 = await hook(home, '{"ref":"refs/heads/dev"}', "github/push");
    await hook(home, '{"n":1}');
    const agent = await fixture.run(home);
    await waitUntil("both pushes rejected and the agent hook delivered", () => agent.status().delivery.rejected === 2 && setUp.gateway.received.length === 1);

    const before = JSON.parse((await runCli(["messages", "--json"], home.env)).stdout) as (QueueItem & { age_sec: number })[];
    expect(before.map((m) => [m.id, m.state])).toEqual([
      [p1, "dead"],
      [p2, "dead"],
    ]);
    expect(before[0]!.reason).toContain("hooks.mappings");
    expect(before[0]!.age_sec).toBeGreaterThanOrEqual(0);

    const shown = await runCli(["messages", "show", String(p1)], home.env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('"ref": "refs/heads/main"');
    expect(shown.stdout).toMatch(/^reason: .*hooks\.mappings.*github\/push/m);
    expect(shown.stdout).toContain(`clawrelay messages replay ${p1}`);

    // The user adds the mapping and the gateway restarts with it (same port and token).
    const { port, token } = setUp.gateway;
    const oldKeys = setUp.gateway.requests.filter((r) => r.subpath === "github/push").map((r) => r.idempotencyKey);
    await setUp.gateway.close();
    const gateway = await startStandinGateway({ port, token, mappings: [AGENT, "github/push"] });
    fixture.cleanups.push(() => gateway.close());

    const replayed = await runCli(["messages", "replay", String(p1)], home.env);
    expect(replayed.code).toBe(0);
    const newId = Number(/^message \d+ is queued again as id (\d+)$/m.exec(replayed.stdout)?.[1]);
    expect(replayed.stdout).toContain(`message ${p1} is queued again as id`);
    expect(newId).toBeGreaterThan(p2 + 1);
    await waitUntil("the replayed push at the gateway", () => gateway.received.length === 1);
    await waitUntil("nothing waiting on the relay", async () => (await poll(home)).backlog === 0);
    expect(gateway.received.map((h) => [h.subpath, h.body.toString(), h.idempotencyKey])).toEqual([
      ["github/push", '{"ref":"refs/heads/main"}', `clawrelay:${home.settings.agent_id}:${newId}`],
    ]);
    expect(oldKeys).not.toContain(`clawrelay:${home.settings.agent_id}:${newId}`);

    const after = JSON.parse((await runCli(["messages", "--json"], home.env)).stdout) as QueueItem[];
    expect(after.map((m) => [m.id, m.state])).toEqual([[p2, "dead"]]);

    const dropped = await runCli(["messages", "drop", String(p2)], home.env);
    expect(dropped).toMatchObject({ code: 0, stdout: `message ${p2} (dead) dropped\n` });
    expect(JSON.parse((await runCli(["messages", "--json"], home.env)).stdout)).toEqual([]);

    const unknown = await runCli(["messages", "show", "999999"], home.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toMatch(/^clawrelay: cannot show message 999999: the relay answered 404 message_not_found: no message 999999 in this inbox/);
    expect(gateway.received.length).toBe(1);
  });

  it("status does not keep a stale error: last_error names the refused message until the next delivery clears it", async () => {
    const { gateway, home } = await fixture.setUp();
    gateway.refuse = refusedWhen('"bad"', 400);
    const startedBefore = Date.now();
    const agent = await fixture.run(home);
    const bad = await hook(home, '{"bad":true}');
    await waitUntil("the refusal", () => agent.status().delivery.rejected === 1);
    const viaApi = async () => ((await (await fetch(`http://127.0.0.1:${agent.apiPort}/clawrelay/status`)).json()) as AgentStatus).delivery;
    const refusedStatus = await viaApi();
    expect(refusedStatus.last_error).toMatchObject({ id: bad, message: expect.stringContaining("400") });
    expect(refusedStatus.counted_since).toBeGreaterThanOrEqual(startedBefore);
    expect(refusedStatus.counted_since).toBeLessThanOrEqual(Date.now());
    expect(refusedStatus.recent_rejections).toEqual([expect.objectContaining({ id: bad, subpath: AGENT, status: 400, attempts: 1, reason: expect.stringContaining("400") })]);
    expect(refusedStatus.paused).toBeNull();

    const good = await hook(home, '{"n":1}');
    await waitUntil("the delivery after the refusal", () => agent.status().delivery.delivered === 1);
    const deliveredStatus = await viaApi();
    expect(deliveredStatus.last_error).toBeNull();
    expect(deliveredStatus.last_delivery).toMatchObject({ id: good, subpath: AGENT, status: 200 });
    // The history of refusals stays; only the "current problem" is cleared.
    expect(deliveredStatus.recent_rejections.map((r) => r.id)).toEqual([bad]);
    expect(deliveredStatus.counted_since).toBe(refusedStatus.counted_since);
  });
});
