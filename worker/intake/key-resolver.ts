// Finds a sender's signing key: keys registered on this relay first (the sender's own inbox), then the
// inbox's hub. Answers are cached briefly so the hub is not asked for every message, and concurrent
// look-ups of the same key share one request.
import type { KeyRecord } from "../../protocol/index.ts";

export const KEY_CACHE_TTL_MS = 5 * 60_000;
export const MISSING_KEY_CACHE_TTL_MS = 30_000;
const MAX_CACHED_KEYS = 5000;

export interface KeySource {
  /** Keys held by the sender's inbox on this relay; null when the sender has no inbox here. */
  relay: (agentId: string, keyId: string) => Promise<KeyRecord | null>;
  hub: (agentId: string, keyId: string) => Promise<KeyRecord | null>;
}

export interface ResolvedKey {
  record: KeyRecord | null;
  /** Where it came from: a relay-held key means the sender has an inbox on this relay. */
  source: "relay" | "hub" | null;
}

export class KeyResolver {
  private readonly cache = new Map<string, { value: ResolvedKey; until: number }>();
  private readonly pending = new Map<string, Promise<ResolvedKey>>();

  private readonly sources: KeySource;

  constructor(sources: KeySource) {
    this.sources = sources;
  }

  async resolve(agentId: string, keyId: string, nowMs: number): Promise<ResolvedKey> {
    const cacheKey = `${agentId}/${keyId}`;
    const cached = this.cache.get(cacheKey);
    if (cached && cached.until > nowMs) return cached.value;
    let lookup = this.pending.get(cacheKey);
    if (!lookup) {
      lookup = this.lookUp(agentId, keyId).finally(() => this.pending.delete(cacheKey));
      this.pending.set(cacheKey, lookup);
    }
    const value = await lookup;
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear();
    this.cache.set(cacheKey, { value, until: nowMs + (value.record ? KEY_CACHE_TTL_MS : MISSING_KEY_CACHE_TTL_MS) });
    return value;
  }

  /** Drops cached answers, e.g. after the inbox's hub URL changed. */
  clear(): void {
    this.cache.clear();
  }

  private async lookUp(agentId: string, keyId: string): Promise<ResolvedKey> {
    const local = await this.sources.relay(agentId, keyId);
    if (local) return { record: local, source: "relay" };
    const remote = await this.sources.hub(agentId, keyId);
    return { record: remote, source: remote ? "hub" : null };
  }
}
