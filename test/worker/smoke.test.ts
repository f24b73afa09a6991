import { describe, expect, it } from "vitest";
import { claimInbox, envelopeFrom, newAgent, postEnvelope, relayFetch, registerAtHub } from "../support/workerd/agents.ts";

describe("smoke", () => {
  it("healthz", async () => {
    const res = await relayFetch("/healthz");
    expect(await res.json()).toEqual({ ok: true, version: "0.1.0" });
  });
  it("claims and accepts an envelope", async () => {
    const inbox = await claimInbox();
    const sender = newAgent();
    await registerAtHub(sender);
    const res = await postEnvelope(await envelopeFrom(sender, inbox.agent.id));
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(202);
  });
});
