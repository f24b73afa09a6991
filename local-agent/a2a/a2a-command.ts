// `clawrelay a2a enable|status|disable`: publishes the gateway's A2A channel through the inbox (the
// relay's PUT/GET/DELETE /inbox/{id}/a2a, each signed with the agent's key as the sources calls are).
// enable reads channels.a2a from openclaw.json (a2a-config.ts), refuses while the channel is off, sends
// each resolvable peer's token as its SHA-256 with the relay's deadline (just above replyTimeoutMs) and,
// when the gateway answers, its Agent Card (served while the agent is offline), and prints the card's and
// the endpoint's URLs; status shows the relay's view and each peer whose token cannot be resolved here
// (not sent, so refused at the relay); disable turns it off. Returns text; cli.ts prints it. Covered by
// test/node/live-gateway.e2e.test.ts.
import { A2A_CARD_MAX_BYTES, A2A_ENDPOINT_PATH } from "../../protocol/index.ts";
import type { A2aSettingsBody, A2aView } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { gatewaySettingsFrom, readOpenClawConfig } from "../gateway/openclaw-config.ts";
import type { Environment } from "../gateway/openclaw-config.ts";
import { inboxCall } from "../relay/messages.ts";
import type { InboxAccess } from "../relay/messages.ts";
import { a2aChannelFrom, channelDeadlineSec, peerHashes } from "./a2a-config.ts";
import type { A2aChannel } from "./a2a-config.ts";

export type A2aAction = "enable" | "status" | "disable";

export interface A2aCommand {
  action: A2aAction;
  access: InboxAccess;
  /** The environment OpenClaw's config is looked up in (OPENCLAW_CONFIG_PATH set by --openclaw-config). */
  env: Environment;
  json: boolean;
  /** How long to wait for the gateway's card (tests shorten it). */
  cardTimeoutMs?: number;
}

/** The inbox's public A2A URLs: where clients find the card, and where they call. */
export function a2aUrls(access: InboxAccess): { card: string; endpoint: string; origin: string } {
  const origin = `${access.relayUrl.replace(/\/+$/, "")}/inbox/${access.agentId}`;
  return { card: `${origin}/.well-known/agent-card.json`, endpoint: `${origin}${A2A_ENDPOINT_PATH}`, origin };
}

interface ReadChannel {
  channel: A2aChannel;
  path: string | null;
  gatewayPort: number;
}

function readChannel(env: Environment): ReadChannel {
  const file = readOpenClawConfig(env);
  const gateway = gatewaySettingsFrom(file.config, file.env, {}, file.exists ? file.location!.path : null);
  return { channel: a2aChannelFrom(file.config, file.env), path: gateway.configPath, gatewayPort: gateway.port };
}

