// The webhook-era hub's endpoint routes, as `hub register` (step 4, webhook mode) and `hub status` use
// them. That generation of the hub code (and the Agentline service) pushes each message to a registered
// URL: registering the inbox's hooks URL makes the hub probe it twice (teaching the relay the hub's
// prefix), and a probe test reports both paths. Today's hub code still takes POST …/endpoints and
// probes, but marks the answer deprecated and pushes nothing; a hub without the routes answers 404 —
// both mean pull. Nothing here is needed for today's hub. Used by hub-link.ts and hub-status.ts;
// covered by test/node/hub-endpoint.test.ts, test/node/hub-link.test.ts and test/node/hub-bind.test.ts.
import { hubAgentPath, hubDetail, hubJson, isHubSuccess } from "../../../protocol/index.ts";
import type { HubAnswer, HubClient } from "../../../protocol/index.ts";
import { AgentError } from "../../errors.ts";
import type { AgentSettings } from "../../settings.ts";

export const endpointsPath = (agentId: string, rest = ""): string => hubAgentPath(agentId, `/endpoints${rest}`);

/**
 * The hub says it has no webhook delivery on this answer: today's hub code still takes POST …/endpoints
 * (and probes), but marks it `Deprecation: true` with `Warning: 299 … "Webhook endpoint delivery is
 * deprecated; use /hub/ws + /hub/inbox"` and pushes nothing.
 */
export function webhooksDeprecated(answer: Pick<HubAnswer, "headers">): string | null {
  const warning = answer.headers.warning;
  if (warning && /^\s*299\b/.test(warning)) return `Warning: ${warning}`;
  const deprecation = answer.headers.deprecation;
  if (deprecation && deprecation.trim().toLowerCase() !== "false") return `Deprecation: ${deprecation}`;
  return null;
}

export interface EndpointReport {
  endpoint_id: string | null;
  url: string;
  state: string;
  test: { all_ok: boolean; results: { path: string; status: number; ok: boolean; hint?: string }[] } | null;
}

/** What the endpoint step found: the endpoint, or why the hub will not push (then: pull mode). */
export type EndpointOutcome = { endpoint: EndpointReport } | { noWebhooks: string; endpoint: EndpointReport | null };

/** The hub's probe test: {all_ok, results:[…]} (Agentline), or {all_ok, agent_path, wake_path} (the public hub code). */
function testReport(answer: HubAnswer): EndpointReport["test"] {
  const { results, agent_path: agentPath, wake_path: wakePath } = answer.body;
  const rows = Array.isArray(results) ? results : [agentPath, wakePath].filter((r) => typeof r === "object" && r !== null);
  if (!isHubSuccess(answer) || rows.length === 0) return null;
  const read = (rows as Record<string, unknown>[]).map((r) => {
    const status = typeof r.status === "number" ? r.status : typeof r.status_code === "number" ? r.status_code : 0;
    const hint = [r.hint, r.error].find((h): h is string => typeof h === "string" && h !== "");
    return { path: String(r.path ?? "?"), status, ok: r.ok === true, ...(hint ? { hint } : {}) };
  });
  return { all_ok: answer.body.all_ok === true, results: read };
}

/** `client` calls with the agent's JWT (a hub session's). */
export async function registerEndpoint(client: HubClient, settings: AgentSettings, hooksUrl: string): Promise<EndpointOutcome> {
  const token = settings.webhook_token;
  if (!token) throw new AgentError("no_webhook_token", "the relay gave no webhook token; run clawrelay init --rotate-token, then hub register again");
  const path = endpointsPath(settings.agent_id);
  const answer = await client.call("POST", path, { body: { url: hooksUrl, webhook_token: token } });
  if (answer.status === 404) return { noWebhooks: `the hub answers 404 to POST ${path}: it has no webhook delivery`, endpoint: null };
  if (!isHubSuccess(answer)) {
    // Today's hub refuses private addresses outright (400 private_ips_not_allowed): it could not push there anyway.
    const hint = answer.status === 400 ? " — a hub can push only to a relay it reaches on a public address; with a relay on a private one, use --mode pull" : "";
    throw new AgentError("hub_refused", `hub refused POST ${path}: ${answer.status} ${hubDetail(answer)}${hint}`);
  }
  const registered = {
    endpoint_id: typeof answer.body.endpoint_id === "string" ? answer.body.endpoint_id : null,
    url: typeof answer.body.url === "string" ? answer.body.url : hooksUrl,
    state: typeof answer.body.state === "string" ? answer.body.state : "unknown",
  };
  const deprecated = webhooksDeprecated(answer);
  // The probes ran (the relay learned the prefix from them); a test run would only probe again.
  if (deprecated) return { noWebhooks: `the hub marks webhook delivery deprecated (${deprecated}): it pushes nothing`, endpoint: { ...registered, test: null } };
  let test = await client.call("POST", endpointsPath(settings.agent_id, "/test"), { body: { url: hooksUrl, webhook_token: token } });
  // The hub's endpoint dry-run is also documented as a GET of the registered endpoint; some hubs answer only that.
  if (test.status === 404 || test.status === 405) test = await client.call("GET", endpointsPath(settings.agent_id, "/test"));
  return { endpoint: { ...registered, test: testReport(test) } };
}

/** The endpoint as lines; `prefix` is the one the relay uses now (the probes' paths). */
export function endpointLines(endpoint: EndpointReport, prefix: string): string[] {
  const lines = [`${endpoint.url} registered${endpoint.endpoint_id ? ` (${endpoint.endpoint_id})` : ""}: ${endpoint.state}`];
  if (endpoint.state !== "active") {
    lines.push(
      `the hub got no 2xx from ${endpoint.url}/${prefix}_inbox/agent and …/wake, so it will not deliver. Check:`,
      `  - the relay URL is reachable from the internet (not 127.0.0.1 or a private address);`,
      `  - the webhook token is the inbox's current one (after init --rotate-token, run hub register again);`,
      `  - the prefix is the hub's: agentgram for Agentline, botcord for the public hub code (--prefix).`,
    );
  }
  if (!endpoint.test) lines.push("probe test: the hub offers none");
  else {
    lines.push(`probe test: ${endpoint.test.all_ok ? "all ok" : "FAILED"}`);
    for (const r of endpoint.test.results) lines.push(`  ${r.path}  ${r.status || "no answer"} ${r.ok ? "ok" : "FAIL"}${r.hint ? ` — ${r.hint}` : ""}`);
  }
  return lines;
}

/** What the hub says about the endpoint (GET …/endpoints/status), with anything that looks like a secret left out. */
export async function endpointStatus(client: HubClient, agentId: string): Promise<Record<string, unknown>> {
  const body = await hubJson(client, "GET", endpointsPath(agentId, "/status"));
  return Object.fromEntries(Object.entries(body).filter(([name]) => !/token|secret/i.test(name)));
}
