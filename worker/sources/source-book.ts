// An inbox's webhook sources: kept in its SQLite `sources` table (read once per object life, then held),
// their secrets sealed at rest when the Worker has RECEIPT_KEY_SECRET, their HMAC keys imported once and
// kept, their forward targets (read when a delivery frame is built), and the last refusal of each (in
// memory only: a refused request writes nothing). Used by inbox.ts and source-routes.ts; covered by
// test/worker/sources-*.test.ts.
import { RelayError } from "../../protocol/index.ts";
import { isSealed, openSecret, sealSecret } from "../access/secret-box.ts";
import { importHmacKey } from "./hmac.ts";
import { MAX_SOURCES } from "./source-config.ts";
import type { ForwardTarget, NewSource, SourceChange, SourceRefusal, StoredSecret, StoredSource } from "./source-config.ts";
import type { SourceKeys } from "./source-kinds.ts";
import { hashTokenSecret, hmacKeyBytes, mintSecret } from "./source-secrets.ts";
import type { HmacKey } from "./hmac.ts";

export interface SourceOwner {
  agentId(): string;
  /** The Worker's RECEIPT_KEY_SECRET, when the operator set one. */
  workerSecret(): string | undefined;
}

interface KeptKeys {
  updatedAt: number;
  keys: { key: HmacKey | string; until: number | null }[];
}

export class SourceBook {
  private readonly sql: SqlStorage;
  private readonly owner: SourceOwner;
  private sources: Map<string, StoredSource> | null = null;
  private readonly keyCache = new Map<string, KeptKeys>();
  private readonly refusals = new Map<string, SourceRefusal>();

  constructor(sql: SqlStorage, owner: SourceOwner) {
    this.sql = sql;
    this.owner = owner;
  }

  private all(): Map<string, StoredSource> {
    this.sources ??= new Map(
      this.sql.exec(`SELECT json FROM sources`).toArray().map((row) => {
        // A source stored before forward targets existed has none: its events go to the gateway.
        const source = { forward: null, ...(JSON.parse(String(row.json)) as Partial<StoredSource>) } as StoredSource;
        return [source.name, source];
      }),
    );
    return this.sources;
  }

