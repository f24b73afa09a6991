// Whether a hub still pushes webhooks, told from its answer to POST …/endpoints, against a real HTTP
// server that replays the answers recorded from the real hub code (test/fixtures/hub/): today's hub
// answers 201 but marks it `Deprecation: true` / `Warning: 299 …` and never pushes; the webhook era
// answers plainly and reports its probe test as agent_path/wake_path; a hub without the routes answers
// 404; a private relay address is refused with a hint. Covers local-agent/hub/webhook-era/hub-endpoint.ts.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hubClient } from "../../protocol/index.ts";
import { registerEndpoint, webhooksDeprecated } from "../../local-agent/hub/webhook-era/hub-endpoint.ts";
import type { AgentSettings } from "../../local-agent/settings.ts";

interface Exchange {
  direction: string;
  request: { method: string; path: string };
  response: { status: number; headers: Record<string, string>; body: unknown };
}

const FIXTURES = join(import.meta.dirname, "../fixtures/hub");
const exchanges = (file: string): Exchange[] => (JSON.parse(readFileSync(join(FIXTURES, file), "utf8")) as { exchanges: Exchange[] }).exchanges.filter((e) => e.direction === "client->hub");
/** The recorded answer to `method path`, the last one that succeeded (the recordings also hold refusals). */
const recorded = (file: string, method: string, suffix: string) => exchanges(file).filter((e) => e.request.method === method && e.request.path.endsWith(suffix) && e.response.status < 300).at(-1)!.response;

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A hub that answers each `METHOD /suffix` as recorded; what was asked is kept. */
async function replayHub(answers: Record<string, { status: number; headers?: Record<string, string>; body: unknown }>) {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://hub").pathname;
    asked.push(`${req.method} ${path}`);
    req.resume();
    const key = Object.keys(answers).find((k) => {
      const [method = "", suffix = ""] = k.split(" ");
      return method === req.method && path.endsWith(suffix);
    });
    const answer = key ? answers[key]! : { status: 404, body: { detail: "Not Found" } };
    const headers = Object.fromEntries(Object.entries(answer.headers ?? {}).filter(([name]) => name !== "content-length"));
    res.writeHead(answer.status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const address = server.address();
  const url = `http://127.0.0.1:${address && typeof address !== "string" ? address.port : 0}`;
  return { asked, client: hubClient(url, { token: "t" }) };
}

const settings = { agent_id: "ag_652eca9ef86c", webhook_token: "crw_test" } as AgentSettings;
const HOOKS = "http://127.0.0.1:18790/inbox/ag_652eca9ef86c/hooks";

describe("webhooksDeprecated (the answer's headers)", () => {
  it("reads today's hub's recorded notice, and nothing into a plain answer", () => {
    const today = recorded("current/endpoint-register-deprecated.json", "POST", "/endpoints");
    expect(webhooksDeprecated({ headers: today.headers })).toBe('Warning: 299 BotCord "Webhook endpoint delivery is deprecated; use /hub/ws + /hub/inbox"');
    const era = recorded("webhook-era/endpoint-register-probe.json", "POST", "/endpoints");
    expect(webhooksDeprecated({ headers: era.headers })).toBeNull();
    expect(webhooksDeprecated({ headers: { deprecation: "@1767225600" } })).toBe("Deprecation: @1767225600");
    expect(webhooksDeprecated({ headers: { deprecation: "false", warning: '199 - "just saying"' } })).toBeNull();
  });
});

describe("registerEndpoint", () => {
  it("today's hub (201 with the notice): no webhooks — and no second round of probes for a dry run", async () => {
    const file = "current/endpoint-register-deprecated.json";
    const hub = await replayHub({ "POST /endpoints": recorded(file, "POST", "/endpoints"), "POST /endpoints/test": recorded(file, "POST", "/endpoints/test") });
    const outcome = await registerEndpoint(hub.client, settings, HOOKS);
    expect(outcome).toMatchObject({ noWebhooks: expect.stringContaining("the hub marks webhook delivery deprecated (Warning: 299 BotCord") as unknown, endpoint: { endpoint_id: "ep_0e8996d97150", state: "active", test: null } });
    expect(hub.asked).toEqual(["POST /registry/agents/ag_652eca9ef86c/endpoints"]);
  });

  it("the webhook era: the endpoint, and its probe test read from agent_path and wake_path", async () => {
    const file = "webhook-era/endpoint-register-probe.json";
    const hub = await replayHub({ "POST /endpoints": recorded(file, "POST", "/endpoints"), "POST /endpoints/test": recorded(file, "POST", "/endpoints/test") });
    const outcome = await registerEndpoint(hub.client, settings, HOOKS);
    expect("noWebhooks" in outcome).toBe(false);
    expect(outcome.endpoint).toEqual({
      endpoint_id: "ep_28860c8c4f88",
      url: "http://127.0.0.1:18790/inbox/ag_fdc6234fdfbc/hooks",
      state: "active",
      test: { all_ok: true, results: [{ path: "/botcord_inbox/agent", status: 200, ok: true }, { path: "/botcord_inbox/wake", status: 200, ok: true }] },
    });
    expect(hub.asked).toEqual(["POST /registry/agents/ag_652eca9ef86c/endpoints", "POST /registry/agents/ag_652eca9ef86c/endpoints/test"]);
  });

  it("no endpoint routes (404): no webhooks; a private relay address refused: the error says to pull", async () => {
    const gone = await replayHub({});
    expect(await registerEndpoint(gone.client, settings, HOOKS)).toEqual({ noWebhooks: "the hub answers 404 to POST /registry/agents/ag_652eca9ef86c/endpoints: it has no webhook delivery", endpoint: null });
    const refusal = exchanges("current/endpoint-register-deprecated.json").find((e) => e.response.status === 400)!.response;
    const privateOnly = await replayHub({ "POST /endpoints": refusal });
    await expect(registerEndpoint(privateOnly.client, settings, HOOKS)).rejects.toThrow(/400 Private\/internal IP addresses are not allowed — .* use --mode pull/);
  });
});
