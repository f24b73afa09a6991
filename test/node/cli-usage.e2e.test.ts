// The CLI as a person meets it before anything works (issue "Ship it"), run as a child process with no
// relay for most cases: a help text per command, --version, usage mistakes (exit 2, one line and the
// usage), bad or unreachable relay URLs and servers that are not relays (exit 1, one line saying what
// to check), an empty `send`, and no stack trace anywhere unless --debug. Also demo:envelope with
// nothing listening.
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newIdentity } from "../../local-agent/identity.ts";
import { relayErrorText } from "../../local-agent/relay/relay-api.ts";
import { saveSettings, settingsPath } from "../../local-agent/settings.ts";
import { closedPort, runCli, runScript, tempHome } from "./cli-harness.ts";
import type { CliResult, TempHome } from "./cli-harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function home(): Promise<TempHome> {
  const h = await tempHome();
  cleanups.push(() => h.cleanup());
  return h;
}

/** A home whose settings point at `relayUrl` (nothing is claimed anywhere). */
async function homeWithSettings(relayUrl: string): Promise<TempHome & { path: string }> {
  const h = await home();
  const key = await newIdentity();
  const receipt = await newIdentity();
  const path = settingsPath(h.env);
  saveSettings(path, {
    relay_url: relayUrl,
    agent_id: key.agentId,
    hub_url: "http://127.0.0.1:9",
    key: { key_id: key.keyId, private_key: key.privateKey, public_key: key.publicKey },
    receipt_key: { key_id: receipt.keyId, private_key: receipt.privateKey, public_key: receipt.publicKey },
  });
  return { ...h, path };
}

/** A tiny HTTP server on an ephemeral loopback port that answers every request the same way. */
async function server(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const s = createServer(answer);
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()));
  cleanups.push(() => new Promise<void>((resolve) => s.close(() => resolve())));
  const address = s.address();
  return `http://127.0.0.1:${address && typeof address !== "string" ? address.port : 0}`;
}

const stackLines = (stderr: string) => stderr.split("\n").filter((line) => line.startsWith("    at "));

/** Exit 2, nothing on stdout, one `clawrelay: …` line, then the usage; no stack. */
function expectUsageError(result: CliResult, message: string | RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe("");
  const [first, ...rest] = result.stderr.split("\n");
  if (typeof message === "string") expect(first).toBe(`clawrelay: ${message}`);
  else expect(first).toMatch(message);
  expect(rest.join("\n")).toMatch(/usage/);
  expect(stackLines(result.stderr)).toEqual([]);
}

/** Exit 1 with exactly this one line on stderr. */
function expectOneLine(result: CliResult, line: string): void {
  expect(result.stderr).toBe(`${line}\n`);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe("");
}

// Every flag each command takes, written out here so the help texts are checked against the CLI's
// real flags rather than against the table they are printed from.
const COMMAND_FLAGS: Record<string, string[]> = {
  init: ["--relay", "--name", "--hub", "--import-botcord", "--botcord-id", "--import-agentline", "--agentline-id", "--force", "--rotate-token", "--claim-token"],
  start: ["--json", "--gateway-port", "--hooks-path", "--openclaw-config"],
  status: ["--json"],
  doctor: ["--gateway-port", "--hooks-path", "--openclaw-config"],
  send: ["--to", "--text", "--payload", "--type", "--reply-to", "--ttl", "--json"],
  messages: ["--state", "--since", "--until", "--source", "--from", "--conversation", "--search", "--limit", "--dry-run", "--json"],
  "hub register": ["--bind-code", "--bind-nonce", "--mode", "--prefix", "--agentline-token", "--open", "--claim-token", "--json"],
  "hub status": ["--json", "--agentline-token"],
  "sources add": ["--kind", "--secret", "--subpath", "--forward", "--allow-public-target", "--timeout", "--retries", "--ordered", "--unordered", "--json"],
  "sources set": ["--forward", "--gateway", "--allow-public-target", "--timeout", "--retries", "--ordered", "--unordered", "--json"],
};