  list(): StoredSource[] {
    return [...this.all().values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  get(name: string): StoredSource | null {
    return this.all().get(name) ?? null;
  }

  /** Where source `name`'s events go now and how (its policy), or null (the gateway, or a source removed since). */
  forwardTarget(name: string): ForwardTarget | null {
    const source = this.get(name);
    return source?.forward ? { ...source.forward, ...source.policy } : null;
  }

  private write(source: StoredSource): void {
    this.sql.exec(`INSERT OR REPLACE INTO sources (name, json) VALUES (?, ?)`, source.name, JSON.stringify(source));
    this.all().set(source.name, source);
  }

  /** A changed source: its keys are imported again on next use. */
  private save(source: StoredSource): void {
    this.write(source);
    this.keyCache.delete(source.name);
  }

  /** The secret to store: the given one, or one the relay makes (then also returned, to be shown once). */
  private secretFor(kind: StoredSource["kind"], given: string | null): { plain: string; minted: string | null } {
    const minted = given === null ? mintSecret(kind) : null;
    const plain = given ?? minted;
    if (plain === null) throw new Error(`a ${kind} source needs a given secret`);
    return { plain, minted };
  }

  private owned(name: string): string {
    return `${this.owner.agentId()} source ${name}`;
  }

  /** How a secret is kept: a token's hash; an HMAC secret sealed when the Worker has the secret. */
  private async stored(source: Pick<StoredSource, "name" | "kind">, secret: string): Promise<string> {
    if (source.kind === "token") return hashTokenSecret(secret);
    const workerSecret = this.owner.workerSecret();
    return workerSecret ? sealSecret(secret, this.owned(source.name), workerSecret) : secret;
  }

  /** Adds a source; `secret` is the one the relay made (shown once), null when the user gave it. */
  async add(input: NewSource, nowMs: number): Promise<{ source: StoredSource; secret: string | null }> {
    if (this.get(input.name)) {
      throw new RelayError(409, "source_exists", `this inbox already has a source "${input.name}": rotate its secret, change it, or remove it first`);
    }
    if (this.all().size >= MAX_SOURCES) throw new RelayError(409, "too_many_sources", `an inbox holds at most ${MAX_SOURCES} sources; remove one first`);
    const { plain, minted } = this.secretFor(input.kind, input.secret);
    const source: StoredSource = {
      name: input.name,
      kind: input.kind,
      subpath: input.subpath,
      forward: input.forward,
      ...(Object.keys(input.policy).length > 0 ? { policy: input.policy } : {}),
      ...(input.live_sec !== null ? { live_sec: input.live_sec } : {}),
      secrets: [{ value: await this.stored(input, plain), until: null }],
      created_at: nowMs,
      updated_at: nowMs,
    };
    this.save(source);
    return { source, secret: minted };
  }

  /** Rotates the secret, moves the sub-path and/or sets the target; the old secret keeps working for `graceSec`. */
  async change(source: StoredSource, change: SourceChange, nowMs: number): Promise<{ source: StoredSource; secret: string | null }> {
    let secrets = source.secrets;
    let minted: string | null = null;
    if (change.rotate) {
      const made = this.secretFor(source.kind, change.secret);
      minted = made.minted;
      const previous: StoredSecret[] = change.graceSec > 0 ? [{ value: source.secrets[0]!.value, until: nowMs + change.graceSec * 1000 }] : [];
      secrets = [{ value: await this.stored(source, made.plain), until: null }, ...previous];
    }
    const forward = change.forward === undefined ? source.forward : change.forward;
    const policy = change.policy ?? source.policy;
    const liveSec = change.liveSec === undefined ? (source.live_sec ?? null) : change.liveSec;
    const next: StoredSource = { ...source, secrets, subpath: change.subpath ?? source.subpath, forward, ...(policy ? { policy } : {}), live_sec: liveSec, updated_at: nowMs };
    this.save(next);
    return { source: next, secret: minted };
  }

  remove(name: string): boolean {
    const rows = this.sql.exec(`DELETE FROM sources WHERE name = ? RETURNING name`, name).toArray();
    this.all().delete(name);
    this.keyCache.delete(name);
    this.refusals.delete(name);
    return rows.length === 1;
  }

  /** The keys a request is verified with now: imported once per change of the source, not per request. */
  async keys(source: StoredSource, nowMs: number): Promise<SourceKeys> {
    let kept = this.keyCache.get(source.name);
    if (!kept || kept.updatedAt !== source.updated_at) {
      kept = { updatedAt: source.updated_at, keys: await Promise.all(source.secrets.map(async (s) => ({ key: await this.keyOf(source, s.value), until: s.until }))) };
      this.keyCache.set(source.name, kept);
      // A secret stored before the operator set RECEIPT_KEY_SECRET is sealed the first time it is used.
      if (this.owner.workerSecret() && source.kind !== "token" && source.secrets.some((s) => !isSealed(s.value))) await this.reseal(source);
    }
    const live = kept.keys.filter((k) => k.until === null || k.until > nowMs).map((k) => k.key);
    return source.kind === "token" ? { kind: "hash", hashes: live as string[] } : { kind: "hmac", keys: live as HmacKey[] };
  }

  private async keyOf(source: StoredSource, value: string): Promise<HmacKey | string> {
    if (source.kind === "token") return value;
    const plain = await openSecret(value, this.owned(source.name), this.owner.workerSecret(), `source "${source.name}" secret`, "source_secret_unavailable");
    return importHmacKey(hmacKeyBytes(source.kind, plain));
  }

  private async reseal(source: StoredSource): Promise<void> {
    const workerSecret = this.owner.workerSecret()!;
    const owner = this.owned(source.name);
    const secrets = await Promise.all(source.secrets.map(async (s) => ({ ...s, value: isSealed(s.value) ? s.value : await sealSecret(s.value, owner, workerSecret) })));
    // The same secrets, only sealed: the imported keys stay good.
    this.write({ ...source, secrets });
  }

  noteRefusal(name: string, refusal: SourceRefusal): void {
    this.refusals.set(name, refusal);
  }

  lastRefusal(name: string): SourceRefusal | null {
    return this.refusals.get(name) ?? null;
  }
}
