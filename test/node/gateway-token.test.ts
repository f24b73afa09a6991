// The gateway token as the gateway finds it (local-agent/gateway/gateway-token.ts): plain, ${VAR}, $VAR,
// secret references (env, file; exec and store refused with the fix), the environment fallback,
// password mode, and which one wins.
import { describe, expect, it } from "vitest";
import { resolveGatewayAuth } from "../../local-agent/gateway/gateway-token.ts";
import type { ReadText } from "../../local-agent/gateway/gateway-token.ts";
import { gatewaySettingsFrom } from "../../local-agent/gateway/openclaw-config.ts";

const noFiles: ReadText = (path) => {
  throw Object.assign(new Error(`ENOENT: ${path}`), { code: "ENOENT" });
};
const files = (contents: Record<string, string>): ReadText => (path) => {
  const text = contents[path];
  if (text === undefined) return noFiles(path);
  return text;
};
const withToken = (token: unknown, extra: Record<string, unknown> = {}) => ({ gateway: { auth: { token } }, ...extra });

describe("resolveGatewayAuth", () => {
  it("a plain gateway.auth.token is used as it is", () => {
    expect(resolveGatewayAuth(withToken("plain-token"), {}, undefined, noFiles)).toEqual({ mode: "token", token: "plain-token", source: "gateway.auth.token", problem: null });
  });

  it("${VAR} is substituted from the environment; $${VAR} stays literal; an unset one is a problem naming it", () => {
    expect(resolveGatewayAuth(withToken("${GW_TOKEN}"), { GW_TOKEN: "from-env" }, undefined, noFiles)).toMatchObject({ token: "from-env", source: "gateway.auth.token (env substitution)" });
    expect(resolveGatewayAuth(withToken("a$${GW_TOKEN}"), {}, undefined, noFiles)).toMatchObject({ token: "a${GW_TOKEN}", problem: null });
    const unset = resolveGatewayAuth(withToken("${GW_TOKEN}"), {}, undefined, noFiles);
    expect(unset.token).toBeNull();
    expect(unset.problem).toContain("${GW_TOKEN}");
    expect(unset.problem).toContain("OPENCLAW_GATEWAY_TOKEN");
  });

  it("the $VAR shorthand and an env secret reference read the variable", () => {
    expect(resolveGatewayAuth(withToken("$MY_GW"), { MY_GW: "short" }, undefined, noFiles)).toMatchObject({ token: "short", problem: null });
    const ref = resolveGatewayAuth(withToken({ source: "env", provider: "default", id: "MY_GW" }), { MY_GW: "ref" }, undefined, noFiles);
    expect(ref).toMatchObject({ token: "ref", source: "gateway.auth.token (secret reference env:MY_GW)", problem: null });
  });

  it("an env reference outside its provider's allowlist is refused", () => {
    const config = withToken({ source: "env", provider: "strict", id: "MY_GW" }, { secrets: { providers: { strict: { source: "env", allowlist: ["OTHER"] } } } });
    expect(resolveGatewayAuth(config, { MY_GW: "x" }, undefined, noFiles)).toMatchObject({ token: null, problem: expect.stringContaining("does not allow MY_GW") });
  });

  it("a configured reference that cannot be resolved is authoritative: no fallback to OPENCLAW_GATEWAY_TOKEN", () => {
    const auth = resolveGatewayAuth(withToken({ source: "env", id: "MISSING" }), { OPENCLAW_GATEWAY_TOKEN: "env-token" }, undefined, noFiles);
    expect(auth.token).toBeNull();
    expect(auth.problem).toContain("MISSING is not set");
  });

  it("file references: a JSON pointer into a json file, or the whole file in singleValue mode; ~ is the home", () => {
    const secrets = {
      providers: { filemain: { source: "file", path: "~/.openclaw/secrets.json" }, one: { source: "file", path: "/run/gw-token", mode: "singleValue" } },
    };
    const read = files({ "/home/u/.openclaw/secrets.json": JSON.stringify({ gateway: { "a/b": "from-json" } }), "/run/gw-token": "from-file\n" });
    expect(resolveGatewayAuth(withToken({ source: "file", provider: "filemain", id: "/gateway/a~1b" }, { secrets }), {}, undefined, read, "/home/u")).toMatchObject({ token: "from-json", problem: null });
    expect(resolveGatewayAuth(withToken({ source: "file", provider: "one", id: "value" }, { secrets }), {}, undefined, read, "/home/u")).toMatchObject({ token: "from-file", problem: null });
    const absent = resolveGatewayAuth(withToken({ source: "file", provider: "filemain", id: "/nope" }, { secrets }), {}, undefined, read, "/home/u");
    expect(absent).toMatchObject({ token: null, problem: expect.stringContaining("no string at /nope") });
    const unreadable = resolveGatewayAuth(withToken({ source: "file", provider: "filemain", id: "/gateway" }, { secrets }), {}, undefined, noFiles, "/home/u");
    expect(unreadable.problem).toContain("cannot read /home/u/.openclaw/secrets.json (ENOENT)");
    const noProvider = resolveGatewayAuth(withToken({ source: "file", provider: "ghost", id: "/x" }), {}, undefined, read);
    expect(noProvider.problem).toContain("secrets.providers.ghost is not a file provider");
  });

  it("exec and store references are not resolved here, and the problem says how to give the token instead", () => {
    for (const source of ["exec", "store"]) {
      const auth = resolveGatewayAuth(withToken({ source, provider: "vault", id: "gw/token" }), {}, undefined, noFiles);
      expect(auth.token).toBeNull();
      expect(auth.problem).toContain(`cannot resolve "${source}" secret references`);
      expect(auth.problem).toContain("gateway.auth_token in agent.json");
    }
  });

  it("no token in the config: OPENCLAW_GATEWAY_TOKEN; neither: a problem", () => {
    expect(resolveGatewayAuth({}, { OPENCLAW_GATEWAY_TOKEN: "env-token" }, undefined, noFiles)).toEqual({ mode: "token", token: "env-token", source: "OPENCLAW_GATEWAY_TOKEN", problem: null });
    const none = resolveGatewayAuth({}, {}, undefined, noFiles);
    expect(none).toMatchObject({ token: null, source: "none" });
    expect(none.problem).toContain("no gateway.auth.token");
  });

  it("password mode uses gateway.auth.password or OPENCLAW_GATEWAY_PASSWORD; mode none needs nothing", () => {
    expect(resolveGatewayAuth({ gateway: { auth: { mode: "password", password: "pw" } } }, {}, undefined, noFiles)).toMatchObject({ mode: "password", token: "pw" });
    expect(resolveGatewayAuth({ gateway: { auth: { password: "pw" } } }, {}, undefined, noFiles)).toMatchObject({ mode: "password", token: "pw" });
    expect(resolveGatewayAuth({ gateway: { auth: { mode: "password" } } }, { OPENCLAW_GATEWAY_PASSWORD: "envpw" }, undefined, noFiles)).toMatchObject({ token: "envpw", source: "OPENCLAW_GATEWAY_PASSWORD" });
    expect(resolveGatewayAuth({ gateway: { auth: { mode: "none" } } }, {}, undefined, noFiles)).toMatchObject({ mode: "none", token: null, problem: null });
  });

  it("agent.json's gateway.auth_token wins over everything", () => {
    expect(resolveGatewayAuth(withToken("cfg"), { OPENCLAW_GATEWAY_TOKEN: "env" }, "override", noFiles)).toMatchObject({ token: "override", source: "gateway.auth_token in agent.json" });
  });

  it("gatewaySettingsFrom carries it, and substitutes ${VAR} in hooks.token too", () => {
    const settings = gatewaySettingsFrom({ hooks: { token: "${HOOKS_T}" } }, { HOOKS_T: "ht", OPENCLAW_GATEWAY_TOKEN: "gt" });
    expect(settings).toMatchObject({ hooksToken: "ht", authToken: "gt", auth: { source: "OPENCLAW_GATEWAY_TOKEN" } });
    expect(gatewaySettingsFrom({ hooks: { token: "${UNSET_T}" } }, {}).hooksToken).toBeNull();
  });
});
