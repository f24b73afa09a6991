// One hub token per agent: the inbox refreshes only when it must, keeps the token (sealed) across an
// eviction, counts a refusal of a token that had not expired as another client's refresh, takes a
// newer token from its agent or owner, and hands its own down — never showing it in the status view.
// A refresh answer without `expires_at` is held for the JWT's own `exp`, else the hub's 24 h.
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { HUB_TOKEN_LIFETIME_MS, answeredHubToken, toBase64Url, utf8 } from "../../protocol/index.ts";
import { REFRESH_MARGIN_MS } from "../../worker/hub/hub-token.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import { errorCode, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { hubSide, pullNow, pullingInbox, refreshElsewhere } from "../support/workerd/hub-link.ts";

afterEach(closeAllSockets);

/**
 * Sets the object's alarm an hour out: the pull schedule's own next pull (15 s after the claim's) cannot
 * run while the test hands tokens around — on a loaded machine it did, with the token another client had
 * just ended, and refreshed. pullNow() runs the alarm when the test says.
 */
const holdAlarm = (inbox: ClaimedInbox) => runInDurableObject(env.INBOX.getByName(inbox.agent.id), (_o, state) => state.storage.setAlarm(Date.now() + 3_600_000));

describe("the inbox's hub token", () => {
  it("is refreshed once, kept sealed at rest, and still used after an eviction", async () => {
    const inbox = await pullingInbox();
    const stub = env.INBOX.getByName(inbox.agent.id);
    const side = await hubSide(inbox.agent.id);
    expect(side.refreshes).toBe(1);
    const stored = await runInDurableObject(stub, (o) => o.store.readMeta("hub_token"));
    expect(stored).not.toContain(side.token!);
    expect(JSON.parse(stored!).token).toMatch(/^enc:v1:/);
    await evictDurableObject(stub, { webSockets: "hibernate" });
    await pullNow(inbox);
    const after = await hubSide(inbox.agent.id);
    expect(after.pulls).toBe(side.pulls + 1);
    expect(after.refreshes).toBe(1);
  });

  it("counts a refusal as another client's refresh, takes a new token and goes on pulling", async () => {
    const inbox = await pullingInbox();
    await refreshElsewhere(inbox.agent.id, 60);
    await pullNow(inbox);
    const side = await hubSide(inbox.agent.id);
    expect(side.refreshes).toBe(3); // ours, theirs, ours again after the 401
    const view = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/hub`);
    const text = await view.text();
    expect(text).not.toContain(side.token!);
    const status = JSON.parse(text) as { token_lost: { count: number } | null; token: { source: string } | null; last_pull: { ok: boolean } | null };
    expect(status.token_lost?.count).toBe(1);
    expect(status.token?.source).toBe("refresh");
    expect(status.last_pull?.ok).not.toBe(false);
  });

  it("takes a newer token the agent holds (no refresh of its own), and answers an older one with its own", async () => {
    const inbox = await pullingInbox();
    const socket = await connect(inbox.agent.id);
    await socket.auth(inbox.agent);
    await holdAlarm(inbox);
    const mine = await socket.next("hub_token");
    socket.send({ type: "hub_token", token: "tok_older", expires_at: mine.expires_at - 60 });
    expect((await socket.next("hub_token")).token).toBe(mine.token);
    const theirs = await refreshElsewhere(inbox.agent.id, 60);
    socket.send({ type: "hub_token", token: theirs.agent_token, expires_at: theirs.expires_at });
    await socket.sync();
    await pullNow(inbox);
    const side = await hubSide(inbox.agent.id);
    expect(side.refreshes).toBe(2); // the inbox's first, and the other client's: none after it
    const status = (await (await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/hub`)).json()) as { token: { source: string }; token_lost: unknown };
    expect(status.token.source).toBe("agent");
    expect(status.token_lost).toBeNull();
  });

  it("is read and handed over by its owner with single-use signed requests", async () => {
    const inbox = await pullingInbox();
    await holdAlarm(inbox);
    const path = `/inbox/${inbox.agent.id}/hub/token`;
    const read = (await (await signedFetch(inbox.agent, "GET", path)).json()) as { token: string; source: string };
    expect([read.token, read.source]).toEqual([(await hubSide(inbox.agent.id)).token, "refresh"]);
    const theirs = await refreshElsewhere(inbox.agent.id, 60);
    const put = await signedFetch(inbox.agent, "PUT", path, { token: theirs.agent_token, expires_at: theirs.expires_at });
    expect(await put.json()).toEqual({ taken: true, expires_at: theirs.expires_at, source: "owner" });
    const stale = await signedFetch(inbox.agent, "PUT", path, { token: "tok_stale", expires_at: theirs.expires_at - 10 });
    expect(((await stale.json()) as { taken: boolean }).taken).toBe(false);
    expect(await errorCode(await signedFetch(inbox.agent, "PUT", path, { token: "has space", expires_at: 1 }))).toBe("invalid_hub_token");
  });

  it("refuses an offer with an unknown field, or an expiry past the JWT's own exp or years ahead, naming why; the held token stays", async () => {
    const inbox = await pullingInbox();
    await holdAlarm(inbox);
    const path = `/inbox/${inbox.agent.id}/hub/token`;
    const refusal = async (body: Record<string, unknown>) => (await (await signedFetch(inbox.agent, "PUT", path, body)).json()) as { error: { code: string; message: string } };
    const theirs = await refreshElsewhere(inbox.agent.id, 60);
    expect(await refusal({ token: theirs.agent_token, expires_at: theirs.expires_at, source: "owner", admin: true })).toEqual({
      error: { code: "invalid_hub_token", message: 'unknown field "source", "admin": send {"token": "<the hub JWT>", "expires_at": <unix seconds>}' },
    });
    const year9999 = Math.floor(Date.UTC(9999, 11, 31) / 1000);
    const far = await refusal({ token: theirs.agent_token, expires_at: year9999 });
    expect(far.error.code).toBe("invalid_hub_token_expiry");
    expect(far.error.message).toContain("more than 7 days ahead");
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const jwt = [{ alg: "HS256" }, { agent_id: inbox.agent.id, exp }].map((part) => toBase64Url(utf8(JSON.stringify(part)))).join(".") + ".c2ln";
    const pastExp = await refusal({ token: jwt, expires_at: exp + 2 * 24 * 3600 });
    expect(pastExp.error).toEqual({ code: "invalid_hub_token_expiry", message: `expires_at ${exp + 2 * 24 * 3600} is later than the token's own exp (${exp}): send the expiry the hub gave with the token` });
    const held = (await (await signedFetch(inbox.agent, "GET", path)).json()) as { token: string };
    expect([theirs.agent_token, jwt]).not.toContain(held.token);
    // The same JWT offered with its own exp is read (200); not taken, since the token held ends later.
    const fair = await signedFetch(inbox.agent, "PUT", path, { token: jwt, expires_at: exp });
    expect([fair.status, ((await fair.json()) as { taken: boolean }).taken]).toEqual([200, false]);
  });
});

