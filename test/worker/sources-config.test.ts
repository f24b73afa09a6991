// Managing an inbox's webhook sources: signed add, list, change (rotate, sub-path) and remove; secrets
// shown once and never again, sealed at rest, token secrets stored as hashes; rotation with a grace;
// source events through the dead-letter shelf and replay with their headers.
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { signedRequestHeaders, utf8 } from "../../protocol/index.ts";
import { claimInbox, errorCode, newAgent, poll, relayFetch, showMessage, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import { addSource, githubHeaders, pathOf, postToSource, stripeHeaders } from "../support/workerd/sources.ts";
import { loggablePath } from "../../worker/http-errors.ts";
import { hashTokenSecret } from "../../worker/sources/source-secrets.ts";

afterEach(() => closeAllSockets());

const sourcesPath = (inbox: ClaimedInbox, rest = "") => `/inbox/${inbox.agent.id}/sources${rest}`;

async function listSources(inbox: ClaimedInbox): Promise<{ sources: Record<string, unknown>[] }> {
  const res = await signedFetch(inbox.agent, "GET", sourcesPath(inbox));
  expect(res.status).toBe(200);
  return (await res.json()) as { sources: Record<string, unknown>[] };
}

async function change(inbox: ClaimedInbox, name: string, body: unknown): Promise<Response> {
  return signedFetch(inbox.agent, "PATCH", sourcesPath(inbox, `/${name}`), body);
}

async function refusedAdd(inbox: ClaimedInbox, body: unknown, status: number, code: string, message?: RegExp): Promise<void> {
  const res = await signedFetch(inbox.agent, "POST", sourcesPath(inbox), body);
  expect(res.status).toBe(status);
  const json = (await res.json()) as { error: { code: string; message: string } };
  expect(json.error.code).toBe(code);
  if (message) expect(json.error.message).toMatch(message);
}

describe("adding and listing sources", () => {
  it("shows a made secret once, lists sources without secrets, seals HMAC secrets and hashes token secrets at rest", async () => {
    const inbox = await claimInbox();
    const gh = await addSource(inbox, { name: "github", kind: "github" });
    expect(gh.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(gh.source).toMatchObject({ name: "github", kind: "github", subpath: "sources/github", secret_sealed: true, previous_secret_until: null });
    expect(gh.post_url).toBe(`https://relay.test/inbox/${inbox.agent.id}/sources/github`);
    const stripe = await addSource(inbox, { name: "stripe", kind: "stripe", secret: "whsec_abcdefghijklmnop", subpath: "payments/stripe" });
    expect(stripe.secret).toBeUndefined();
    const token = await addSource(inbox, { name: "zapier", kind: "token" });
    const listing = await listSources(inbox);
    expect(listing.sources.map((s) => [s.name, s.kind, s.subpath])).toEqual([
      ["github", "github", "sources/github"],
      ["stripe", "stripe", "payments/stripe"],
      ["zapier", "token", "sources/zapier"],
    ]);
    const text = JSON.stringify(listing);
    for (const secret of [gh.secret!, "whsec_abcdefghijklmnop", token.secret!]) expect(text).not.toContain(secret);
    const rows = await runInDurableObject(env.INBOX.getByName(inbox.agent.id), (_instance, state) =>
      state.storage.sql.exec(`SELECT json FROM sources ORDER BY name`).toArray().map((r) => String(r.json)),
    );
    expect(rows.join("\n")).not.toContain(gh.secret!);
    expect(rows.join("\n")).not.toContain("whsec_abcdefghijklmnop");
    expect(rows.join("\n")).not.toContain(token.secret!);
    expect(rows[0]).toMatch(/"value":"enc:v1:/);
    expect(rows[2]).toContain(await hashTokenSecret(token.secret!));
  });

  it("a secret stored plain (before the operator set RECEIPT_KEY_SECRET) still verifies, and is sealed when first used", async () => {
    const inbox = await claimInbox();
    const { source, secret } = await addSource(inbox, { name: "gh", kind: "github" });
    const stub = env.INBOX.getByName(inbox.agent.id);
    await runInDurableObject(stub, (instance, state) => {
      const plain = { ...instance.sources.get("gh")!, secrets: [{ value: secret!, until: null }] };
      state.storage.sql.exec(`UPDATE sources SET json = ? WHERE name = 'gh'`, JSON.stringify(plain));
    });
    await evictDurableObject(stub);
    const row = () => runInDurableObject(stub, (_instance, state) => String(state.storage.sql.exec(`SELECT json FROM sources`).one().json));
    expect(await row()).toContain(secret!);
    const body = '{"zen":"x"}';
    expect((await postToSource(pathOf(source.url), body, githubHeaders(secret!, body))).status).toBe(200);
    expect(await row()).not.toContain(secret!);
    expect((await postToSource(pathOf(source.url), body, githubHeaders(secret!, body, { "x-github-delivery": "after-sealing" }))).status).toBe(200);
  });

  it("refuses what cannot work, saying what to fix", async () => {
    const inbox = await claimInbox();
    await refusedAdd(inbox, { name: "Git Hub", kind: "github" }, 400, "invalid_source", /not a source name/);
    await refusedAdd(inbox, { name: "x", kind: "gitlab" }, 400, "invalid_source", /kind must be one of github, stripe, slack, standard-webhooks, token/);
    await refusedAdd(inbox, { name: "x", kind: "stripe" }, 400, "invalid_source", /signing secret/);
    await refusedAdd(inbox, { name: "x", kind: "stripe", secret: "sk_live_123456789" }, 400, "invalid_source", /whsec_/);
    await refusedAdd(inbox, { name: "x", kind: "slack" }, 400, "invalid_source", /Signing Secret/);
    await refusedAdd(inbox, { name: "x", kind: "standard-webhooks", secret: "whsec_short" }, 400, "invalid_source", /24 to 64 bytes/);
    await refusedAdd(inbox, { name: "x", kind: "github", secret: "short" }, 400, "invalid_source", /at least 16/);
    await refusedAdd(inbox, { name: "x", kind: "token", secret: "a".repeat(40) }, 400, "invalid_source", /made by the relay/);
    await refusedAdd(inbox, { name: "x", kind: "github", subpath: "../v1/chat" }, 400, "invalid_source", /subpath/);
    await refusedAdd(inbox, { name: "x", kind: "github", colour: "red" }, 400, "invalid_source", /unknown field "colour"/);
    await addSource(inbox, { name: "x", kind: "github" });
    await refusedAdd(inbox, { name: "x", kind: "token" }, 409, "source_exists");
    expect((await listSources(inbox)).sources).toHaveLength(1);
  });

  it("holds at most 32 sources", async () => {
    const inbox = await claimInbox();
    for (let i = 0; i < 32; i++) await addSource(inbox, { name: `s${i}`, kind: "token" });
    await refusedAdd(inbox, { name: "one-more", kind: "token" }, 409, "too_many_sources");
  });

  it("only the inbox's keys may manage sources, each change signed once", async () => {
    const inbox = await claimInbox();
    const unsigned = await relayFetch(sourcesPath(inbox));
    expect(unsigned.status).toBe(401);
    expect(await errorCode(unsigned)).toBe("missing_request_signature");
    const stranger = await signedFetch(inbox.agent, "POST", sourcesPath(inbox), { name: "x", kind: "token" }, newAgent());
    expect(stranger.status).toBe(403);
    expect(await errorCode(stranger)).toBe("key_not_authorised");
    // The signature covers the body: another body under the same headers fails.
    const body = JSON.stringify({ name: "x", kind: "token" });
    const headers = await signedRequestHeaders(inbox.agent.publicKey, "POST", sourcesPath(inbox), utf8(body), (m) => inbox.agent.sign(m));
    const tampered = await relayFetch(sourcesPath(inbox), { method: "POST", headers, body: body.replace("token", "github") });
    expect(await errorCode(tampered)).toBe("invalid_request_signature");
    expect((await relayFetch(sourcesPath(inbox), { method: "POST", headers, body })).status).toBe(201);
    const replayed = await relayFetch(sourcesPath(inbox), { method: "POST", headers, body });
    expect(await errorCode(replayed)).toBe("replayed_request");
    const wrongMethod = await relayFetch(sourcesPath(inbox, "/x"), { method: "GET" });
    expect(wrongMethod.status).toBe(405);
  });
});

describe("changing and removing sources", () => {
  it("rotation cuts the old secret at once, or keeps it for grace_sec", async () => {
    const inbox = await claimInbox();
    const added = await addSource(inbox, { name: "gh", kind: "github" });
    const path = pathOf(added.source.url);
    const body = '{"n":1}';
    const cut = await change(inbox, "gh", { rotate: true });
    expect(cut.status).toBe(200);
    const rotated = (await cut.json()) as { secret: string; source: { previous_secret_until: number | null } };
    expect(rotated.secret).not.toBe(added.secret);
    expect(rotated.source.previous_secret_until).toBeNull();
    expect(await errorCode(await postToSource(path, body, githubHeaders(added.secret!, body)))).toBe("invalid_signature");
    expect((await postToSource(path, body, githubHeaders(rotated.secret, body))).status).toBe(200);
    const given = "a-new-github-secret-chosen-by-me";
    const graceful = (await (await change(inbox, "gh", { secret: given, grace_sec: 3600 })).json()) as { secret?: string; source: { previous_secret_until: number } };
    expect(graceful.secret).toBeUndefined();
    expect(graceful.source.previous_secret_until).toBeGreaterThan(Date.now() + 3500_000);
    expect((await postToSource(path, body, githubHeaders(rotated.secret, body))).status).toBe(200);
    expect((await postToSource(path, body, githubHeaders(given, body))).status).toBe(200);
    // The grace ends: the previous secret stops working.
    const liveKeys = (at: number) =>
      runInDurableObject(env.INBOX.getByName(inbox.agent.id), async (instance) => {
        const keys = await instance.sources.keys(instance.sources.get("gh")!, at);
        return keys.kind === "hmac" ? keys.keys.length : -1;
      });
    expect(await liveKeys(Date.now())).toBe(2);
    expect(await liveKeys(Date.now() + 3601_000)).toBe(1);
  });

  it("refuses changes that cannot work", async () => {
    const inbox = await claimInbox();
    await addSource(inbox, { name: "stripe", kind: "stripe", secret: "whsec_abcdefghijklmnop" });
    const codes = async (body: unknown) => errorCode(await change(inbox, "stripe", body));
    expect(await codes({ rotate: true })).toBe("invalid_source");
    expect(await codes({})).toBe("invalid_source");
    expect(await codes({ grace_sec: 60 })).toBe("invalid_source");
    expect(await codes({ secret: "whsec_abcdefghijklmnoq", grace_sec: 8 * 24 * 3600 })).toBe("invalid_source");
    expect(await errorCode(await change(inbox, "nope", { rotate: true }))).toBe("source_not_found");
  });

  it("a token rotation gives a new URL and the old one stops", async () => {
    const inbox = await claimInbox();
    const added = await addSource(inbox, { name: "hook", kind: "token" });
    const res = (await (await change(inbox, "hook", { rotate: true })).json()) as { post_url: string; secret: string };
    expect(res.post_url.endsWith(`/sources/hook/${res.secret}`)).toBe(true);
    expect(await errorCode(await postToSource(pathOf(added.post_url), "{}", {}))).toBe("invalid_source_secret");
    expect((await postToSource(pathOf(res.post_url), "{}", {})).status).toBe(200);
  });

  it("a new sub-path applies to later events; removing a source keeps what it delivered", async () => {
    const inbox = await claimInbox();
    const secret = "whsec_abcdefghijklmnop";
    const { source } = await addSource(inbox, { name: "stripe", kind: "stripe", secret });
    const path = pathOf(source.url);
    const one = '{"id":"evt_1","type":"a"}';
    await postToSource(path, one, stripeHeaders(secret, one));
    expect((await change(inbox, "stripe", { subpath: "billing" })).status).toBe(200);
    const two = '{"id":"evt_2","type":"b"}';
    await postToSource(path, two, stripeHeaders(secret, two));
    const removed = await signedFetch(inbox.agent, "DELETE", sourcesPath(inbox, "/stripe"));
    expect(await removed.json()).toEqual({ removed: "stripe" });
    expect(await errorCode(await postToSource(path, two, stripeHeaders(secret, two)))).toBe("source_not_found");
    expect(await errorCode(await signedFetch(inbox.agent, "DELETE", sourcesPath(inbox, "/stripe")))).toBe("source_not_found");
    expect((await poll(inbox.agent)).messages.map((m) => m.subpath)).toEqual(["sources/stripe", "billing"]);
  });
});

describe("source events as messages", () => {
  it("are listed by source and event, shown with their headers, and replayed from the dead shelf with them", async () => {
    const inbox = await claimInbox();
    const { source, secret } = await addSource(inbox, { name: "gh", kind: "github" });
    const body = '{"ref":"refs/heads/main"}';
    const headers = githubHeaders(secret!, body);
    const { id } = (await (await postToSource(pathOf(source.url), body, headers)).json()) as { id: number };
    const shown = await showMessage(inbox.agent, id);
    expect(shown.message).toMatchObject({ sender: "source:gh", msg_id: headers["x-github-delivery"], type: "push", subpath: "sources/gh" });
    expect((shown as unknown as { headers: Record<string, string> }).headers).toMatchObject({ "x-github-event": "push", "x-clawrelay-source": "gh" });
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    const [frame] = await client.messages(1);
    expect(frame!.headers).toMatchObject({ "x-github-event": "push" });
    client.reject(id, "gateway 404: no mapping for sources/gh", { status: 404 });
    await client.next("rejected");
    const replay = await signedFetch(inbox.agent, "POST", `/inbox/${inbox.agent.id}/queue/${id}/replay`);
    const { id: newId } = (await replay.json()) as { id: number };
    const [again] = await client.messages(1);
    expect(again).toMatchObject({ id: newId, subpath: "sources/gh", headers: frame!.headers });
  });

  it("a token source's secret never appears in a logged path", () => {
    expect(loggablePath("/inbox/ag_0123456789ab/sources/hook/s3cr3t-token")).toBe("/inbox/ag_0123456789ab/sources/hook/…");
    expect(loggablePath("/inbox/ag_0123456789ab/sources/hook")).toBe("/inbox/ag_0123456789ab/sources/hook");
  });
});
