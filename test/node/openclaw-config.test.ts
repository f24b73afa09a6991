// Finding and reading openclaw.json the way OpenClaw does (docs/openclaw-setup.md, "Where openclaw.json is found"):
// location precedence, port precedence, hooks settings, JSON5, the state dir's .env, parseDotEnv.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import util from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { OpenClawConfigError, gatewaySettingsFrom, loadGatewaySettings, locateOpenClawConfig, parseDotEnv } from "../../local-agent/gateway/openclaw-config.ts";

const HOME = "/home/u";
const existing = (...paths: string[]) => (p: string) => paths.includes(p);

describe("locateOpenClawConfig precedence", () => {
  const all = { OPENCLAW_CONFIG_PATH: "/c/custom.json", OPENCLAW_STATE_DIR: "/state", OPENCLAW_HOME: "/oh" };
  const everything = existing("/home/u/.openclaw", "/oh/.openclaw", "/home/u/.clawdbot/openclaw.json");

  it("OPENCLAW_CONFIG_PATH wins over everything", () => {
    expect(locateOpenClawConfig(all, HOME, everything)).toMatchObject({ path: "/c/custom.json", source: "OPENCLAW_CONFIG_PATH" });
  });

  it("then OPENCLAW_STATE_DIR/openclaw.json", () => {
    const { OPENCLAW_CONFIG_PATH: _, ...env } = all;
    expect(locateOpenClawConfig(env, HOME, everything)).toEqual({ path: "/state/openclaw.json", source: "OPENCLAW_STATE_DIR", stateDir: "/state" });
  });

  it("then $OPENCLAW_HOME/.openclaw/openclaw.json", () => {
    expect(locateOpenClawConfig({ OPENCLAW_HOME: "/oh" }, HOME, everything)).toEqual({
      path: "/oh/.openclaw/openclaw.json",
      source: "OPENCLAW_HOME",
      stateDir: "/oh/.openclaw",
    });
  });

  it("then ~/.openclaw/openclaw.json when ~/.openclaw exists, even if a legacy dir exists too", () => {
    expect(locateOpenClawConfig({}, HOME, everything)).toEqual({ path: "/home/u/.openclaw/openclaw.json", source: "home", stateDir: "/home/u/.openclaw" });
  });

  it("reads ~/.clawdbot only when ~/.openclaw is absent", () => {
    const legacyOnly = existing("/home/u/.clawdbot/openclaw.json", "/home/u/.moltbot/openclaw.json");
    expect(locateOpenClawConfig({}, HOME, legacyOnly)).toEqual({ path: "/home/u/.clawdbot/openclaw.json", source: "legacy", stateDir: "/home/u/.clawdbot" });
  });

  it("finds the legacy file names clawdbot.json and moltbot.json", () => {
    expect(locateOpenClawConfig({}, HOME, existing("/home/u/.clawdbot/clawdbot.json"))?.path).toBe("/home/u/.clawdbot/clawdbot.json");
    expect(locateOpenClawConfig({}, HOME, existing("/home/u/.moltbot/moltbot.json"))).toMatchObject({ path: "/home/u/.moltbot/moltbot.json", source: "legacy" });
  });

  it("returns null when nothing exists", () => {
    expect(locateOpenClawConfig({}, HOME, () => false)).toBeNull();
  });

  it("OPENCLAW_HOME replaces the home directory, legacy dirs included", () => {
    // OPENCLAW_HOME stands in for the home directory (docs/openclaw-setup.md) — so ~/.clawdbot means $OPENCLAW_HOME/.clawdbot.
    const found = locateOpenClawConfig({ OPENCLAW_HOME: "/oh" }, HOME, existing("/oh/.clawdbot/clawdbot.json"));
    expect(found).toMatchObject({ path: "/oh/.clawdbot/clawdbot.json", source: "legacy" });
  });
});

