// Bindings of the Worker (wrangler.toml).
import type { Directory } from "./directory/directory.ts";
import type { EmbeddingsBinding } from "./directory/semantic-index.ts";
import type { AdmissionEnv } from "./access/admission.ts";
import type { Inbox } from "./inbox.ts";

/** The CLAWRELAY_ADMISSION settings (admission.ts) come as vars and a secret. */
export interface Env extends AdmissionEnv {
  INBOX: DurableObjectNamespace<Inbox>;
  /** One object, the agent directory (search and delegation look-ups). */
  DIRECTORY: DurableObjectNamespace<Directory>;
  /** Workers AI, when the deployment binds it: the directory then ranks hybrid (lexical + embeddings). */
  AI?: EmbeddingsBinding;
  /** The embeddings model (default @cf/baai/bge-small-en-v1.5). */
  EMBEDDING_MODEL?: string;
  /** A secret (wrangler secret put RECEIPT_KEY_SECRET): receipt keys are stored sealed with it. */
  RECEIPT_KEY_SECRET?: string;
  /** Hub used by inboxes whose claim names none; defaults to https://agentgram.chat. */
  DEFAULT_HUB_URL?: string;
}
