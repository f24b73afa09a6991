// Setting aside (local-agent/forward/set-aside.ts) in the delivery loop, against a real local app and a
// model of the relay's window (socket-session.ts: at most `window` unfinished messages sent, in id order;
// a reject frees its slot; a replay queues a dead message under a new id at the end and sends it at
// once — before the replay's answer comes back, the race the agent must sort out). A down app's waiting
// events go to the dead shelf once the agent holds 3/4 of the window, so the gateway's message passes;
// when the app answers they come back through replays, oldest first, with those that arrived during the
// replays in a further pass: every event reaches the app once, in order — also when the app fails again
// during the replays and they are set aside anew. Replays the relay refuses are skipped (logged), an
// unreachable relay is tried again. Below the threshold nothing is set aside.
import { afterEach, describe, expect, it } from "vitest";
import type { DeliveryFrame } from "../../protocol/index.ts";
import type { DeliveryLoop } from "../../local-agent/delivery/delivery.ts";
import type { Rejection } from "../../local-agent/delivery/delivery-status.ts";
import type { AppRequest } from "../../local-agent/forward/app-client.ts";
import type { AppAnswer } from "../../local-agent/forward/app-response.ts";
import { SET_ASIDE_AT } from "../../local-agent/forward/set-aside.ts";
import type { LogFields, Logger } from "../../local-agent/logger.ts";
import { waitUntil } from "../support/node/stack.ts";
import { forwardFrame, gatewayFrame, startStandinApp, wiredLoop } from "./forward-app.ts";
import type { StandinApp, WiredLoop } from "./forward-app.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The relay's queue as the agent sees it: ids in order, a window of unfinished ones, a dead shelf, replays. */
class WindowRelay {
  readonly queued = new Map<number, DeliveryFrame>();
  readonly dead = new Map<number, { frame: DeliveryFrame; reason: string }>();
  readonly replayed: number[] = [];
  private lastId = 0;
  private sentUpTo = 0;
  loop!: DeliveryLoop;
  /** Called as a replay is asked, before the relay acts on it. */
  onReplay: (id: number) => void = () => {};
  /** Thrown instead of replaying, once, for these ids. */
  readonly failOnce = new Map<number, Error>();
  /** How long a replay's answer takes to come back (its frame goes out at once). */
  replayMs = 5;

  readonly window: number;

  constructor(window: number) {
    this.window = window;
  }

  add(make: (id: number) => DeliveryFrame): number {
    const id = ++this.lastId;
    this.queued.set(id, make(id));
    setImmediate(() => this.pump());
    return id;
  }

  ack(id: number): void {
    this.queued.delete(id);
    setImmediate(() => this.pump());
  }

  reject(id: number, rejection: Rejection): void {
    const frame = this.queued.get(id);
    if (!frame) throw new Error(`reject of ${id}, which is not queued`);
    this.queued.delete(id);
    this.dead.set(id, { frame, reason: rejection.reason });
    setImmediate(() => this.pump());
  }

  async replay(id: number): Promise<number> {
    this.onReplay(id);
    const failure = this.failOnce.get(id);
    if (failure) {
      this.failOnce.delete(id);
      throw failure;
    }
    const dead = this.dead.get(id);
    if (!dead) throw Object.assign(new Error(`cannot replay message ${id}: the relay answered 404 message_not_found`), { status: 404 });
    this.dead.delete(id);
    this.replayed.push(id);
    const next = ++this.lastId;
    this.queued.set(next, { ...dead.frame, id: next });
    // The new id's frame goes out before the answer does.
    this.pump();
    await new Promise((resolve) => setTimeout(resolve, this.replayMs));
    return next;
  }

  private pump(): void {
    let free = this.window - [...this.queued.keys()].filter((id) => id <= this.sentUpTo).length;
    for (const id of [...this.queued.keys()].sort((a, b) => a - b)) {
      if (free <= 0) return;
      if (id <= this.sentUpTo) continue;
      this.sentUpTo = id;
      free--;
      this.loop.push(this.queued.get(id)!);
    }
  }
}

