// Keeps the linked credentials file (settings.hub_credentials) and the relay on the same, newest hub
// token while the agent runs. The hub keeps one token per agent and a refresh by anyone ends the
// others, so two clients that each refresh log each other out; with one shared token neither has to.
// Newer = expires later (the hub mints every token with a 24 h life). Both directions:
// - the relay's token (hub_token frames) is newer than the file's → the file is rewritten (atomically,
//   every other field kept), so the BotCord CLI or a skill script picks it up instead of refreshing;
// - the file changes to a token newer than the relay's (the user's client refreshed after all) → it is
//   sent up, and the relay uses it from then on.
// The file is watched (fs.watch on its directory, and a stat poll every couple of seconds for systems
// and editors where watching misses a change). The token is never logged. Tokens are protocol's HubToken
// (expiresAtMs) throughout; the hub_token frame's unix seconds are converted in hub-side.ts, where the
// frames are. Used by hub-side.ts; covered by test/node/token-sync.test.ts.
import { existsSync, statSync, watch } from "node:fs";
import type { FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import { expiresAtSec, newerHubToken } from "../../protocol/index.ts";
import type { HubToken } from "../../protocol/index.ts";
import type { Logger } from "../logger.ts";
import type { HubCredentialsLink } from "../settings.ts";
import { readLinkedFile, sameHub, writeLinkedToken } from "./linked-credentials.ts";

export interface TokenSyncOptions {
  hubUrl: string;
  link: HubCredentialsLink | null;
  logger: Logger;
  /** Offers a token to the relay; false when there is no connection to say it on (offered again on the next). */
  sendUp(token: HubToken): boolean;
  /** The newest token known changed (the hub watch signs in with it). */
  onNewest?(token: HubToken): void;
  /** How often the file is looked at besides watching (default 2000 ms). */
  pollMs?: number;
  /** false: the poll alone (tests of the fallback). */
  watch?: boolean;
  now?: () => number;
}

export interface TokenSyncStatus {
  path: string;
  format: string;
  /** ms: when the file was last rewritten with the relay's token, and when its token was last sent up. */
  last_written_at: number | null;
  last_sent_at: number | null;
  error: string | null;
}

const DEBOUNCE_MS = 50;

export class TokenSync {
  private relayToken: HubToken | null = null;
  private fileToken: HubToken | null = null;
  private watcher: FSWatcher | null = null;
  private readonly poll: NodeJS.Timeout | null = null;
  private debounce: NodeJS.Timeout | null = null;
  private stamp = "";
  private closed = false;
  private readonly state: TokenSyncStatus | null;
  private readonly now: () => number;
  private readonly options: TokenSyncOptions;

  constructor(options: TokenSyncOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    const link = options.link;
    this.state = link ? { path: link.path, format: link.format, last_written_at: null, last_sent_at: null, error: null } : null;
    if (!link) return;
    this.stamp = this.fileStamp();
    this.readFile();
    try {
      if (options.watch !== false) {
        this.watcher = watch(dirname(link.path), { persistent: false }, (_event, name) => {
          if (name === null || name === basename(link.path)) this.soon();
        });
        this.watcher.on("error", () => this.stopWatching());
      }
    } catch {
      this.watcher = null; // the poll alone then
    }
    this.poll = setInterval(() => {
      const stamp = this.fileStamp();
      if (stamp !== this.stamp) this.soon();
    }, options.pollMs ?? 2000);
    this.poll.unref();
  }

  /** The newest valid token known, from the relay or the file. */
  newest(): HubToken | null {
    const valid = (t: HubToken | null) => (t && t.expiresAtMs > this.now() ? t : null);
    return newerHubToken(valid(this.relayToken), valid(this.fileToken));
  }

  status(): TokenSyncStatus | null {
    return this.state ? { ...this.state } : null;
  }

  /** A hub_token frame from the relay: its token, which the file follows when it is newer. */
  fromRelay(token: HubToken): void {
    const before = this.newest();
    this.relayToken = token;
    // Decide on the file as it is now, not as last seen (a change the watch has not reported yet).
    if (this.options.link) this.readFile();
    this.reconcile();
    this.announce(before);
  }

  /** A new connection to the relay: offer the file's token if it is newer than what the relay last said. */
  relayConnected(): void {
    if (this.options.link) this.readFile();
    this.reconcile();
  }

  close(): void {
    this.closed = true;
    this.stopWatching();
    if (this.poll) clearInterval(this.poll);
    if (this.debounce) clearTimeout(this.debounce);
  }

  private stopWatching(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  private fileStamp(): string {
    try {
      const s = statSync(this.options.link!.path);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return "absent";
    }
  }

  private soon(): void {
    if (this.closed || this.debounce) return;
    this.debounce = setTimeout(() => {
      this.debounce = null;
      this.stamp = this.fileStamp();
      const before = this.newest();
      if (this.readFile()) this.reconcile();
      this.announce(before);
    }, DEBOUNCE_MS);
    this.debounce.unref();
  }

  /** Reads the file's token; false when it cannot be used (gone, half written, another hub). */
  private readFile(): boolean {
    const link = this.options.link!;
    const state = this.state!;
    if (!existsSync(link.path)) {
      state.error = `${link.path} is gone`;
      return false;
    }
    try {
      const file = readLinkedFile(link);
      if (file.hubUrl && !sameHub(file.hubUrl, this.options.hubUrl)) {
        state.error = `${link.path} is for another hub (${file.hubUrl}); not kept in step`;
        this.fileToken = null;
        return false;
      }
      this.fileToken = file.token;
      state.error = null;
      return true;
    } catch (err) {
      // A client that writes in place may be half way through: the next change or poll reads it again.
      state.error = (err as Error).message;
      return false;
    }
  }

  private reconcile(): void {
    const link = this.options.link;
    const relay = this.relayToken;
    const file = this.fileToken;
    if (!link || !this.state || this.state.error) return;
    if (relay && (!file || relay.expiresAtMs > file.expiresAtMs) && relay.expiresAtMs > this.now()) {
      try {
        writeLinkedToken(link, relay);
        this.fileToken = relay;
        this.stamp = this.fileStamp();
        this.state.last_written_at = this.now();
        this.options.logger.info("hub token: credentials file now holds the relay's token", { path: link.path, expires_at: expiresAtSec(relay) });
      } catch (err) {
        this.state.error = (err as Error).message;
        this.options.logger.warn("hub token: cannot update the credentials file", { path: link.path, error: this.state.error });
      }
      return;
    }
    if (file && (!relay || file.expiresAtMs > relay.expiresAtMs) && file.expiresAtMs > this.now()) {
      if (!this.options.sendUp(file)) return;
      // The relay takes a later expiry; were its own newer after all, it answers with it (fromRelay).
      this.relayToken = file;
      this.state.last_sent_at = this.now();
      this.options.logger.info("hub token: offered the credentials file's newer token to the relay", { path: link.path, expires_at: expiresAtSec(file) });
    }
  }

  private announce(before: HubToken | null): void {
    const after = this.newest();
    if (after && after.token !== before?.token) this.options.onNewest?.(after);
  }
}
