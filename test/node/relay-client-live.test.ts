// The relay's socket and live requests (local-agent/relay/relay-client.ts, relay-features.ts), against a
// small real `ws` server playing the relay: the agent names "live" in its auth next to "lanes"; with a
// relay whose `ready` names live too, a well-formed `request` frame reaches on("request") and liveMode is
// true, a malformed one is dropped; with a relay whose `ready` does not name live (an older relay), no
// request frame is handed on and liveMode stays false.
import { afterEach, describe, expect, it } from "vitest";
import type { LiveRequestFrame } from "../../protocol/index.ts";
import { newIdentity } from "../../local-agent/identity.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { RelayClient } from "../../local-agent/relay/relay-client.ts";
import type { StateDetail } from "../../local-agent/relay/relay-client.ts";
import { spokenFeatures } from "../../local-agent/relay/relay-features.ts";
import { startFakeRelay } from "../support/node/fake-relay.ts";
import { waitUntil } from "../support/node/stack.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const request = (rid: string, extra: Record<string, unknown> = {}) => ({ type: "request", rid, to: "app", method: "GET", tail: "/cb?code=1", headers: [["accept", "text/html"]], body: "", encoding: "utf8", deadline_ms: 10_000, source: "listen-3000", target: "http://127.0.0.1:3000", ...extra });

async function connected(features: string[] | undefined) {
  const relay = await startFakeRelay(features);
  cleanups.push(() => relay.close());
  const client = new RelayClient({ relayUrl: relay.url, identity: await newIdentity(), logger: silentLogger });
  cleanups.push(() => client.close());
  const requests: LiveRequestFrame[] = [];
  const details: StateDetail[] = [];
  const tokens: number[] = [];
  client.on("request", (f) => requests.push(f));
  client.on("hub_token", (f) => tokens.push(f.expires_at));
  client.onState((state, detail) => state === "connected" && details.push(detail));
  client.start();
  await waitUntil("connected", () => client.state === "connected");
  /** Sends the frames and a marker after them; resolves once the marker was handled (so were they). */
  const deliver = async (...frames: object[]) => {
    const marker = tokens.length + 1;
    for (const f of frames) relay.send(f);
    relay.send({ type: "hub_token", token: `t${marker}`, expires_at: marker });
    await waitUntil("the frames handled", () => tokens.includes(marker));
  };
  return { relay, client, requests, details, deliver };
}

describe("live requests on the relay's socket", () => {
  it("names live in its auth; with a relay that names it back, hands well-formed request frames on and drops malformed ones", async () => {
    const { relay, client, requests, details, deliver } = await connected(["lanes", "live"]);
    expect(relay.frames[0]).toMatchObject({ type: "auth", features: ["lanes", "live"] });
    expect(client.liveMode).toBe(true);
    expect(details[0]).toMatchObject({ live: true });
    await deliver(request("rid_00000001"), request("bad"), request("rid_00000002", { method: "TRACE" }), request("rid_00000003", { to: "gateway", method: "POST", subpath: "sources/x" }));
    expect(requests.map((r) => [r.rid, r.to, r.method])).toEqual([["rid_00000001", "app", "GET"], ["rid_00000003", "gateway", "POST"]]);
  });

  it("with a relay that does not name live (an older relay), hands no request frame on", async () => {
    const { client, requests, details, deliver } = await connected(["lanes"]);
    expect(client.liveMode).toBe(false);
    expect(details[0]?.live).toBeUndefined();
    await deliver(request("rid_00000001"));
    expect(requests).toEqual([]);
  });

  it("reads the features a ready frame names", () => {
    expect(spokenFeatures({})).toEqual({ lanes: false, live: false });
    expect(spokenFeatures({ features: ["live"] })).toEqual({ lanes: false, live: true });
    expect(spokenFeatures({ features: ["lanes", "live", "later"] })).toEqual({ lanes: true, live: true });
  });
});