function recordingLogger(): Logger & { lines: { event: string; fields: LogFields }[] } {
  const lines: { event: string; fields: LogFields }[] = [];
  const log = (event: string, fields: LogFields = {}) => void lines.push({ event, fields });
  return { lines, info: log, warn: log, error: log };
}

async function setUp(window: number, gateway?: () => number): Promise<{ relay: WindowRelay; wired: WiredLoop; shop: StandinApp; logger: ReturnType<typeof recordingLogger> }> {
  const shop = await startStandinApp();
  cleanups.push(() => shop.close());
  await shop.down();
  const relay = new WindowRelay(window);
  const logger = recordingLogger();
  const wired = wiredLoop({ ack: (id) => relay.ack(id), reject: (id, r) => relay.reject(id, r), replay: (id) => relay.replay(id), window: () => relay.window, logger, ...(gateway ? { gateway } : {}) });
  relay.loop = wired.loop;
  cleanups.push(() => wired.loop.stop(100));
  return { relay, wired, shop, logger };
}

/** Failed attempts at the app of the event with id `id` (each is followed by the set-aside decision). */
const failedAttempts = (wired: WiredLoop, id: number) => wired.events.filter((e) => e.outcome === "retrying" && e.id === id).length;
const event = (shopUrl: string, n: number) => (id: number) => forwardFrame(id, { target: `${shopUrl}/hooks`, body: `{"n":${n}}` });
const bodies = (shop: StandinApp) => shop.requests.map((r) => r.body.toString());
const numbered = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `{"n":${from + i}}`);

