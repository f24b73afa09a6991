// Receipt keys at rest: sealed with RECEIPT_KEY_SECRET (set for every workerd test in vitest.config.ts),
// bound to the agent id, never stored in plain form when the secret is set, and still signing acks.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RelayError, toBase64 } from "../../protocol/index.ts";
import { isSealed, openSecret, sealSecret } from "../../worker/access/secret-box.ts";
import { claimInbox, envelopeFrom, newAgent, postEnvelope, registerAtHub } from "../support/workerd/agents.ts";

const SECRET = "a-secret-of-enough-length";

describe("secret box", () => {
  it("seals a seed so that only the same secret and agent id open it", async () => {
    const seed = toBase64(crypto.getRandomValues(new Uint8Array(32)));
    const sealed = await sealSecret(seed, "ag_000000000001", SECRET);
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain(seed);
    expect(await openSecret(sealed, "ag_000000000001", SECRET)).toBe(seed);
    await expect(openSecret(sealed, "ag_000000000002", SECRET)).rejects.toThrow(/does not open/);
    await expect(openSecret(sealed, "ag_000000000001", "another-secret-of-length")).rejects.toThrow(/does not open/);
    await expect(openSecret(sealed, "ag_000000000001", undefined)).rejects.toThrow(/RECEIPT_KEY_SECRET/);
    const refusal = await openSecret(sealed, "ag_000000000001", undefined).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(RelayError);
    expect((refusal as RelayError).code).toBe("receipt_key_unavailable");
  });

  it("two seals of the same seed differ (a fresh IV each time)", async () => {
    const seed = toBase64(new Uint8Array(32));
    expect(await sealSecret(seed, "ag_000000000001", SECRET)).not.toBe(await sealSecret(seed, "ag_000000000001", SECRET));
  });

  it("passes an unsealed (older) seed through unchanged", async () => {
    expect(await openSecret("AAEC", "ag_000000000001", SECRET)).toBe("AAEC");
    expect(await openSecret("AAEC", "ag_000000000001", undefined)).toBe("AAEC");
  });

  it("an inbox claimed with the secret set stores its receipt key sealed, and its acks still verify", async () => {
    const inbox = await claimInbox();
    const stored = await runInDurableObject(env.INBOX.getByName(inbox.agent.id), (_i, state) =>
      String(state.storage.sql.exec(`SELECT json FROM config WHERE id = 1`).one().json),
    );
    expect(stored).not.toContain(toBase64(inbox.agent.receiptSeed));
    expect((JSON.parse(stored) as { receipt_key: { seed: string } }).receipt_key.seed).toMatch(/^enc:v1:/);
    const sender = newAgent();
    await registerAtHub(sender);
    const res = await postEnvelope(await envelopeFrom(sender, inbox.agent.id));
    const answer = (await res.json()) as { ack?: { from: string; sig: { key_id: string } } };
    expect(res.status).toBe(202);
    expect(answer.ack).toMatchObject({ from: inbox.agent.id, sig: { key_id: inbox.agent.receiptKeyId } });
  });

  it("a receipt key stored in plain form before the secret was set is sealed the first time it signs", async () => {
    const inbox = await claimInbox();
    const stub = env.INBOX.getByName(inbox.agent.id);
    const plain = toBase64(inbox.agent.receiptSeed);
    await runInDurableObject(stub, (instance) => {
      const config = instance.store.loadConfig()!;
      instance.store.saveConfig({ ...config, receipt_key: { ...config.receipt_key, seed: plain } });
      instance.config = instance.store.loadConfig();
    });
    const sender = newAgent();
    await registerAtHub(sender);
    const res = await postEnvelope(await envelopeFrom(sender, inbox.agent.id));
    expect(res.status).toBe(202);
    await res.json();
    const seed = await runInDurableObject(stub, (instance) => instance.store.loadConfig()!.receipt_key.seed);
    expect(isSealed(seed)).toBe(true);
    expect(await openSecret(seed, inbox.agent.id, env.RECEIPT_KEY_SECRET)).toBe(plain);
  });
});