/** The gateway's own Agent Card, when it answers one; null otherwise (the relay stores one at the first live fetch). */
async function gatewayCard(port: number, timeoutMs: number): Promise<Record<string, unknown> | null> {
  try {
    const answer = await fetch(`http://127.0.0.1:${port}/.well-known/agent-card.json`, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await answer.text();
    if (!answer.ok || text.length > A2A_CARD_MAX_BYTES) return null;
    const card: unknown = JSON.parse(text);
    return typeof card === "object" && card !== null && !Array.isArray(card) ? (card as Record<string, unknown>) : null;
  } catch {
    // No gateway running, or not JSON: the card is optional (the relay fetches it live when asked).
    return null;
  }
}

function unresolvedLines(channel: A2aChannel): string[] {
  return channel.peers.filter((p) => p.problem !== null).map((p) => `  peer "${p.name}" is refused at the relay: ${p.problem}`);
}

async function enable(command: A2aCommand): Promise<string> {
  const { channel, path, gatewayPort } = readChannel(command.env);
  const where = path ?? "openclaw.json (none found)";
  if (!channel.enabled) {
    throw new AgentError("a2a_channel_off", `the gateway's A2A channel is off: channels.a2a is missing or has enabled: false in ${where}. Turn it on — channels: { a2a: { enabled: true, peers: { NAME: { token: "\${A2A_NAME_TOKEN}" } } } } (OpenClaw's docs/channels/a2a.md) — restart the gateway, then run clawrelay a2a enable again`);
  }
  const peers = await peerHashes(channel);
  if (peers.length === 0) {
    throw new AgentError("a2a_no_peers", [`no peer of channels.a2a in ${where} has a token clawrelay can resolve, so the relay would refuse every caller:`, ...unresolvedLines(channel), "  add channels.a2a.peers.<name>.token (a strong secret per peer), then run clawrelay a2a enable again"].join("\n"));
  }
  const card = await gatewayCard(gatewayPort, command.cardTimeoutMs ?? 3000);
  const body: A2aSettingsBody = { peers, deadline_sec: channelDeadlineSec(channel), ...(card ? { card } : {}) };
  const answer = (await inboxCall(command.access, "PUT", "/a2a", "cannot publish the A2A channel", body)).body as { a2a: A2aView; card_url?: string; endpoint_url?: string };
  const own = a2aUrls(command.access);
  // The relay's own words for its URLs (it knows its public origin), else the settings' relay URL.
  const urls = { ...own, card: answer.card_url ?? own.card, endpoint: answer.endpoint_url ?? own.endpoint };
  if (command.json) return JSON.stringify(answer, null, 2);
  return [
    `A2A published through the inbox for ${peers.length} peer(s): ${peers.map((p) => p.name).join(", ")}`,
    `  Agent Card: ${urls.card}`,
    `  Endpoint:   ${urls.endpoint}`,
    "",
    `Calls wait up to ${body.deadline_sec} s for the gateway's reply (its replyTimeoutMs, ${channel.replyTimeoutMs} ms, plus ${body.deadline_sec - Math.ceil(channel.replyTimeoutMs / 1000)} s); a longer task comes back as the gateway's working task (poll it with GetTask).`,
    "Each caller's bearer token is checked at the relay (only the tokens' SHA-256 is kept there), then again by the gateway.",
    card ? "The gateway's card is stored at the relay: clients get it while this machine is offline too." : "The gateway did not answer its card now: the relay stores it the first time a client fetches it while the agent runs.",
    `The relay rewrites the card's endpoint to the one above; channels.a2a.advertisedUrl may stay unset (set it to ${urls.origin} to have the gateway say so itself).`,
    ...(unresolvedLines(channel).length > 0 ? ["", "Not sent (so refused at the relay):", ...unresolvedLines(channel)] : []),
  ].join("\n");
}

async function status(command: A2aCommand): Promise<string> {
  const view = (await inboxCall(command.access, "GET", "/a2a", "cannot read the A2A settings")).body as unknown as A2aView;
  let local: ReadChannel | null = null;
  let localProblem: string | null = null;
  try {
    local = readChannel(command.env);
  } catch (err) {
    // A broken openclaw.json: the relay's view is still worth showing.
    localProblem = (err as Error).message;
  }
  if (command.json) return JSON.stringify({ ...view, unresolved_peers: local?.channel.peers.filter((p) => p.problem !== null).map((p) => ({ name: p.name, problem: p.problem })) ?? [] }, null, 2);
  const urls = a2aUrls(command.access);
  const lines = view.enabled
    ? [`A2A is published at ${urls.endpoint} (card: ${urls.card})`, `  peers:    ${view.peers.join(", ") || "none"}`, `  deadline: ${view.deadline_sec} s`, `  card:     ${view.card_stored_at ? `stored ${new Date(view.card_stored_at).toISOString()}` : "none stored yet"}`]
    : ["A2A is not published through this inbox (clawrelay a2a enable publishes it)"];
  if (view.last_refusal) lines.push(`  last refused call: ${new Date(view.last_refusal.at).toISOString()} ${view.last_refusal.code}: ${view.last_refusal.message}`);
  if (localProblem) lines.push(`openclaw.json could not be read: ${localProblem}`);
  if (local) {
    if (!local.channel.enabled) lines.push(`The gateway's channel is off here (channels.a2a is missing or has enabled: false in ${local.path ?? "openclaw.json"}).`);
    lines.push(...unresolvedLines(local.channel));
    const missing = local.channel.peers.filter((p) => p.token !== null && view.enabled && !view.peers.includes(p.name)).map((p) => p.name);
    if (missing.length > 0) lines.push(`  peers in openclaw.json the relay does not know: ${missing.join(", ")} (run clawrelay a2a enable again)`);
  }
  return lines.join("\n");
}

export async function runA2aCommand(command: A2aCommand): Promise<string> {
  if (command.action === "enable") return enable(command);
  if (command.action === "status") return status(command);
  const answer = (await inboxCall(command.access, "DELETE", "/a2a", "cannot turn the A2A channel off")).body;
  return command.json ? JSON.stringify(answer) : "A2A is no longer published through this inbox: the relay forgot the peers' hashes and the card (calls now get 404 a2a_not_enabled)";
}
