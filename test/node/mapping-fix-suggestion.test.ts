// The mapping the dead shelf suggests for an unmapped sub-path fits the body (issue 24, item 3: a wake body
// was told to add an agent mapping with {{message}}, which the gateway refuses). The real gateway takes
// each of these in test/openclaw/mapping-fix.interop.test.ts.
import JSON5 from "json5";
import { describe, expect, it } from "vitest";
import { classifyProbe } from "../../local-agent/delivery/gateway-response.ts";
import { suggestMapping } from "../../local-agent/delivery/mapping-suggestion.ts";

const entryOf = (subpath: string, body: unknown) => JSON5.parse(suggestMapping(subpath, typeof body === "string" ? body : JSON.stringify(body)).entry) as Record<string, unknown>;

describe("suggestMapping", () => {
  it("a hub's wake body (text, body, mode, sessionKey): a wake mapping reading text, keeping the session", () => {
    const body = { text: "ag_x wants to add you", body: "ag_x wants to add you", mode: "now", sessionKey: "agentline:ag_x" };
    expect(entryOf("agentgram_inbox/wake", body)).toEqual({ match: { path: "agentgram_inbox/wake" }, action: "wake", textTemplate: "{{text}}", sessionKey: "{{sessionKey}}" });
    expect(suggestMapping("agentgram_inbox/wake", JSON.stringify(body)).note).toContain('"agentline:" in hooks.allowedSessionKeyPrefixes');
  });

  it("a wake body with only `body`: the wake mapping reads body", () => {
    expect(entryOf("x/wake", { body: "hi", mode: "next-heartbeat" })).toMatchObject({ action: "wake", textTemplate: "{{body}}" });
  });

  it("a body with message: an agent mapping with {{message}}, no chat delivery; a hub body keeps its per-sender session", () => {
    expect(entryOf("custom/message", { message: "hello" })).toEqual({ match: { path: "custom/message" }, action: "agent", messageTemplate: "{{message}}", deliver: false });
    const hub = entryOf("botcord_inbox/agent", { message: "ag_x says: hi", name: "ag_x", channel: "last", sessionKey: "agentline:ag_x" });
    expect(hub).toMatchObject({ action: "agent", messageTemplate: "{{message}}", sessionKey: "{{sessionKey}}", sessionMode: "persistent" });
    expect(suggestMapping("custom/message", '{"message":"hello"}').note).toBe("");
  });

  it("text or body without message or mode: an agent mapping reading that field", () => {
    expect(entryOf("custom/text", { text: "build failed" })).toMatchObject({ action: "agent", messageTemplate: "{{text}}" });
    expect(entryOf("custom/body", { body: "build failed", id: 3 })).toMatchObject({ action: "agent", messageTemplate: "{{body}}" });
  });

  it("other JSON: a template naming fields it has, the telling ones first, never more than three", () => {
    const entry = entryOf("alerts", { id: 7, ts: 1, extra: true, event: "deploy", "bad.key": 1, data: { ok: true } });
    expect(entry.messageTemplate).toBe("Webhook alerts: event={{event}}, data={{data}}, id={{id}}");
    expect(entry.messageTemplate).not.toContain("bad.key");
  });

  it("nothing a template can read (not JSON, an array, {}): a fixed text with {{path}}, never empty", () => {
    for (const body of ["plain text", "[1,2]", "{}", '{"":"x"}']) {
      expect(entryOf("raw", body).messageTemplate).toBe("A webhook arrived at {{path}}");
    }
  });
});

describe("classifyProbe puts the fitted mapping in the dead shelf's reason", () => {
  const first = "gateway answered 404 Not Found";

  it("a wake body gets a wake mapping, not {{message}}", () => {
    const outcome = classifyProbe(400, "agentgram_inbox/wake", "/hooks", first, '{"text":"t","body":"t","mode":"now"}');
    expect(outcome.kind === "content_error" && outcome.reason).toContain('add { match: { path: "agentgram_inbox/wake" }, action: "wake", textTemplate: "{{text}}" } to hooks.mappings');
    expect(outcome.kind === "content_error" && outcome.reason).not.toContain("{{message}}");
  });

  it("the reason fits the relay's 1000-character limit for the fullest suggestion", () => {
    const body = JSON.stringify({ message: "m", sessionKey: "agentline:ag_0123456789ab" });
    const outcome = classifyProbe(400, "a/very/long/sub-path/for/a/webhook/source/of/some/kind", "/hooks", first, body);
    expect(outcome.kind === "content_error" && outcome.reason.length).toBeLessThan(1000);
    expect(outcome.kind === "content_error" && outcome.reason).toContain("allowRequestSessionKey");
  });
});
