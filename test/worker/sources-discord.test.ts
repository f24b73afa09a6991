// A Discord source (an application's Interactions Endpoint URL): each request signed as Discord signs
// it (Ed25519 over X-Signature-Timestamp + the raw body) with a key made here, and each signed request
// confirmed by Discord's own `discord-interactions` package before it is sent, so the test and the
// relay agree with Discord's reading, not only with each other.
import { verifyKey } from "discord-interactions";
import { describe, expect, it } from "vitest";
import { toHex } from "../../protocol/index.ts";
import { claimInbox, errorCode, frameBytes, poll, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { addSource, nowSec, pathOf, postToSource } from "../support/workerd/sources.ts";

interface DiscordApp {
  publicKeyHex: string;
  /** Discord's headers for `body`, checked by discord-interactions' verifyKey first. */
  headers(body: string, ts?: number): Promise<Record<string, string>>;
}

async function discordApp(): Promise<DiscordApp> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const publicKeyHex = toHex(new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer));
  return {
    publicKeyHex,
    async headers(body, ts = nowSec()) {
      const message = new TextEncoder().encode(`${ts}${body}`);
      const signature = toHex(new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, pair.privateKey, message)));
      expect(await verifyKey(body, signature, String(ts), publicKeyHex), "discord-interactions accepts the request as Discord's").toBe(true);
      return { "content-type": "application/json", "x-signature-ed25519": signature, "x-signature-timestamp": String(ts), "user-agent": "Discord-Interactions/1.0 (+https://discord.com)" };
    },
  };
}

async function discordSource(inbox: ClaimedInbox, app: DiscordApp) {
  const { source } = await addSource(inbox, { name: "discord", kind: "discord", secret: app.publicKeyHex });
  return pathOf(source.url);
}

const PING = JSON.stringify({ id: "1289021843987214336", application_id: "1289020000000000000", type: 1, version: 1, token: "aW50ZXJhY3Rpb24" });
const COMMAND = JSON.stringify({
  id: "1289021843987214999",
  application_id: "1289020000000000000",
  type: 2,
  data: { id: "1289020000000000001", name: "weather", type: 1, options: [{ name: "city", type: 3, value: "Paris" }] },
  guild_id: "1289020000000000002",
  channel_id: "1289020000000000003",
  member: { user: { id: "80351110224678912", username: "nelly" } },
  token: "aW50ZXJhY3Rpb24tdG9rZW4",
  version: 1,
});

const stored = async (inbox: ClaimedInbox) => (await poll(inbox.agent)).messages;

describe("a Discord source", () => {
  it("answers a signed PING {\"type\":1} with 200 itself (no agent connected) and stores nothing", async () => {
    const inbox = await claimInbox();
    const app = await discordApp();
    const res = await postToSource(await discordSource(inbox, app), PING, await app.headers(PING));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ type: 1 });
    expect(await stored(inbox)).toEqual([]);
  });

  it("stores a signed slash command once, under the command's name and the interaction's id; Discord's repeat is a duplicate", async () => {
    const inbox = await claimInbox();
    const app = await discordApp();
    const path = await discordSource(inbox, app);
    const headers = await app.headers(COMMAND);
    const first = await postToSource(path, COMMAND, headers);
    expect(first.status, await first.clone().text()).toBe(200);
    const answer = (await first.json()) as { queued: boolean; id: number };
    expect(answer.queued).toBe(true);
    const again = await postToSource(path, COMMAND, await app.headers(COMMAND));
    expect(await again.json()).toEqual({ queued: true, id: answer.id, duplicate: true });
    const messages = await stored(inbox);
    expect(messages.map((m) => m.id)).toEqual([answer.id]);
    expect(new TextDecoder().decode(frameBytes(messages[0]!))).toBe(COMMAND);
    expect(messages[0]!.headers).toMatchObject({
      "x-clawrelay-source": "discord",
      "x-clawrelay-event": "weather",
      "x-clawrelay-delivery": "1289021843987214999",
      "x-signature-timestamp": headers["x-signature-timestamp"],
    });
  });

  it("files a button press (type 3) as interaction.message_component", async () => {
    const inbox = await claimInbox();
    const app = await discordApp();
    const body = JSON.stringify({ id: "1289021843987215000", application_id: "1", type: 3, data: { custom_id: "approve", component_type: 2 }, token: "t", version: 1 });
    expect((await postToSource(await discordSource(inbox, app), body, await app.headers(body))).status).toBe(200);
    expect((await stored(inbox))[0]!.headers).toMatchObject({ "x-clawrelay-event": "interaction.message_component", "x-clawrelay-delivery": "1289021843987215000" });
  });

  it("refuses with 401 (as Discord requires) a missing, malformed, tampered or other key's signature, a PING included; nothing stored", async () => {
    const inbox = await claimInbox();
    const app = await discordApp();
    const other = await discordApp();
    const path = await discordSource(inbox, app);
    const good = await app.headers(COMMAND);
    const cases: [Record<string, string>, string, string][] = [
      [{ "content-type": "application/json" }, COMMAND, "missing_signature"],
      [{ ...good, "x-signature-ed25519": "abcd" }, COMMAND, "invalid_signature_header"],
      [good, COMMAND.replace("Paris", "Lyon!"), "invalid_signature"],
      [await other.headers(COMMAND), COMMAND, "invalid_signature"],
      [await other.headers(PING), PING, "invalid_signature"],
    ];
    for (const [headers, body, code] of cases) {
      const res = await postToSource(path, body, headers);
      expect(res.status, code).toBe(401);
      expect(await errorCode(res)).toBe(code);
    }
    expect(await stored(inbox)).toEqual([]);
  });

  it("refuses a signature over a timestamp more than 300 s old (a replay) with 401, the PING too", async () => {
    const inbox = await claimInbox();
    const app = await discordApp();
    const path = await discordSource(inbox, app);
    const stale = nowSec() - 301;
    for (const body of [COMMAND, PING]) {
      const res = await postToSource(path, body, await app.headers(body, stale));
      expect(res.status).toBe(401);
      expect(await errorCode(res)).toBe("timestamp_out_of_range");
    }
    expect(await stored(inbox)).toEqual([]);
  });

  it("is added only with the application's public key: 64 hex digits, never made by the relay", async () => {
    const inbox = await claimInbox();
    const add = (body: Record<string, unknown>) => signedFetch(inbox.agent, "POST", `/inbox/${inbox.agent.id}/sources`, body);
    const neutralPoint = `01${"0".repeat(62)}`;
    for (const secret of [undefined, "1289020000000000000", "z".repeat(64), neutralPoint]) {
      const body = { name: "d", kind: "discord", ...(secret !== undefined ? { secret } : {}) };
      const res = await add(body);
      expect(res.status).toBe(400);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe("invalid_source");
      expect(error.message).toMatch(/Public Key/);
    }
  });
});
