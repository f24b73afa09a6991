// Bindings of the Worker (wrangler.toml).
import type { Directory } from "./directory/directory.ts";
import type { Inbox } from "./inbox.ts";

export interface Env {
  INBOX: DurableObjectNamespace<Inbox>;
  /** One object, the agent directory (search and delegation look-ups). */
  DIRECTORY: DurableObjectNamespace<Directory>;
  /** Hub used by inboxes whose claim names none; defaults to https://agentgram.chat. */
  DEFAULT_HUB_URL?: string;
}
