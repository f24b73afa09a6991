// A GitHub source stores a delivery once, whatever its X-GitHub-Delivery header says: GitHub signs the
// body only (no timestamp, no delivery id), so a captured delivery can be re-posted with the header
// changed or removed. Events are deduplicated by the body's SHA-256 for the dedup window instead.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SOURCE_DEDUP_RETENTION_SEC } from "../../worker/sources/source-intake.ts";
import { claimInbox, poll } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { addSource, githubHeaders, pathOf, postToSource, standardHeaders } from "../support/workerd/sources.ts";

interface Answer {
  queued: boolean;
  id: number;
  duplicate?: boolean;
}

async function githubSource(inbox: ClaimedInbox) {
  const { source, secret } = await addSource(inbox, { name: "gh", kind: "github" });
  const post = async (body: string, headers: Record<string, string>) => {
    const res = await postToSource(pathOf(source.url), body, headers);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as Answer;
  };
  return { post, headers: (body: string, extra: Record<string, string> = {}) => githubHeaders(secret!, body, extra) };
}

const stored = async (inbox: ClaimedInbox) => (await poll(inbox.agent)).messages;

const PUSH = JSON.stringify({ ref: "refs/heads/main", after: "6113728f27ae82c7b1a177c8d03f9e96e0adf246", repository: { full_name: "octo/hello" } });

describe("a GitHub delivery is stored once", () => {
  it("regression: re-posted with X-GitHub-Delivery changed, it is answered as the first and not stored again (it was delivered twice)", async () => {
    const inbox = await claimInbox();
    const github = await githubSource(inbox);
    const first = await github.post(PUSH, github.headers(PUSH, { "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958" }));
    const replayed = await github.post(PUSH, github.headers(PUSH, { "x-github-delivery": "00000000-0000-4000-8000-000000000000" }));
    expect(replayed).toEqual({ queued: true, id: first.id, duplicate: true });
    const messages = await stored(inbox);
    expect(messages.map((m) => m.id)).toEqual([first.id]);
    expect(messages[0]!.headers?.["x-github-delivery"]).toBe("72d3162e-cc78-11e3-81ab-4c9367dc0958");
  });

  it("regression: re-posted with X-GitHub-Delivery removed (or first sent without it), it is stored once (without the header nothing deduplicated it)", async () => {
    const inbox = await claimInbox();
    const github = await githubSource(inbox);
    const { "x-github-delivery": _dropped, ...bare } = github.headers(PUSH);
    const first = await github.post(PUSH, github.headers(PUSH));
    expect(await github.post(PUSH, bare)).toEqual({ queued: true, id: first.id, duplicate: true });

    const other = '{"action":"opened","issue":{"id":1}}';
    const { "x-github-delivery": _none, ...bareOther } = github.headers(other);
    const withoutId = await github.post(other, bareOther);
    expect(await github.post(other, bareOther)).toEqual({ queued: true, id: withoutId.id, duplicate: true });
    expect(await github.post(other, github.headers(other))).toEqual({ queued: true, id: withoutId.id, duplicate: true });
    expect((await stored(inbox)).map((m) => m.id)).toEqual([first.id, withoutId.id]);
  });

  it("GitHub's own Redeliver (the same id and the same body) is a repeat; every new event, whatever its id, is stored", async () => {
    const inbox = await claimInbox();
    const github = await githubSource(inbox);
    const headers = github.headers(PUSH, { "x-github-delivery": "d-1" });
    const first = await github.post(PUSH, headers);
    expect(await github.post(PUSH, headers)).toEqual({ queued: true, id: first.id, duplicate: true });
    const next = PUSH.replace("6113728f", "0000aaaa");
    const second = await github.post(next, github.headers(next, { "x-github-delivery": "d-2" }));
    // A new body under an id seen before is a new event too (the id is not what is signed).
    const third = await github.post('{"zen":"x","hook_id":1}', github.headers('{"zen":"x","hook_id":1}', { "x-github-delivery": "d-1", "x-github-event": "star" }));
    expect(second.duplicate).toBeUndefined();
    expect(third.duplicate).toBeUndefined();
    expect((await stored(inbox)).map((m) => m.id)).toEqual([first.id, second.id, third.id]);
  });

  it("a delivery recorded by its id before bodies were deduplicated (kept four days) is still a repeat when GitHub redelivers it", async () => {
    const inbox = await claimInbox();
    const github = await githubSource(inbox);
    await runInDurableObject(env.INBOX.getByName(inbox.agent.id), (instance) => {
      instance.store.recordDelivery("source:gh", "legacy-delivery", "unused", JSON.stringify({ queued: true, id: 7 }), Date.now() + 60_000);
    });
    expect(await github.post(PUSH, github.headers(PUSH, { "x-github-delivery": "legacy-delivery" }))).toEqual({ queued: true, id: 7, duplicate: true });
    expect(await stored(inbox)).toEqual([]);
  });

  it(`what the scheme cannot protect: a capture replayed after the dedup window (${SOURCE_DEDUP_RETENTION_SEC / 86_400} days) is taken as new`, async () => {
    const inbox = await claimInbox();
    const github = await githubSource(inbox);
    const first = await github.post(PUSH, github.headers(PUSH));
    // The sweep as it runs once the window (and the UTC day it ends in) is over: the record's day table is dropped.
    await runInDurableObject(env.INBOX.getByName(inbox.agent.id), (instance) => {
      instance.store.sweepExpiredRecords(Date.now() + (SOURCE_DEDUP_RETENTION_SEC + 86_400) * 1000);
    });
    const late = await github.post(PUSH, github.headers(PUSH));
    expect(late.duplicate).toBeUndefined();
    expect(late.id).toBeGreaterThan(first.id);
  });

  it("other kinds keep their signed delivery ids: two Standard Webhooks events with the same body are two events", async () => {
    const inbox = await claimInbox();
    const { source, secret } = await addSource(inbox, { name: "svix", kind: "standard-webhooks" });
    const body = '{"type":"email.sent"}';
    for (const id of ["msg_1", "msg_2"]) {
      const res = await postToSource(pathOf(source.url), body, standardHeaders(secret!, id, body));
      expect(((await res.json()) as Answer).duplicate).toBeUndefined();
    }
    expect(await stored(inbox)).toHaveLength(2);
  });
});