describe("gatewaySettingsFrom", () => {
  const config = { gateway: { port: 19001 }, hooks: { enabled: true, token: "t" } };

  it("port: flag > OPENCLAW_GATEWAY_PORT > gateway.port > 18789", () => {
    const env = { OPENCLAW_GATEWAY_PORT: "19002" };
    expect(gatewaySettingsFrom(config, env, { port: 19003 })).toMatchObject({ port: 19003, portSource: "flag" });
    expect(gatewaySettingsFrom(config, env)).toMatchObject({ port: 19002, portSource: "OPENCLAW_GATEWAY_PORT" });
    expect(gatewaySettingsFrom(config, {})).toMatchObject({ port: 19001, portSource: "gateway.port" });
    expect(gatewaySettingsFrom({}, {})).toMatchObject({ port: 18789, portSource: "default" });
  });

  it("ignores an unreadable OPENCLAW_GATEWAY_PORT", () => {
    expect(gatewaySettingsFrom(config, { OPENCLAW_GATEWAY_PORT: "abc" })).toMatchObject({ port: 19001, portSource: "gateway.port" });
    expect(gatewaySettingsFrom(config, { OPENCLAW_GATEWAY_PORT: "" })).toMatchObject({ port: 19001, portSource: "gateway.port" });
  });

  it("hooks.path defaults to /hooks and is normalised", () => {
    expect(gatewaySettingsFrom({}, {}).hooksPath).toBe("/hooks");
    expect(gatewaySettingsFrom({ hooks: { path: "" } }, {}).hooksPath).toBe("/hooks");
    expect(gatewaySettingsFrom({ hooks: { path: "custom/" } }, {}).hooksPath).toBe("/custom");
    expect(gatewaySettingsFrom({ hooks: { path: " /in//" } }, {}).hooksPath).toBe("/in");
    expect(gatewaySettingsFrom({ hooks: { path: "/a" } }, {}, { hooksPath: "b/" }).hooksPath).toBe("/b");
  });

  it("mapping paths are trimmed of slashes; entries without match.path are dropped", () => {
    const hooks = { mappings: [{ match: { path: "/agentgram_inbox/agent/" } }, { match: { path: "agentgram_inbox/wake" } }, { action: "agent" }, "junk"] };
    expect(gatewaySettingsFrom({ hooks }, {}).mappingPaths).toEqual(["agentgram_inbox/agent", "agentgram_inbox/wake"]);
    expect(gatewaySettingsFrom({ hooks: { mappings: "nope" } }, {}).mappingPaths).toEqual([]);
  });

  it("hooks.enabled only when literally true; token empty means none; flag overrides token", () => {
    expect(gatewaySettingsFrom(config, {})).toMatchObject({ hooksEnabled: true, hooksToken: "t" });
    expect(gatewaySettingsFrom({ hooks: { enabled: "true", token: "" } }, {})).toMatchObject({ hooksEnabled: false, hooksToken: null });
    expect(gatewaySettingsFrom(config, {}, { hooksToken: "flag" }).hooksToken).toBe("flag");
  });

  it("reads the chat completions flag and gateway.auth.token", () => {
    expect(gatewaySettingsFrom(config, {}).chatCompletionsEnabled).toBe(false);
    const on = { gateway: { auth: { token: "op" }, http: { endpoints: { chatCompletions: { enabled: true } } } } };
    expect(gatewaySettingsFrom(on, {})).toMatchObject({ chatCompletionsEnabled: true, authToken: "op" });
  });
});

