// A sender's credentials kept with a source event (issue 32, item 11): the headers protocol/credential-
// headers.ts names (Authorization, Cookie, API keys…). A source that delivers to the gateway keeps none
// (they would never be posted: the gateway gets the headers of interest only). A source with a forward
// target keeps them for its app, sealed with secret-box.ts under the operator's RECEIPT_KEY_SECRET when it
// is set (bound to the inbox: a sealed value copied into another inbox does not open), in clear when it is
// not — and the owner's queue summary says which (`credentials`), for doctor and status to tell.
// Opening is async (WebCrypto) and the WebSocket pump is not: an opened request is kept in memory (the
// last OPENED_KEPT), the pump sends a frame only once its request is open (delivery-frame.ts framesReady)
// and is run again, once, when the openings it started have ended. Used by inbox.ts, source-intake.ts and
// source-live.ts; covered by test/worker/kept-credentials.test.ts.
import { RelayError } from "../../protocol/index.ts";
import type { StoredRequest } from "../../protocol/index.ts";
import { openSecret, sealSecret } from "../access/secret-box.ts";
import { joinCredentials, parseKeptRequest, splitCredentials, withoutCredentials, withoutSealed } from "../storage/kept-request.ts";
import type { CredentialValue, KeptRequest } from "../storage/kept-request.ts";

/** How the relay keeps credentials for forward targets: "sealed" (RECEIPT_KEY_SECRET set) or "clear". */
export type CredentialKeeping = "sealed" | "clear";

/** Opened requests kept in memory: more than a window of frames (MAX_WINDOW), a few MB at most. */
const OPENED_KEPT = 256;

export interface KeptCredentialsDeps {
  agentId(): string;
  /** The operator's RECEIPT_KEY_SECRET, if set. */
  secret(): string | undefined;
  /** An opening ended: send what now can be (the inbox pumps its sockets). */
  opened(): void;
}

export class KeptCredentials {
  /** Opened requests by their sealed value (a replay's copy shares it); oldest first. */
  private readonly openedBySeal = new Map<string, StoredRequest>();
  private readonly opening = new Set<string>();
  /** Openings the pump started that have not ended yet, and whether one ended well since `opened` was last called. */
  private started = 0;
  private openedSincePump = false;

  private readonly deps: KeptCredentialsDeps;

  constructor(deps: KeptCredentialsDeps) {
    this.deps = deps;
  }

  keeping(): CredentialKeeping {
    return this.deps.secret() ? "sealed" : "clear";
  }

  /** The `request` column for a source event: no credentials when its source delivers to the gateway; sealed when the secret is set. */
  async storedJson(request: StoredRequest, forwards: boolean): Promise<string> {
    if (!forwards) return JSON.stringify(withoutCredentials(request));
    const secret = this.deps.secret();
    const { request: redacted, credentials } = splitCredentials(request);
    if (!secret || credentials.length === 0) return JSON.stringify(request);
    const sealed = await sealSecret(JSON.stringify(credentials), this.owner(), secret);
    return JSON.stringify({ ...redacted, sealed } satisfies KeptRequest);
  }

  /**
   * The request as sent, when it can be had at once; null while its credentials are being opened (the
   * opening is started here, and `opened` is called when it ends).
   */
  requestNow(json: string): StoredRequest | null {
    const kept = parseKeptRequest(json);
    if (kept.sealed === undefined) return kept;
    const opened = this.openedBySeal.get(kept.sealed);
    if (opened) return opened;
    if (!this.opening.has(kept.sealed)) {
      this.opening.add(kept.sealed);
      this.started += 1;
      this.open(kept, kept.sealed).then(
        () => {
          this.openedSincePump = true;
          this.pumpWhenAllOpen();
        },
        (err: unknown) => {
          console.error(`kept-credentials: opening a request of inbox ${this.deps.agentId()} failed`, err);
          this.pumpWhenAllOpen();
        },
      );
    }
    return null;
  }

  /**
   * One pump for the openings a pump started, once the last of them ends: each pump reads the window's
   * rows again, so one per opening made a window of sealed events cost its square in rows read. None
   * when nothing opened (a failure alone would only start the same opening again).
   */
  private pumpWhenAllOpen(): void {
    this.started -= 1;
    if (this.started > 0 || !this.openedSincePump) return;
    this.openedSincePump = false;
    this.deps.opened();
  }

  /** The request as sent, its credentials opened (async callers: polling). */
  async request(json: string): Promise<StoredRequest> {
    const kept = parseKeptRequest(json);
    if (kept.sealed === undefined) return kept;
    return this.openedBySeal.get(kept.sealed) ?? this.open(kept, kept.sealed);
  }

  private async open(kept: KeptRequest, seal: string): Promise<StoredRequest> {
    let request: StoredRequest;
    try {
      const plain = await openSecret(seal, this.owner(), this.deps.secret(), "kept sender credentials", "credentials_unavailable");
      request = joinCredentials(kept, JSON.parse(plain) as CredentialValue[]);
    } catch (err) {
      if (!(err instanceof RelayError)) throw err;
      // The operator removed or changed the secret: the event still goes, without the credentials it
      // cannot open (the app answers as it would to a request without them); the relay's log says why.
      console.warn(`kept-credentials: inbox ${this.deps.agentId()}: ${err.message}; the event is forwarded without its credential headers`);
      request = withoutSealed(kept);
    } finally {
      this.opening.delete(seal);
    }
    this.openedBySeal.set(seal, request);
    for (const oldest of this.openedBySeal.keys()) {
      if (this.openedBySeal.size <= OPENED_KEPT) break;
      this.openedBySeal.delete(oldest);
    }
    return request;
  }

  /** What a seal is bound to: this inbox's kept credentials (secret-box.ts's associated data). */
  private owner(): string {
    return `${this.deps.agentId()} sender credentials`;
  }
}