describe("help and version", () => {
  it("every command's --help: its own text, each of its flags, examples; exit 0; `help <command>` is the same", async () => {
    const h = await home();
    const texts = new Set<string>();
    for (const [command, flags] of Object.entries(COMMAND_FLAGS)) {
      const result = await runCli([...command.split(" "), "--help"], h.env);
      expect(result.code, command).toBe(0);
      expect(result.stderr).toBe("");
      expect(result.stdout.split("\n")[0]).toMatch(new RegExp(`^clawrelay ${command} — \\S`));
      for (const flag of [...flags, "--home", "--debug", "--help"]) expect(result.stdout, `${command} --help names ${flag}`).toContain(flag);
      expect(result.stdout).toMatch(/examples:\n {2}clawrelay /);
      texts.add(result.stdout);
      expect((await runCli(["help", ...command.split(" ")], h.env)).stdout).toBe(result.stdout);
      expect((await runCli([...command.split(" "), "-h"], h.env)).stdout).toBe(result.stdout);
    }
    expect(texts.size).toBe(Object.keys(COMMAND_FLAGS).length);
  });

  it("clawrelay --help, help and no arguments list every command, one line each", async () => {
    const h = await home();
    const help = await runCli(["--help"], h.env);
    expect(help.code).toBe(0);
    for (const command of Object.keys(COMMAND_FLAGS)) expect(help.stdout).toMatch(new RegExp(`^ {2}${command} +\\S`, "m"));
    expect((await runCli(["help"], h.env)).stdout).toBe(help.stdout);
    expect((await runCli([], h.env)).stdout).toBe(help.stdout);
    const hub = await runCli(["hub", "--help"], h.env);
    expect(hub.code).toBe(0);
    expect(hub.stdout).toContain("clawrelay hub register");
    expect(hub.stdout).toContain("clawrelay hub status");
  });

  it("--version and -v print `clawrelay <version>` from package.json", async () => {
    const h = await home();
    for (const flag of ["--version", "-v"]) {
      const result = await runCli([flag], h.env);
      expect(result).toEqual({ code: 0, stdout: `clawrelay ${VERSION}\n`, stderr: "" });
    }
  });
});

describe("usage mistakes: exit 2, one line, then the usage", () => {
  it("an unknown command, an unknown flag, a flag of another command", async () => {
    const h = await home();
    expectUsageError(await runCli(["bogus"], h.env), 'unknown command "bogus"');
    expectUsageError(await runCli(["--bogus"], h.env), /^clawrelay: unknown flag --bogus/);
    expectUsageError(await runCli(["init", "--bogus"], h.env), /^clawrelay: unknown flag --bogus for clawrelay init/);
    const status = await runCli(["status", "--to", "ag_000000000000"], h.env);
    expectUsageError(status, /^clawrelay: unknown flag --to for clawrelay status/);
    expect(status.stderr).toContain("clawrelay status [--json]");
    expectUsageError(await runCli(["hub"], h.env), "hub needs an action: register or status");
    expectUsageError(await runCli(["hub", "sync"], h.env), 'unknown hub action "sync": use register or status');
    expectUsageError(await runCli(["messages", "list"], h.env), /^clawrelay: unknown messages action "list"/);
    expectUsageError(await runCli(["help", "bogus"], h.env), /^clawrelay: no help for "bogus"/);
  });

  it("a flag that takes a value without one, a value given to a switch, an argument where none is expected", async () => {
    const h = await home();
    expectUsageError(await runCli(["init", "--relay"], h.env), "--relay needs a value: --relay URL");
    expectUsageError(await runCli(["init", "--relay", "--force"], h.env), /^clawrelay: --relay needs a value: --relay URL/);
    expectUsageError(await runCli(["send", "--to"], h.env), "--to needs a value: --to AGENT_ID");
    expectUsageError(await runCli(["init", "--force=yes"], h.env), "--force takes no value");
    expectUsageError(await runCli(["status", "now"], h.env), /^clawrelay: unexpected argument "now"/);
    expectUsageError(await runCli(["messages", "show", "1", "2"], h.env), 'unexpected argument "2"');
    expectUsageError(await runCli(["messages", "show"], h.env), /^clawrelay: messages show needs the message id/);
    expectUsageError(await runCli(["messages", "drop", "x"], h.env), /^clawrelay: the message id must be a positive integer/);
  });

  it("bad values: --gateway-port abc, --state x, --mode x, --prefix x, --ttl soon", async () => {
    const h = await home();
    expectUsageError(await runCli(["doctor", "--gateway-port", "abc"], h.env), '--gateway-port must be a TCP port number (1-65535), not "abc"');
    expectUsageError(await runCli(["start", "--gateway-port", "70000"], h.env), /^clawrelay: --gateway-port must be a TCP port number/);
    expectUsageError(await runCli(["messages", "--state", "x"], h.env), '--state must be one of queued, sent, dead, delivered, all, not "x"');
    expectUsageError(await runCli(["messages", "show", "3", "--state", "dead"], h.env), /^clawrelay: --state is for listing/);
    expectUsageError(await runCli(["messages", "--since", "yesterday"], h.env), '--since must be an ISO 8601 time such as 2026-12-07T05:00:00Z, or a duration back from now such as 90m, 2h or 7d (not "yesterday")');
    expectUsageError(await runCli(["messages", "replay", "--since", "1h", "--state", "queued"], h.env), '--state must be one of delivered, dead, all, not "queued"');
    expectUsageError(await runCli(["messages", "replay"], h.env), /^clawrelay: messages replay needs the message id/);
    expectUsageError(await runCli(["messages", "drop", "3", "--search", "x"], h.env), /^clawrelay: --search is for listing/);
    expectUsageError(await runCli(["messages", "--dry-run"], h.env), /^clawrelay: --dry-run goes with a bulk replay/);
    expectUsageError(await runCli(["hub", "register", "--mode", "x"], h.env), '--mode must be one of webhook, pull, not "x"');
    expectUsageError(await runCli(["hub", "register", "--prefix", "x"], h.env), '--prefix must be one of agentgram, botcord, not "x"');
    expectUsageError(await runCli(["send", "--to", "ag_000000000000", "--text", "hi", "--ttl", "soon"], h.env), '--ttl must be a whole number of seconds, not "soon"');
  });

  it("send refuses an empty message: no --text or --payload, --text \"\", --payload {}", async () => {
    const h = await homeWithSettings(`http://127.0.0.1:${await closedPort()}`);
    const to = ["send", "--to", "ag_000000000000"];
    expectUsageError(await runCli(to, h.env), "send needs a message: give --text TEXT or --payload JSON");
    expectUsageError(await runCli([...to, "--text", ""], h.env), "--text is empty: give --text TEXT or --payload JSON");
    expectUsageError(await runCli([...to, "--text", "  "], h.env), "--text is empty: give --text TEXT or --payload JSON");
    expectUsageError(await runCli([...to, "--payload", "{}"], h.env), /^clawrelay: --payload \{\} has nothing in it: give --text TEXT or --payload JSON/);
    expectUsageError(await runCli([...to, "--text", "a", "--payload", '{"text":"b"}'], h.env), "give --text or --payload, not both");
    expectUsageError(await runCli(["send", "--text", "hi"], h.env), "send needs the receiver: --to AGENT_ID");
    const list = await runCli([...to, "--payload", "[1]"], h.env);
    expect(list.stderr).toMatch(/^clawrelay: --payload must be a JSON object/);
    expect(stackLines(list.stderr)).toEqual([]);
  });

  it("--debug and --home are accepted by every command, before or after it", async () => {
    const h = await home();
    for (const args of [["status", "--debug"], ["--debug", "status"], ["--home", h.env.CLAWRELAY_HOME!, "status"], ["status", "--home", h.env.CLAWRELAY_HOME!, "--debug"]]) {
      // A home without settings (issue 32: status said to start, and start asked for init): init first.
      expectOneLine(await runCli(args, h.env), `clawrelay: no running agent found: no settings at ${join(h.env.CLAWRELAY_HOME!, "agent.json")}; run \`clawrelay init --relay <url>\` first, then start it with: clawrelay start`);
    }
  });
});

