// Generated lone surrogates (a \u escape in either case, or the raw code unit as WTF-8 bytes, at the
// start of any key or string) and deep nesting, where JSON enters the relay: posted envelopes,
// envelopes carried in hook bodies (as the body, or as the text of `message`), opaque hook bodies, and
// webhook sources. Envelopes and sources are refused with 400 invalid_json and store nothing; an
// opaque hook body is stored byte-exact whatever it holds (it is not JSON-checked, hook-body.ts); a
// surrogate that breaks a carried envelope's own framing (its "v" key, the "message" key) leaves an
// opaque body, stored byte-exact. Never a 5xx. Fixed seeds; the describe names the generated inputs.
import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INBOX_DEFAULTS, utf8 } from "../../../protocol/index.ts";
import { claimInbox, envelopeFrom, frameBytes, poll, postHook, registeredAgent, relayFetch } from "../../support/workerd/agents.ts";
import type { ClaimedInbox, TestAgent } from "../../support/workerd/agents.ts";
import { addSource, nowSec, pathOf } from "../../support/workerd/sources.ts";
import { deeplyNested, expectWellFormedAnswer, loneSurrogate, settings, storedCount, stringStarts, withLoneSurrogate } from "./arbitraries.ts";
import type { LoneSurrogate } from "./arbitraries.ts";

const SEED = 0x5eed_0022;
const RUNS = { posted: 120, carried: 120, opaque: 120, sources: 120, deep: 60 } as const;
const TOTAL = Object.values(RUNS).reduce((a, b) => a + b, 0);
const PAYLOAD = { text: "hello", meta: { thread: "t-1", tags: ["a", "b"] } };
const STRIPE_SECRET = "whsec_properties_0123456789";

async function answer(res: Response, what: string): Promise<{ status: number; code: string; message: string; id: number }> {
  const text = await expectWellFormedAnswer(res, what);
  const body = (text ? JSON.parse(text) : {}) as { error?: { code: string; message: string }; id?: number };
  return { status: res.status, code: body.error?.code ?? "", message: body.error?.message ?? "", id: body.id ?? 0 };
}

function expectInvalidJson(a: { status: number; code: string; message: string }): void {
  expect([a.status, a.code], a.message).toEqual([400, "invalid_json"]);
  expect(a.message).toMatch(/lone UTF-16 surrogate|not UTF-8|nested more than/);
}

async function setUp(): Promise<{ inbox: ClaimedInbox; sender: TestAgent }> {
  return { inbox: await claimInbox(undefined, { rate_per_minute: 10_000 }), sender: await registeredAgent() };
}

/** The message stored as `id` is `bytes`, kept as an opaque hook body. */
async function expectStoredOpaque(inbox: ClaimedInbox, id: number, bytes: Uint8Array): Promise<void> {
  const [stored] = (await poll(inbox.agent, `after=${id - 1}&ack=false&limit=1`)).messages;
  expect(stored?.id).toBe(id);
  expect(stored!.kind).toBe("hook");
  expect([...frameBytes(stored!)]).toEqual([...bytes]);
}

/** The surrogate put into `text` as a JS string: the escape's six characters, or the raw code unit. */
function withUnit(text: string, s: LoneSurrogate): string {
  const starts = stringStarts(text);
  const at = starts[s.which % starts.length]!;
  const hex = s.unit.toString(16);
  const unit = s.spelling === "raw" ? String.fromCharCode(s.unit) : `\\u${s.spelling === "escape" ? hex : hex.toUpperCase()}`;
  return text.slice(0, at) + unit + text.slice(at);
}

const hmac = (key: string | Uint8Array, prefix: string, body: Uint8Array, encoding: "hex" | "base64") =>
  createHmac("sha256", key).update(Uint8Array.from([...utf8(prefix), ...body])).digest(encoding);

/** Signed over the bytes, as the providers sign: the raw spelling's WTF-8 included. */
function stripeSigned(body: Uint8Array): Record<string, string> {
  const ts = nowSec();
  return { "content-type": "application/json", "stripe-signature": `t=${ts},v1=${hmac(STRIPE_SECRET, `${ts}.`, body, "hex")}` };
}

