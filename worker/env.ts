// Bindings of the Worker (wrangler.toml).
import type { Inbox } from "./inbox.ts";

export interface Env {
  INBOX: DurableObjectNamespace<Inbox>;
  /** Hub used by inboxes whose claim names none; defaults to https://agentgram.chat. */
  DEFAULT_HUB_URL?: string;
}