describe("relay URLs and servers that are not relays: exit 1, one line saying what to check", () => {
  it("--relay without an http(s) scheme, or that does not parse", async () => {
    const h = await home();
    for (const relay of ["relay.example.com", "localhost:8787", "ftp://relay.example.com", "https://", "http//relay"]) {
      expectOneLine(await runCli(["init", "--relay", relay], h.env), `clawrelay: --relay must be an http(s) URL, e.g. https://relay.example.com (not "${relay}")`);
    }
    expectOneLine(await runCli(["init", "--relay", "https://relay.example.com", "--hub", "agentgram.chat"], h.env), 'clawrelay: --hub must be an http(s) URL, e.g. https://agentgram.chat (not "agentgram.chat")');
  });

  it("a relay_url in the settings that is not a URL names the settings file", async () => {
    const h = await homeWithSettings("relay.example.com");
    expectOneLine(
      await runCli(["send", "--to", "ag_000000000000", "--text", "hi"], h.env),
      `clawrelay: the relay URL "relay.example.com" is not an http(s) URL such as https://relay.example.com; check relay_url in ${h.path}`,
    );
  });

  it("nothing listening: connection refused, is it running, check --relay (or relay_url in the settings)", async () => {
    const h = await home();
    const url = `http://127.0.0.1:${await closedPort()}`;
    expectOneLine(await runCli(["init", "--relay", url], h.env), `clawrelay: cannot reach the relay at ${url}: connection refused — is it running? check --relay`);
    const s = await homeWithSettings(url);
    expectOneLine(await runCli(["messages"], s.env), `clawrelay: cannot reach the relay at ${url}: connection refused — is it running? check relay_url in ${s.path}`);
    expectOneLine(await runCli(["send", "--to", "ag_000000000000", "--text", "hi"], s.env), `clawrelay: cannot reach the relay at ${url}: connection refused — is it running? check relay_url in ${s.path}`);
  });

  it("a server that answers 401 with HTML, or JSON without a clawrelay error, is not a relay", async () => {
    const h = await home();
    const html = await server((_, res) => res.writeHead(401, { "content-type": "text/html" }).end("<html><body>Sign in</body></html>"));
    expectOneLine(await runCli(["init", "--relay", html], h.env), `clawrelay: ${html} answered 401 but is not a clawrelay relay (no clawrelay error in its answer); check the URL`);
    const json = await server((_, res) => res.writeHead(401, { "content-type": "application/json" }).end('{"message":"Unauthorized"}'));
    expectOneLine(await runCli(["init", "--relay", json], h.env), `clawrelay: ${json} answered 401 but is not a clawrelay relay (no clawrelay error in its answer); check the URL`);
    const page = await server((_, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>welcome</html>"));
    expectOneLine(await runCli(["init", "--relay", page], h.env), `clawrelay: ${page} answered 200 but is not a clawrelay relay (its answer is not JSON); check the URL`);
  });

  it("a relay from before history (its router's 404 not_found): messages --state delivered and replay --since say so in one line", async () => {
    const older = await server((req, res) => res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: `no route for ${req.method} ${new URL(req.url ?? "/", "http://x").pathname}` } })));
    const s = await homeWithSettings(older);
    const why = `the relay at ${older} is older and keeps no message history (it has no /inbox/{id}/history); update the relay, or list today's queue with clawrelay messages [--state queued|sent|dead]`;
    expectOneLine(await runCli(["messages", "--state", "delivered", "--search", "invoice"], s.env), `clawrelay: cannot read the inbox's history: ${why}`);
    expectOneLine(await runCli(["messages", "replay", "--since", "1h"], s.env), `clawrelay: cannot replay the inbox's history: ${why}`);
  });

  it("relayErrorText never prints undefined", () => {
    expect(relayErrorText({ status: 401, body: {} })).toBe("401 (no clawrelay error in the answer)");
    expect(relayErrorText({ status: 401, body: { error: "nope" } })).toBe("401 (no clawrelay error in the answer)");
    expect(relayErrorText({ status: 403, body: { error: { code: "claims_closed" } } })).toBe("403 claims_closed");
    expect(relayErrorText({ status: 404, body: { error: { code: "inbox_not_claimed", message: "claim it first" } } })).toBe("404 inbox_not_claimed: claim it first");
    expect(relayErrorText({ status: 0, body: { error: { code: "unreachable", message: "cannot reach the relay" } } })).toBe("cannot reach the relay");
  });
});

