// POST /inbox/{id}/hooks/{subpath}: the webhook token, the hub's probe, byte-exact storage, size limit.
import { describe, expect, it } from "vitest";
import { claimInbox, errorCode, frameBytes, poll, postHook, relayFetch } from "../support/workerd/agents.ts";

describe("webhook intake", () => {
  it("answers the hub's probe on both sub-paths with 200 and stores nothing", async () => {
    const inbox = await claimInbox();
    for (const sub of ["agentgram_inbox/agent", "agentgram_inbox/wake"]) {
      const res = await postHook(inbox, sub, '{"probe": true}');
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true, probe: true });
    }
    expect((await poll(inbox.agent)).count).toBe(0);
  });

  it("requires the webhook token: missing, wrong, Bearer and x-openclaw-token", async () => {
    const inbox = await claimInbox();
    const path = `/inbox/${inbox.agent.id}/hooks/agentgram_inbox/agent`;
    const missing = await relayFetch(path, { method: "POST", body: "{}" });
    expect(missing.status).toBe(401);
    expect(await errorCode(missing)).toBe("missing_webhook_token");
    const wrong = await relayFetch(path, { method: "POST", headers: { authorization: `Bearer ${inbox.token}x` }, body: "{}" });
    expect(wrong.status).toBe(401);
    expect(await errorCode(wrong)).toBe("invalid_webhook_token");
    const probeWithoutToken = await relayFetch(path, { method: "POST", body: '{"probe":true}' });
    expect(probeWithoutToken.status).toBe(401);
    const viaHeader = await relayFetch(path, { method: "POST", headers: { "x-openclaw-token": inbox.token }, body: "{}" });
    expect(viaHeader.status).toBe(202);
    expect((await poll(inbox.agent)).count).toBe(1);
  });

  it("stores bodies byte-exact with content type and sub-path, and ids in arrival order", async () => {
    const inbox = await claimInbox();
    const json = '{ "message" : "Alice (ag_abc) says: Hi \u00e9\u4f60\u597d",\n  "name":"x" }';
    const binary = new Uint8Array([0xef, 0xbb, 0xbf, 0x00, 0xff, 0xfe, 0x80, 0x41]);
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]);
    const first = (await (await postHook(inbox, "agentgram_inbox/agent", json)).json()) as { id: number };
    await postHook(inbox, "agentgram_inbox/wake", binary, { "content-type": "application/octet-stream" });
    await postHook(inbox, "custom/deep/path", bom, { "content-type": "text/plain; charset=utf-8" });
    const { messages } = await poll(inbox.agent);
    expect(messages.map((m) => m.subpath)).toEqual(["agentgram_inbox/agent", "agentgram_inbox/wake", "custom/deep/path"]);
    expect(messages[0]!.id).toBe(first.id);
    expect(messages.map((m) => m.id)).toEqual([first.id, first.id + 1, first.id + 2]);
    expect(new TextDecoder().decode(frameBytes(messages[0]!))).toBe(json);
    expect(messages[1]!.encoding).toBe("base64");
    expect([...frameBytes(messages[1]!)]).toEqual([...binary]);
    expect(messages[1]!.content_type).toBe("application/octet-stream");
    expect([...frameBytes(messages[2]!)]).toEqual([...bom]);
    expect(messages[2]!.content_type).toBe("text/plain; charset=utf-8");
    expect(messages.every((m) => m.kind === "hook")).toBe(true);
  });

  it("keeps a hook body for the inbox's hook TTL (7 days by default)", async () => {
    const inbox = await claimInbox();
    await postHook(inbox, "agentgram_inbox/agent", '{"message":"x"}');
    const [m] = (await poll(inbox.agent)).messages;
    expect(m!.expires_at - m!.received_at).toBe(7 * 24 * 3600 * 1000);
  });

  it("refuses a body over the limit with 413 and keeps what was accepted before", async () => {
    const inbox = await claimInbox(undefined, { limits: { max_body_bytes: 1000 } });
    expect((await postHook(inbox, "agentgram_inbox/agent", "a".repeat(1000))).status).toBe(202);
    const big = await postHook(inbox, "agentgram_inbox/agent", "a".repeat(1001));
    expect(big.status).toBe(413);
    const body = (await big.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("payload_too_large");
    expect(body.error.message).toContain("1000");
    expect((await poll(inbox.agent)).count).toBe(1);
  });

  it("counts a streamed body with no Content-Length while reading it: at the limit taken, one byte past it 413", async () => {
    const inbox = await claimInbox(undefined, { limits: { max_body_bytes: 1000 } });
    const path = `/inbox/${inbox.agent.id}/hooks/agentgram_inbox/agent`;
    const streamed = (bytes: number) =>
      relayFetch(path, {
        method: "POST",
        headers: { authorization: `Bearer ${inbox.token}` },
        // Two chunks, so the cap is passed part way through the stream, not at its first read.
        body: new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new Uint8Array(600).fill(0x61));
            controller.enqueue(new Uint8Array(bytes - 600).fill(0x61));
            controller.close();
          },
        }),
      });
    expect((await streamed(1000)).status).toBe(202);
    const over = await streamed(1001);
    expect(over.status).toBe(413);
    expect(await errorCode(over)).toBe("payload_too_large");
    expect((await poll(inbox.agent)).count).toBe(1);
  });

  it("accepts a 256 KiB body by default (the gateway's own limit) and refuses one byte more", async () => {
    const inbox = await claimInbox();
    const mib = 256 * 1024;
    expect((await postHook(inbox, "a", new Uint8Array(mib).fill(0x61))).status).toBe(202);
    const over = await postHook(inbox, "a", new Uint8Array(mib + 1).fill(0x61));
    expect(over.status).toBe(413);
    expect(((await over.json()) as { error: { message: string } }).error.message).toContain("256 KiB");
    const { messages } = await poll(inbox.agent);
    expect(frameBytes(messages[0]!).byteLength).toBe(mib);
  });

  it("refuses a sub-path that could not be appended to a gateway path", async () => {
    const inbox = await claimInbox();
    const res = await postHook(inbox, "bad%20path", "{}");
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("invalid_subpath");
  });

  it("answers hooks for an unclaimed inbox with inbox_not_claimed", async () => {
    const res = await relayFetch("/inbox/ag_0123456789ab/hooks/agentgram_inbox/agent", {
      method: "POST",
      headers: { authorization: "Bearer x" },
      body: "{}",
    });
    expect(res.status).toBe(404);
    expect(await errorCode(res)).toBe("inbox_not_claimed");
  });
});
