// `clawrelay doctor`'s hub checks: the linked credentials file (there, private, for this hub), and what
// other clients of the agent did — took the hub token (the relay's token_lost) or pull this inbox too
// (the hub's history, read with a token already held: doctor never makes one, which would end theirs).
// Used by doctor.ts; covered by test/node/hub-link.test.ts.
import { existsSync } from "node:fs";
import { likelyOtherPulls, otherClientLines, readHistory } from "../hub/hub-others.ts";
import { readLinkedFile, sameHub } from "../hub/linked-credentials.ts";
import { relayHubView } from "../hub/relay-hub.ts";
import type { RelayHubView } from "../hub/relay-hub.ts";
import { sessionFor } from "../hub/token-sources.ts";
import { fileMode } from "../settings.ts";
import type { AgentSettings } from "../settings.ts";
import type { Level } from "./doctor-gateway.ts";

type Add = (level: Level, what: string, fix?: string) => void;

function credentialsCheck(settings: AgentSettings, add: Add): void {
  const link = settings.hub_credentials;
  if (!link) return;
  if (!existsSync(link.path)) return add("WARN", `hub credentials file ${link.path} is gone: the agent cannot keep it on the relay's hub token`, "run clawrelay init --import-botcord --force (or --import-agentline) to link the current one");
  try {
    const file = readLinkedFile(link);
    if (file.hubUrl && !sameHub(file.hubUrl, settings.hub_url)) {
      return add("WARN", `hub credentials file ${link.path} is for ${file.hubUrl}, this inbox's hub is ${settings.hub_url}: not kept in step`, "import the identity of this hub, or set hub_url in the settings to that hub");
    }
    const mode = fileMode(link.path);
    if (mode & 0o077) return add("WARN", `hub credentials file ${link.path} is readable by others (mode ${mode.toString(8)})`, `chmod 600 ${link.path}`);
    add("OK", `hub credentials file ${link.path} (${link.format}) is kept on the relay's hub token while the agent runs`);
  } catch (err) {
    add("WARN", `hub credentials file ${link.path} cannot be read: ${(err as Error).message}`);
  }
}

export async function hubChecks(settings: AgentSettings, add: Add): Promise<void> {
  credentialsCheck(settings, add);
  if (!settings.hub) return;
  let view: RelayHubView | null = null;
  try {
    view = await relayHubView(settings);
  } catch (err) {
    return add("WARN", `the relay's hub link cannot be read: ${(err as Error).message}`);
  }
  let others = null;
  if (view.mode === "pull") {
    const session = await sessionFor(settings, { mint: "never", relayView: async () => view, onKeyId: () => {}, note: () => {} });
    try {
      const records = await readHistory(session.client);
      others = likelyOtherPulls(records, { agentId: settings.agent_id, recentPulled: view.recent_pulled ?? [], registeredAt: settings.hub.registered_at, now: Date.now() });
      if (!others) add("OK", "no sign of another client pulling this inbox at the hub (its history of the last 24 h)");
    } catch (err) {
      add("OK", `another client pulling this inbox: not checked (${(err as Error).message})`);
    }
  }
  const lines = otherClientLines(view, others, settings.hub_credentials?.path ?? null);
  for (let i = 0; i < lines.length; i += 2) add("WARN", lines[i]!, lines[i + 1]?.replace(/^\s*fix: /, ""));
  if (!view.token_lost?.count) add("OK", view.token ? "the relay's hub token has not been taken by another client" : "the relay holds no hub token yet (it gets one when it first pulls or signs in)");
}