describe("a refreshed token's expiry (protocol/hub-token.ts answeredHubToken, as the relay's refresh reads it)", () => {
  const nowMs = Date.UTC(2026, 11, 1);
  const jwt = (claims: Record<string, unknown>) => [{ alg: "HS256", typ: "JWT" }, claims].map((part) => toBase64Url(utf8(JSON.stringify(part)))).join(".") + ".c2ln";
  const expiryMs = (expiresAt: unknown, token: string) => answeredHubToken(token, expiresAt, nowMs).expiresAtMs;

  it("is the answer's expires_at, in unix seconds or ms", () => {
    expect(expiryMs(1_800_000_000, "tok")).toBe(1_800_000_000_000);
    expect(expiryMs(1_800_000_000_000, "tok")).toBe(1_800_000_000_000);
    expect(expiryMs("2027-01-15T10:00:00Z", "tok")).toBe(Date.UTC(2027, 0, 15, 10));
  });

  it("without expires_at is the JWT's exp, else the hub's 24 h: never inside the refresh margin (it was now + 1 h, so every pull refreshed and ended the agent's other clients' tokens)", () => {
    const exp = Math.floor(nowMs / 1000) + 20 * 3600;
    expect(expiryMs(undefined, jwt({ sub: "ag_1", exp }))).toBe(exp * 1000);
    expect(expiryMs(null, "tok_not_a_jwt")).toBe(nowMs + HUB_TOKEN_LIFETIME_MS);
    expect(expiryMs("soon", jwt({ sub: "ag_1" }))).toBe(nowMs + HUB_TOKEN_LIFETIME_MS);
    expect(expiryMs(undefined, "tok_not_a_jwt") - nowMs).toBeGreaterThan(REFRESH_MARGIN_MS);
  });
});