describe("setting aside a down app's events", () => {
  it("frees the window for the gateway, then replays them oldest first, those that came during the replays after: each reaches the app once, in order", async () => {
    expect(SET_ASIDE_AT).toBe(3 / 4);
    const { relay, wired, shop } = await setUp(8);
    for (let n = 1; n <= 12; n++) relay.add(event(shop.url, n));
    const gatewayId = relay.add((id) => gatewayFrame(id));
    // Without setting aside the window stays full of the source's events and this never comes.
    await waitUntil("the gateway's message delivered while the app is down", () => wired.gatewayPosts.length === 1);
    expect(shop.requests).toHaveLength(0);
    expect(relay.queued.has(gatewayId)).toBe(false);
    // Every event but the head (id 1, retrying) is on the shelf with a reason that says what and how.
    expect([...relay.dead.keys()]).toEqual(Array.from({ length: 11 }, (_, i) => i + 2));
    for (const [id, { reason }] of relay.dead) {
      expect(reason).toMatch(new RegExp(`^set aside: the app at ${shop.url}/hooks has not taken an event since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(connection refused by 127\\.0\\.0\\.1:${shop.port} \\(is the app running\\?\\)\\); \\d+ events of source "shop" would have held up every other message\\. The agent replays them, oldest first, when the app answers again; if the agent stops before that: clawrelay messages replay ${id}$`));
    }
    expect(wired.loop.forwards.status()[0]).toMatchObject({ source: "shop", set_aside: 11, rejected: 0 });
    expect(wired.loop.status.rejected).toBe(0);
    expect(wired.events.filter((e) => e.outcome === "rejected" && e.detail?.startsWith("set aside: ")).map((e) => e.id)).toEqual([...relay.dead.keys()]);

    // Two more events arrive while the first replay is being asked: they go aside and come back after the rest.
    let asked = 0;
    relay.onReplay = () => {
      if (++asked === 1) for (const n of [13, 14]) relay.add(event(shop.url, n));
    };
    await shop.up();
    await waitUntil("all 14 events at the app", () => shop.requests.length === 14, 20_000);
    expect(bodies(shop)).toEqual(numbered(1, 14));
    await waitUntil("the shelf empty, the source no longer set aside", () => relay.dead.size === 0 && wired.loop.forwards.status()[0]!.set_aside === 0);
    expect(relay.replayed.slice(0, 11)).toEqual(Array.from({ length: 11 }, (_, i) => i + 2));
    expect(relay.replayed).toHaveLength(13);
    // Nothing queued, nothing on the shelf: no event is left that could reach the app again. The last
    // event's ack follows the app's answer, which may still be on its way when its request is seen.
    await waitUntil("every event acknowledged", () => relay.queued.size === 0);
    expect(shop.requests).toHaveLength(14);

    // Out of set-aside mode: a later outage below the threshold keeps its events here, in order, none on the shelf.
    await shop.down();
    const before = relay.replayed.length;
    const head = relay.add(event(shop.url, 15));
    for (let n = 16; n <= 17; n++) relay.add(event(shop.url, n));
    // Each failed attempt decides whether to set aside: two of them, and none did.
    await waitUntil("two failed attempts at the app", () => failedAttempts(wired, head) >= 2);
    expect(relay.dead.size).toBe(0);
    expect(wired.loop.status.queued).toBe(3);
    await shop.up();
    await waitUntil("the three at the app", () => shop.requests.length === 17, 20_000);
    expect(bodies(shop)).toEqual(numbered(1, 17));
    expect(relay.replayed.length).toBe(before);
  });

  it("when the app fails again during the replays with the window filling, sets the replays aside again and keeps the order", async () => {
    let gatewayStatus = 503;
    const { relay, wired, shop } = await setUp(12, () => gatewayStatus);
    for (let n = 1; n <= 12; n++) relay.add(event(shop.url, n));
    await waitUntil("11 set aside", () => relay.dead.size === 11);
    // The gateway is failing too: its 8 messages stay in the agent, so the replays fill the window fast.
    for (let i = 0; i < 8; i++) relay.add((id) => gatewayFrame(id));
    await waitUntil("the gateway's messages in the agent", () => wired.loop.status.queued === 9);
    relay.replayMs = 30;
    // The head is taken; the first replay then fails three times, while the next replays come in.
    shop.script({ status: 200 }, { status: 503 }, { status: 503 }, { status: 503 });
    await shop.up();
    await waitUntil("all 12 events at the app", () => shop.requests.filter((r) => r.body.toString() === '{"n":12}').length === 1, 20_000);
    expect(bodies(shop)).toEqual(['{"n":1}', '{"n":2}', '{"n":2}', '{"n":2}', '{"n":2}', ...numbered(3, 12)]);
    // A replay (an id past the first 20) was set aside again, and came back in its place.
    expect(wired.events.some((e) => e.outcome === "rejected" && e.id > 20 && e.detail?.startsWith("set aside: "))).toBe(true);
    await waitUntil("the shelf empty, the source no longer set aside", () => relay.dead.size === 0 && wired.loop.forwards.status()[0]!.set_aside === 0);
    gatewayStatus = 200;
    await waitUntil("the gateway's messages delivered", () => wired.loop.status.delivered === 12 + 8, 20_000);
    expect(shop.requests).toHaveLength(15);
  });

  it("a replay answered after the app failed again goes aside, behind those set aside anew, not into the line: the order holds", async () => {
    // An app in the test's hands: refusing, or answering as told.
    const seen: string[] = [];
    let answers: (() => Promise<AppAnswer>)[] = [];
    let up = false;
    const refused: AppAnswer = { kind: "unreachable", detail: "connection refused by 127.0.0.1:1 (is the app running?)", refusedConnection: true };
    const ok: AppAnswer = { kind: "answered", status: 200, retryAfter: null, location: null, detail: "ok" };
    const postToApp = async (request: AppRequest): Promise<AppAnswer> => {
      if (!up) return refused;
      seen.push(new TextDecoder().decode(request.body));
      return (answers.shift() ?? (async () => ok))();
    };
    const relay = new WindowRelay(12);
    const wired = wiredLoop({ ack: (id) => relay.ack(id), reject: (id, r) => relay.reject(id, r), replay: (id) => relay.replay(id), window: () => relay.window, postToApp, gateway: () => 503 });
    relay.loop = wired.loop;
    cleanups.push(() => wired.loop.stop(100));
    for (let n = 1; n <= 12; n++) relay.add(event("http://127.0.0.1:1", n));
    await waitUntil("11 set aside", () => relay.dead.size === 11);
    for (let i = 0; i < 6; i++) relay.add((id) => gatewayFrame(id));
    await waitUntil("the gateway's messages in the agent", () => wired.loop.status.queued === 7);
    // Each replay's answer takes 200 ms. The head is taken at once; the first replay (event 2) fails
    // 500 ms after it is posted: events 3 and 4 are back in the line by then, and event 5's replay is
    // being asked (its frame already here). With 6 + 4 held of 12, 3 and 4 go aside, and 5 must follow.
    relay.replayMs = 200;
    answers = [async () => ok, () => new Promise((resolve) => setTimeout(() => resolve({ ...ok, status: 503 }), 500))];
    up = true;
    await waitUntil("all 12 events at the app", () => seen.includes('{"n":12}'), 20_000);
    expect(seen).toEqual(['{"n":1}', '{"n":2}', '{"n":2}', ...numbered(3, 12)]);
    // Events 3, 4 and 5 went aside a second time, under their replays' ids.
    expect(wired.events.filter((e) => e.outcome === "rejected" && e.id > 19).map((e) => e.message?.body)).toEqual(['{"n":3}', '{"n":4}', '{"n":5}']);
    await waitUntil("the shelf empty, the source no longer set aside", () => relay.dead.size === 0 && wired.loop.forwards.status()[0]!.set_aside === 0);
  });

  it("skips a replay the relay refuses (the owner dropped it), with a log line; tries an unreachable relay again", async () => {
    const { relay, wired, shop, logger } = await setUp(4);
    for (let n = 1; n <= 6; n++) relay.add(event(shop.url, n));
    await waitUntil("five set aside", () => relay.dead.size === 5);
    relay.dead.delete(3);
    relay.failOnce.set(4, new Error("cannot reach the relay at http://127.0.0.1:9: connection refused — is it running?"));
    await shop.up();
    await waitUntil("the rest at the app", () => shop.requests.length === 5, 20_000);
    expect(bodies(shop)).toEqual(['{"n":1}', '{"n":2}', '{"n":4}', '{"n":5}', '{"n":6}']);
    expect(logger.lines).toContainEqual({ event: "a set-aside event could not be replayed; skipped", fields: expect.objectContaining({ id: 3, source: "shop", error: expect.stringContaining("404") }) });
    expect(logger.lines).toContainEqual({ event: "replaying a set-aside event failed; trying again", fields: expect.objectContaining({ id: 4, source: "shop" }) });
    await waitUntil("the source no longer set aside", () => wired.loop.forwards.status()[0]!.set_aside === 0);
    expect(logger.lines).toContainEqual({ event: "set-aside events replayed", fields: { source: "shop", replayed: 4, skipped: 1 } });
  });

  it("sets nothing aside below 3/4 of the window; reaching it, the waiting events of the failing source", async () => {
    const { relay, wired, shop } = await setUp(8);
    for (let n = 1; n <= 5; n++) relay.add(event(shop.url, n));
    // Each failed attempt decides whether to set aside: two of them, and none did.
    await waitUntil("two failed attempts at the app", () => failedAttempts(wired, 1) >= 2);
    expect(relay.dead.size).toBe(0);
    // The sixth makes 6 of 8: the threshold.
    relay.add(event(shop.url, 6));
    await waitUntil("five set aside at the threshold", () => relay.dead.size === 5);
    await shop.up();
    await waitUntil("all six at the app", () => shop.requests.length === 6, 20_000);
    expect(bodies(shop)).toEqual(numbered(1, 6));
  });
});
