// Bindings of the Worker (wrangler.toml), and what one object may ask another over RPC. The objects'
// calls are written here as interfaces (the classes implement them) so that the bindings do not import
// the classes, which import the bindings.
import type { KeyRecord } from "../protocol/index.ts";
import type { AdmissionEnv } from "./access/admission.ts";
import type { AgentCard } from "./directory/card.ts";
import type { DirectoryStats } from "./directory/index-stats.ts";
import type { SearchResult } from "./directory/search-index.ts";
import type { EmbeddingsBinding } from "./directory/embeddings/semantic-index.ts";
import type { SiblingReceipt, SiblingResult } from "./intake/sibling-receipts.ts";
import type { SocketTimingVars } from "./delivery/socket-timings.ts";
import type { RpcResult } from "./rpc-result.ts";

/** What the edge, the directory and the other inboxes of this relay call on an inbox (inbox.ts). */
export interface InboxRpc extends Rpc.DurableObjectBranded {
  /** A key this inbox's agent registered here (its keys and its receipt key); null if unknown. */
  lookupKey(keyId: string): Promise<KeyRecord | null>;
  /** Whether this inbox is claimed and `publicKey` may act for it (the directory asks). */
  authorises(publicKey: string): Promise<{ claimed: boolean; allowed: boolean; admittedByToken: boolean }>;
  /** Stores receipts other inboxes of this relay signed for this agent (trusted: relay-internal). */
  acceptSiblingReceipts(receipts: SiblingReceipt[]): Promise<SiblingResult[]>;
}

/** What the directory's routes call on the one Directory object (directory/directory.ts). */
export interface DirectoryRpc extends Rpc.DurableObjectBranded {
  publish(card: AgentCard, signedAt: number): Promise<RpcResult<{ created: boolean }>>;
  release(name: string, agentId: string): Promise<RpcResult<void>>;
  card(name: string): Promise<AgentCard | null>;
  search(query: string, limit: number): Promise<SearchResult>;
  indexStats(): Promise<DirectoryStats>;
}

/** The CLAWRELAY_ADMISSION settings (admission.ts) come as vars and a secret; tests shorten socket timings by vars (socket-timings.ts). */
export interface Env extends AdmissionEnv, SocketTimingVars {
  INBOX: DurableObjectNamespace<InboxRpc>;
  /** One object, the agent directory (search and delegation look-ups). */
  DIRECTORY: DurableObjectNamespace<DirectoryRpc>;
  /**
   * Workers AI (or, locally, the model beside workerd behind the same interface): the directory embeds
   * every card and ranks hybrid (lexical + embeddings) once the model has a floor (directory/embeddings/card-embeddings.ts).
   */
  AI?: EmbeddingsBinding;
  /** The embeddings model (default PRODUCTION_EMBEDDING_MODEL in directory/embeddings/embedding-models.ts, @cf/baai/bge-m3). */
  EMBEDDING_MODEL?: string;
  /**
   * The operator's calibrated floor for EMBEDDING_MODEL, a cosine in 0..1 (npm run eval:search --
   * --calibrate); wins over the table in directory/embeddings/embedding-models.ts. Unset with a model the table has no floor
   * for, search stays lexical.
   */
  EMBEDDING_FLOOR?: string;
  /** A secret (wrangler secret put RECEIPT_KEY_SECRET): receipt keys are stored sealed with it. */
  RECEIPT_KEY_SECRET?: string;
  /** Hub used by inboxes whose claim names none; defaults to https://agentgram.chat. */
  DEFAULT_HUB_URL?: string;
  /**
   * The webhook era's bridge (hub/webhook-era/hub-bridge.ts), whole ms: how long a hub record may wait
   * for its webhook body (default 30000), and how long after a body the history is first read (default
   * 1500). Left unset in production; the end-to-end tests shorten the grace.
   */
  HUB_BRIDGE_GRACE_MS?: string;
  HUB_BRIDGE_FIRST_LOOK_MS?: string;
}
