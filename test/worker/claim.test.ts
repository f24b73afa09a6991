// PUT /inbox/{agent_id}: who may claim or reconfigure an inbox, replay protection, the webhook token.
import { describe, expect, it } from "vitest";
import { REQUEST_HEADERS, signedRequestHeaders, toBase64, utf8 } from "../../protocol/index.ts";
import { claimInbox, errorCode, newAgent, postHook, relayFetch, signedFetch } from "../support/workerd/agents.ts";

const claimBody = (agent: ReturnType<typeof newAgent>) => ({
  keys: [{ key_id: agent.keyId, pubkey: agent.publicKey }],
  receipt_key: { key_id: agent.receiptKeyId, private_key: toBase64(agent.receiptSeed) },
});

describe("claiming an inbox", () => {
  it("first claim by the root key answers 201 with URLs and a webhook token shown once", async () => {
    const agent = newAgent();
    const res = await signedFetch(agent, "PUT", `/inbox/${agent.id}`, claimBody(agent));
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, any>;
    expect(body.created).toBe(true);
    expect(body.urls.hooks).toBe(`https://relay.test/inbox/${agent.id}/hooks`);
    expect(body.urls.connect).toBe(`wss://relay.test/inbox/${agent.id}/connect`);
    expect(body.webhook_token).toMatch(/^crw_[A-Za-z0-9_-]{43}$/);
    expect(body.config.hub_url).toBe("https://agentgram.chat");
    expect(body.config.rate_per_minute).toBe(20);
    expect(body.config.limits.max_body_bytes).toBe(256 * 1024);
    expect(body.config.limits.dead_ttl_sec).toBe(7 * 24 * 3600);
    // Secrets are never echoed: no receipt seed, no token hash.
    expect(JSON.stringify(body.config)).not.toContain(toBase64(agent.receiptSeed));
    expect(JSON.stringify(body.config)).not.toContain("webhook_token_hash");

    const again = await signedFetch(agent, "PUT", `/inbox/${agent.id}`, { rate_per_minute: 5 });
    expect(again.status).toBe(200);
    const second = (await again.json()) as Record<string, any>;
    expect(second.created).toBe(false);
    expect(second.webhook_token).toBeUndefined();
    expect(second.config.rate_per_minute).toBe(5);
  });

  it("refuses a key whose id does not derive to the inbox", async () => {
    const owner = newAgent();
    const intruder = newAgent();
    const res = await signedFetch(owner, "PUT", `/inbox/${owner.id}`, claimBody(owner), intruder);
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("key_not_authorised");
  });

  it("lets a key the root key authorised reconfigure, but not change the key list", async () => {
    const owner = newAgent();
    const delegate = newAgent();
    const res = await signedFetch(owner, "PUT", `/inbox/${owner.id}`, {
      ...claimBody(owner),
      keys: [
        { key_id: owner.keyId, pubkey: owner.publicKey },
        { key_id: delegate.keyId, pubkey: delegate.publicKey },
      ],
    });
    expect(res.status).toBe(201);
    const ok = await signedFetch(owner, "PUT", `/inbox/${owner.id}`, { policy: { mode: "allowlist" } }, delegate);
    expect(ok.status).toBe(200);
    const denied = await signedFetch(owner, "PUT", `/inbox/${owner.id}`, { keys: [{ key_id: delegate.keyId, pubkey: delegate.publicKey }] }, delegate);
    expect(denied.status).toBe(403);
    expect(await errorCode(denied)).toBe("root_key_required");
  });

  it("refuses a replayed signed request and one outside the timestamp window", async () => {
    const agent = newAgent();
    const path = `/inbox/${agent.id}`;
    const bytes = utf8(JSON.stringify(claimBody(agent)));
    const headers = await signedRequestHeaders(agent.publicKey, "PUT", path, bytes, agent.sign);
    const first = await relayFetch(path, { method: "PUT", headers, body: bytes });
    expect(first.status).toBe(201);
    const replay = await relayFetch(path, { method: "PUT", headers, body: bytes });
    expect(replay.status).toBe(409);
    expect(await errorCode(replay)).toBe("replayed_request");

    const old = await signedRequestHeaders(agent.publicKey, "PUT", path, bytes, agent.sign, Math.floor(Date.now() / 1000) - 301);
    const stale = await relayFetch(path, { method: "PUT", headers: old, body: bytes });
    expect(stale.status).toBe(401);
    expect(await errorCode(stale)).toBe("timestamp_out_of_range");
  });

  it("refuses a signature over a different body, and a request without signature headers", async () => {
    const agent = newAgent();
    const path = `/inbox/${agent.id}`;
    const headers = await signedRequestHeaders(agent.publicKey, "PUT", path, utf8("{}"), agent.sign);
    const tampered = await relayFetch(path, { method: "PUT", headers, body: JSON.stringify(claimBody(agent)) });
    expect(tampered.status).toBe(401);
    expect(await errorCode(tampered)).toBe("invalid_request_signature");
    const unsigned = await relayFetch(path, { method: "PUT", body: "{}" });
    expect(unsigned.status).toBe(401);
    const body = (await unsigned.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("missing_request_signature");
    expect(body.error.message).toContain(REQUEST_HEADERS.signature);
  });

  it("explains what is wrong with an invalid claim body", async () => {
    const agent = newAgent();
    const noReceipt = await signedFetch(agent, "PUT", `/inbox/${agent.id}`, { keys: claimBody(agent).keys });
    expect(noReceipt.status).toBe(400);
    expect(await errorCode(noReceipt)).toBe("invalid_claim");
    const badLimit = await signedFetch(agent, "PUT", `/inbox/${agent.id}`, { ...claimBody(agent), limits: { max_body_bytes: 3_000_000 } });
    const body = (await badLimit.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("invalid_claim");
    expect(body.error.message).toContain("limits.max_body_bytes");
    const badHub = await signedFetch(agent, "PUT", `/inbox/${agent.id}`, { ...claimBody(agent), hub_url: "ftp://hub" });
    expect(await errorCode(badHub)).toBe("invalid_claim");
  });

  it("rotates the webhook token on request: the old one stops working", async () => {
    const inbox = await claimInbox();
    expect((await postHook(inbox, "agentgram_inbox/agent", '{"message":"one"}')).status).toBe(202);
    const res = await signedFetch(inbox.agent, "PUT", `/inbox/${inbox.agent.id}`, { rotate_webhook_token: true });
    const fresh = String(((await res.json()) as Record<string, unknown>).webhook_token);
    expect(fresh).not.toBe(inbox.token);
    const old = await postHook(inbox, "agentgram_inbox/agent", '{"message":"two"}');
    expect(old.status).toBe(401);
    expect((await postHook({ ...inbox, token: fresh }, "agentgram_inbox/agent", '{"message":"two"}')).status).toBe(202);
  });

  it("rejects a malformed agent id at the edge", async () => {
    const res = await relayFetch("/inbox/bob/envelopes", { method: "POST", body: "{}" });
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("invalid_agent_id");
  });
});