function standardSigned(secret: string, id: string, body: Uint8Array): Record<string, string> {
  const ts = nowSec();
  const key = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  return { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": `v1,${hmac(key, `${id}.${ts}.`, body, "base64")}` };
}

describe(`lone surrogates and deep nesting where JSON enters (${TOTAL} generated inputs, seed ${SEED.toString(16)})`, () => {
  it(`POST /envelopes: a signed envelope with a lone surrogate in any key or string is 400 invalid_json, nothing stored (${RUNS.posted})`, { timeout: 60_000 }, async () => {
    const { inbox, sender } = await setUp();
    await fc.assert(
      fc.asyncProperty(loneSurrogate, async (s) => {
        const body = withLoneSurrogate(JSON.stringify(await envelopeFrom(sender, inbox.agent.id, { payload: PAYLOAD })), s);
        expectInvalidJson(await answer(await relayFetch(`/inbox/${inbox.agent.id}/envelopes`, { method: "POST", body }), `posted ${JSON.stringify(s)}`));
        expect(await storedCount(inbox.agent.id)).toBe(0);
      }),
      settings(SEED, RUNS.posted),
    );
  });

  it(`hook bodies carrying an envelope (the body, or the text of message): 400 invalid_json, or stored byte-exact as opaque when the surrogate broke the framing (${RUNS.carried})`, { timeout: 60_000 }, async () => {
    const { inbox, sender } = await setUp();
    let stored = 0;
    await fc.assert(
      fc.asyncProperty(loneSurrogate, fc.constantFrom("body", "message", "wrapper"), async (s, carried) => {
        const text = JSON.stringify(await envelopeFrom(sender, inbox.agent.id, { payload: PAYLOAD }));
        // "message": the surrogate inside the envelope's own text (JSON.stringify then escapes a raw
        // one in the body around it); "wrapper": in the body around the envelope's text.
        const body =
          carried === "body" ? withLoneSurrogate(text, s)
          : carried === "message" ? utf8(JSON.stringify({ message: withUnit(text, s) }))
          : withLoneSurrogate(JSON.stringify({ message: text }), s);
        const a = await answer(await postHook(inbox, "agentgram_inbox/agent", body), `${carried} ${JSON.stringify(s)}`);
        if (a.status === 202) {
          stored++;
          await expectStoredOpaque(inbox, a.id, body);
        } else expectInvalidJson(a);
        expect(await storedCount(inbox.agent.id)).toBe(stored);
      }),
      settings(SEED + 1, RUNS.carried),
    );
    // Most surrogates land inside the envelope and are refused; a few break its framing.
    expect(stored).toBeLessThan(RUNS.carried / 2);
  });

  it(`opaque hook bodies with lone surrogates or deep nesting are stored byte-exact (${RUNS.opaque})`, { timeout: 60_000 }, async () => {
    const { inbox } = await setUp();
    const opaque = fc.oneof(
      fc.tuple(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== "v" && k !== "probe"), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1, maxKeys: 5 }), loneSurrogate).map(([value, s]) => withLoneSurrogate(JSON.stringify(value), s)),
      fc.record({ depth: fc.constantFrom(65, 3000, 20_000), kind: fc.constantFrom("array" as const, "object" as const) }).map(({ depth, kind }) => utf8(`{"message":${deeplyNested(depth, kind)}}`)),
    );
    let stored = 0;
    await fc.assert(
      fc.asyncProperty(opaque, async (body) => {
        const a = await answer(await postHook(inbox, "custom/path", body), `opaque ${body.byteLength} bytes`);
        expect(a.status, a.message).toBe(202);
        stored++;
        await expectStoredOpaque(inbox, a.id, body);
        expect(await storedCount(inbox.agent.id)).toBe(stored);
      }),
      settings(SEED + 2, RUNS.opaque),
    );
  });

  it(`webhook sources (Stripe, Standard Webhooks): a signed event with a lone surrogate is 400 invalid_json, nothing stored (${RUNS.sources})`, { timeout: 60_000 }, async () => {
    const inbox = await claimInbox();
    const stripe = await addSource(inbox, { name: "stripe", kind: "stripe", secret: STRIPE_SECRET });
    const standard = await addSource(inbox, { name: "svix", kind: "standard-webhooks" });
    await fc.assert(
      fc.asyncProperty(loneSurrogate, fc.boolean(), fc.nat(), async (s, toStripe, n) => {
        const text = JSON.stringify({ id: `evt_${n}`, type: "invoice.paid", data: { object: { id: `in_${n}`, lines: ["x", "y"] } } });
        const body = withLoneSurrogate(text, s);
        const res = toStripe
          ? await relayFetch(pathOf(stripe.source.url), { method: "POST", headers: stripeSigned(body), body })
          : await relayFetch(pathOf(standard.source.url), { method: "POST", headers: standardSigned(standard.secret!, `msg_${n}`, body), body });
        expectInvalidJson(await answer(res, `${toStripe ? "stripe" : "standard"} ${JSON.stringify(s)}`));
        expect(await storedCount(inbox.agent.id)).toBe(0);
      }),
      settings(SEED + 3, RUNS.sources),
    );
  });

  it(`deep nesting: a payload 65 to 120,000 levels deep, posted, carried as the hook body, or sent to a source, is a 4xx, never a 5xx (${RUNS.deep})`, { timeout: 60_000 }, async () => {
    const { inbox, sender } = await setUp();
    const stripe = await addSource(inbox, { name: "stripe", kind: "stripe", secret: STRIPE_SECRET });
    const deep = fc.record({ depth: fc.oneof(fc.integer({ min: 65, max: 300 }), fc.integer({ min: 300, max: 120_000 })), kind: fc.constantFrom("array" as const, "object" as const), where: fc.constantFrom("posted" as const, "hook" as const, "source" as const) });
    await fc.assert(
      fc.asyncProperty(deep, async ({ depth, kind, where }) => {
        const envelope = JSON.stringify(await envelopeFrom(sender, inbox.agent.id));
        const nested = deeplyNested(depth, kind);
        const body = utf8(where === "source" ? `{"id":"evt_deep","type":"x","data":${nested}}` : envelope.replace('{"text":"hello"}', `{"a":${nested}}`));
        const res =
          where === "posted" ? await relayFetch(`/inbox/${inbox.agent.id}/envelopes`, { method: "POST", body })
          : where === "hook" ? await postHook(inbox, "agentgram_inbox/agent", body)
          : await relayFetch(pathOf(stripe.source.url), { method: "POST", headers: stripeSigned(body), body });
        const a = await answer(res, `${where}, ${depth} levels of ${kind}`);
        if (body.byteLength > INBOX_DEFAULTS.maxBodyBytes) expect(a.status).toBe(413);
        else expectInvalidJson(a);
        expect(await storedCount(inbox.agent.id)).toBe(0);
      }),
      settings(SEED + 4, RUNS.deep),
    );
  });
});