describe("loadGatewaySettings on real files", () => {
  let dir = "";
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function stateDir(config: string, dotEnv?: string): Promise<string> {
    dir = await mkdtemp(join(tmpdir(), "clawrelay-oc-"));
    const state = join(dir, ".openclaw");
    await mkdir(state);
    await writeFile(join(state, "openclaw.json"), config);
    if (dotEnv !== undefined) await writeFile(join(state, ".env"), dotEnv);
    return state;
  }

  const json5 = `// user's config
{
  gateway: { port: 19100, }, /* block comment */
  hooks: { enabled: true, token: 'sekrit', mappings: [ { match: { path: "agentgram_inbox/agent" }, }, ], },
}
`;

  it("reads JSON5 (comments, trailing commas, unquoted keys, single quotes) from ~/.openclaw", async () => {
    await stateDir(json5);
    const settings = loadGatewaySettings({}, {}, dir);
    expect(settings).toMatchObject({ configPath: join(dir, ".openclaw", "openclaw.json"), port: 19100, hooksEnabled: true, hooksToken: "sekrit" });
    expect(settings.mappingPaths).toEqual(["agentgram_inbox/agent"]);
  });

  it("the state dir's .env fills OPENCLAW_GATEWAY_PORT but does not override a set variable", async () => {
    const state = await stateDir(json5, "# gateway\nOPENCLAW_GATEWAY_PORT=19200\n");
    expect(loadGatewaySettings({ OPENCLAW_STATE_DIR: state }, {}, "/nonexistent")).toMatchObject({ port: 19200, portSource: "OPENCLAW_GATEWAY_PORT" });
    expect(loadGatewaySettings({ OPENCLAW_STATE_DIR: state, OPENCLAW_GATEWAY_PORT: "19300" }, {}, "/nonexistent").port).toBe(19300);
    expect(loadGatewaySettings({}, {}, dir).port).toBe(19200);
  });

  it("invalid JSON5 throws OpenClawConfigError naming the file", async () => {
    const state = await stateDir("{ hooks: { enabled: true, ");
    const load = () => loadGatewaySettings({ OPENCLAW_STATE_DIR: state }, {}, "/nonexistent");
    expect(load).toThrow(OpenClawConfigError);
    expect(load).toThrow(join(state, "openclaw.json"));
  });

  it("a missing file gives defaults and configPath null", () => {
    expect(loadGatewaySettings({ OPENCLAW_CONFIG_PATH: "/nonexistent/openclaw.json" }, {}, "/nonexistent")).toMatchObject({
      configPath: null,
      port: 18789,
      hooksPath: "/hooks",
      hooksEnabled: false,
    });
  });
});

describe("parseDotEnv", () => {
  // [text, what Node's util.parseEnv (and dotenv, which OpenClaw uses) reads]. The first four were read
  // differently by the hand-written parser this replaced (issue 22): "x#c", the escape kept as "\\n", and
  // the multi-line values cut at their first line.
  const CASES: [string, Record<string, string>][] = [
    ["G=x#c", { G: "x" }],
    ['A="a\\nb"', { A: "a\nb" }],
    ['C="line1\nline2"', { C: "line1\nline2" }],
    ["C2='l1\nl2'", { C2: "l1\nl2" }],
    ["# comment\r\nA=1\r\n  # E=no\nexport B = two \n C='three four'\nD=\"five\"\nnot a line\nF=\n", { A: "1", B: "two", C: "three four", D: "five", F: "" }],
    // Node's own quirk, kept: an indented comment after a quoted value becomes a key "# E", which no lookup uses.
    ['D="five"\n  # E=no', { D: "five", "# E": "no" }],
    ['URL="http://x/?a=b#frag"', { URL: "http://x/?a=b#frag" }],
    ["OPENCLAW_GATEWAY_PORT=19000 # the gateway", { OPENCLAW_GATEWAY_PORT: "19000" }],
    ["B='a\\nb'", { B: "a\\nb" }],
    ["D=`backticks`", { D: "backticks" }],
    ['J="q" # c', { J: "q" }],
    ["K=a=b", { K: "a=b" }],
    ["N=${X}", { N: "${X}" }],
    ["Q='a \"b\" c'", { Q: 'a "b" c' }],
    ["S= x y ", { S: "x y" }],
    ["U=1\nU=2", { U: "2" }],
    ["=noKey\nAA", {}],
  ];

  it.each(CASES)("reads %j as Node's util.parseEnv does", (text, expected) => {
    expect(parseDotEnv(text)).toEqual(util.parseEnv(text));
    expect(parseDotEnv(text)).toEqual(expected);
  });

  it("on a Node without util.parseEnv (before 20.12) refuses the file with the fix instead of reading it another way", () => {
    expect(() => parseDotEnv("A=1", "/state/.env", null)).toThrow(OpenClawConfigError);
    expect(() => parseDotEnv("A=1", "/state/.env", null)).toThrow(/\/state\/\.env cannot be read on Node v[\d.]+: reading a \.env needs Node 20\.12/);
  });
});
