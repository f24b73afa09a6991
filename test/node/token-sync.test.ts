// The running agent's token sync (local-agent/hub/token-sync.ts) on real files: the relay's token and
// the linked BotCord credentials file kept on the newest of the two, in both directions, with nothing
// written when they are equal, a file of another hub left alone, the file's changes seen by watching and,
// without watching, by the poll — and the token never logged.
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newIdentity } from "../../local-agent/identity.ts";
import { expiresAtSec, hubTokenFromSec } from "../../protocol/index.ts";
import type { HubToken } from "../../protocol/index.ts";
import { TokenSync } from "../../local-agent/hub/token-sync.ts";
import type { TokenSyncOptions } from "../../local-agent/hub/token-sync.ts";
import { createLogger } from "../../local-agent/logger.ts";
import { waitUntil } from "../support/node/stack.ts";

const HUB = "https://api.botcord.chat";
const nowSec = () => Math.floor(Date.now() / 1000);
const syncs: TokenSync[] = [];
let dir = "";
afterEach(async () => {
  for (const sync of syncs.splice(0)) sync.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = "";
});

/** A BotCord credentials file holding `token`, and a TokenSync on it recording what it sends up and logs. */
async function setUp(token: HubToken | null, options: Partial<TokenSyncOptions> = {}, hubUrl = HUB) {
  dir = realpathSync(await mkdtemp(join(tmpdir(), "clawrelay-sync-")));
  mkdirSync(join(dir, "credentials"));
  const identity = await newIdentity();
  const path = join(dir, "credentials", `${identity.agentId}.json`);
  const data = { version: 1, hubUrl, agentId: identity.agentId, keyId: "k_0123456789ab", privateKey: identity.privateKey, displayName: "Botty", runtime: "openclaw-acp", ...(token ? { token: token.token, tokenExpiresAt: expiresAtSec(token) } : {}) };
  writeFileSync(path, JSON.stringify(data, null, 2), { mode: 0o600 });
  const sent: HubToken[] = [];
  const newest: HubToken[] = [];
  const logged: string[] = [];
  const sync = new TokenSync({
    hubUrl: HUB,
    link: { path, format: "botcord" },
    logger: createLogger({ write: (line) => logged.push(line) }),
    sendUp: (t) => (sent.push(t), true),
    onNewest: (t) => newest.push(t),
    pollMs: 100,
    ...options,
  });
  syncs.push(sync);
  const file = () => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  return { path, sync, sent, newest, logged, file, data };
}

describe("token sync: relay → file", () => {
  it("a newer relay token is written into the file (atomically, every other field kept), nothing is sent up, the token is not logged", async () => {
    const { path, sync, sent, logged, file, data } = await setUp(hubTokenFromSec("file.old", nowSec() + 3600));
    const inode = statSync(path).ino;
    const expiresAtSecs = nowSec() + 86_400;
    sync.fromRelay(hubTokenFromSec("relay.newer", expiresAtSecs));
    expect(file()).toEqual({ ...data, token: "relay.newer", tokenExpiresAt: expiresAtSecs });
    expect(statSync(path).ino).not.toBe(inode);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(sent).toEqual([]);
    expect(sync.newest()?.token).toBe("relay.newer");
    expect(sync.status()).toMatchObject({ path, format: "botcord", error: null });
    expect(sync.status()?.last_written_at).not.toBeNull();
    expect(logged.join("\n")).toContain("credentials file now holds the relay's token");
    expect(logged.join("\n")).not.toContain("relay.newer");
  });

  it("the same token: nothing written, nothing sent", async () => {
    const token = hubTokenFromSec("same.token", nowSec() + 86_400);
    const { path, sync, sent } = await setUp(token);
    const before = statSync(path);
    sync.fromRelay(token);
    sync.relayConnected();
    expect(statSync(path).ino).toBe(before.ino);
    expect(statSync(path).mtimeMs).toBe(before.mtimeMs);
    expect(sent).toEqual([]);
  });

  it("a file of another hub is left alone", async () => {
    const { path, sync, sent } = await setUp(hubTokenFromSec("other.hub", nowSec() + 60), {}, "https://agentgram.chat");
    const before = readFileSync(path, "utf8");
    sync.fromRelay(hubTokenFromSec("relay.token", nowSec() + 86_400));
    expect(readFileSync(path, "utf8")).toBe(before);
    expect(sent).toEqual([]);
    expect(sync.status()?.error).toContain("is for another hub (https://agentgram.chat)");
    expect(sync.newest()?.token).toBe("relay.token");
  });
});

describe("token sync: file → relay", () => {
  it("a relay token older than the file's: the file wins, its token is sent up once, the file is not touched", async () => {
    const fileToken = hubTokenFromSec("file.newer", nowSec() + 86_400);
    const { path, sync, sent } = await setUp(fileToken);
    const before = readFileSync(path, "utf8");
    sync.fromRelay(hubTokenFromSec("relay.older", nowSec() + 600));
    expect(sent).toEqual([fileToken]);
    expect(readFileSync(path, "utf8")).toBe(before);
    expect(sync.newest()).toEqual(fileToken);
  });

  it("on connecting, a relay that said nothing yet is offered the file's token; not connected means offered again next time", async () => {
    let connected = false;
    const attempts: string[] = [];
    const fileToken = hubTokenFromSec("file.token", nowSec() + 3600);
    const { sync } = await setUp(fileToken, { sendUp: (t) => (attempts.push(t.token), connected) });
    sync.relayConnected();
    connected = true;
    sync.relayConnected();
    sync.relayConnected();
    expect(attempts).toEqual(["file.token", "file.token"]);
  });

  it("the file changes to a newer token (the user's client refreshed): watched and sent up", async () => {
    const { path, sync, sent, newest, data } = await setUp(hubTokenFromSec("file.old", nowSec() + 3600));
    sync.fromRelay(hubTokenFromSec("file.old", nowSec() + 3600));
    // As BotCord's CLI writes it: in place, not atomically.
    const expiresAtSecs = nowSec() + 86_400;
    writeFileSync(path, JSON.stringify({ ...data, token: "cli.refreshed", tokenExpiresAt: expiresAtSecs }, null, 2));
    await waitUntil("the refreshed token sent up", () => sent.length === 1);
    expect(sent[0]).toEqual(hubTokenFromSec("cli.refreshed", expiresAtSecs));
    expect(newest.at(-1)?.token).toBe("cli.refreshed");
    expect(sync.status()?.last_sent_at).not.toBeNull();
  });

  it("without fs.watch the poll sees the change", async () => {
    const { path, sent, data } = await setUp(hubTokenFromSec("file.old", nowSec() + 3600), { watch: false });
    writeFileSync(path, JSON.stringify({ ...data, token: "polled", tokenExpiresAt: nowSec() + 86_400 }));
    await waitUntil("the poll to send the new token up", () => sent.some((t) => t.token === "polled"));
  });

  it("an expired file token is neither sent up nor taken as the newest", async () => {
    const { sync, sent } = await setUp(hubTokenFromSec("expired", nowSec() - 10));
    sync.relayConnected();
    expect(sent).toEqual([]);
    expect(sync.newest()).toBeNull();
  });
});