describe("unexpected errors", () => {
  // A relay that accepts the claim, and a home below a regular file: saving the settings fails with
  // ENOTDIR, which no module turns into an AgentError.
  async function unsavable(): Promise<{ env: Record<string, string>; relay: string }> {
    const h = await home();
    writeFileSync(join(h.dir, "a-file"), "");
    const relay = await server((req, res) => {
      req.resume();
      res.writeHead(201, { "content-type": "application/json" }).end('{"agent_id":"x","created":true,"urls":{"hooks":"http://127.0.0.1:9/hooks"},"webhook_token":"crw_x"}');
    });
    return { env: { ...h.env, CLAWRELAY_HOME: join(h.dir, "a-file", "clawrelay") }, relay };
  }

  it("without --debug: one line, the message and a hint at --debug, exit 1, no stack", async () => {
    const { env, relay } = await unsavable();
    const result = await runCli(["init", "--relay", relay], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^clawrelay: unexpected error: ENOTDIR: .+ \(run again with --debug for details\)\n$/);
    expect(stackLines(result.stderr)).toEqual([]);
  });

  it("with --debug: the stack", async () => {
    const { env, relay } = await unsavable();
    const result = await runCli(["init", "--relay", relay, "--debug"], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^clawrelay: unexpected error: ENOTDIR: /);
    expect(stackLines(result.stderr).length).toBeGreaterThan(0);
  });
});

describe("npm run demo:envelope", () => {
  const runDemo = (env: Record<string, string>): Promise<CliResult> => runScript(join(ROOT, "scripts/demo-envelope.ts"), [], env);


  it("with no relay listening: one line saying to start one, exit 1", async () => {
    const port = await closedPort();
    const result = await runDemo({ CLAWRELAY_DEV_PORT: String(port) });
    expect(result.stderr).toBe(`demo:envelope: no relay at http://127.0.0.1:${port} — start one with \`npm start\` (or set CLAWRELAY_DEV_PORT)\n`);
    expect(result.code).toBe(1);
  });
});
