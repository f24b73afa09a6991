// The session keys hub messages reach the gateway with, the hooks.allowedSessionKeyPrefixes that
// docs/openclaw-setup.md tells a user to set, and the list `clawrelay doctor` advises
// (local-agent/doctor/doctor-gateway.ts sessionChecks) name the same prefixes, and every key the renderer
// (protocol/hub-render.ts) can write passes them under the gateway's own rule (lower-cased startsWith,
// OpenClaw's hooks.ts): a key outside the list is refused and the message shelved.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ENVELOPE_TYPES, HUB_SESSION_KEY_PREFIXES, parseEnvelope, pulledRecordBody, readPulledRecord, renderHubMessage } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { sessionChecks } from "../../local-agent/doctor/doctor-gateway.ts";
import type { Level } from "../../local-agent/doctor/doctor-gateway.ts";
import type { GatewaySettings } from "../../local-agent/gateway/openclaw-config.ts";
import { DEMO_WEBHOOK_BODY } from "../../scripts/start-lines.ts";

const docs = readFileSync(new URL("../../docs/openclaw-setup.md", import.meta.url), "utf8");

/** Every `allowedSessionKeyPrefixes: [...]` the page's config examples set. */
const docsLists = [...docs.matchAll(/allowedSessionKeyPrefixes: (\[[^\]\n]*\])/g)].map((m) => JSON.parse(m[1]!) as string[]);

function gateway(prefixes: string[] | null): GatewaySettings {
  return {
    configPath: null, port: 18789, portSource: "default", hooksEnabled: true, hooksToken: "t", hooksPath: "/hooks", maxBodyBytes: null,
    mappingPaths: ["agentgram_inbox/agent", "agentgram_inbox/wake"],
    mappings: [{ path: "agentgram_inbox/agent", action: "agent", sessionKey: "{{sessionKey}}" }, { path: "agentgram_inbox/wake", action: "wake", sessionKey: null }],
    allowRequestSessionKey: true, allowedSessionKeyPrefixes: prefixes,
    auth: { mode: "token", token: null, source: "none", problem: null }, authToken: null, chatCompletionsEnabled: false,
  };
}

function doctorSays(prefixes: string[] | null): { level: Level; what: string; fix: string } {
  const said: { level: Level; what: string; fix: string }[] = [];
  sessionChecks(gateway(prefixes), "agentgram", (level, what, fix) => said.push({ level, what, fix: fix ?? "" }));
  expect(said).toHaveLength(1);
  return said[0]!;
}

/** The gateway's rule (OpenClaw hooks.ts isSessionKeyAllowedByPrefix). */
const allowed = (key: string, prefixes: string[]) => prefixes.some((p) => key.trim().toLowerCase().startsWith(p.trim().toLowerCase()));

/** Every key the renderer writes: each type sent directly, and pulled with and without a room and topic. */
function renderedKeys(): string[] {
  const keys: string[] = [];
  for (const type of ENVELOPE_TYPES) {
    for (const from of ["ag_aaaaaaaaaaaa", "hub"]) {
      const envelope: Envelope = parseEnvelope({ v: "a2a/0.2", msg_id: "m", ts: 1, from, to: "ag_bbbbbbbbbbbb", type, reply_to: "m0", ttl_sec: 60, topic: "t", goal: null, payload: {}, payload_hash: "sha256:0", sig: { alg: "ed25519", key_id: "k", value: "" } });
      keys.push(renderHubMessage(envelope).sessionKey);
      for (const room_id of [null, "rm_dm_ag_aaaaaaaaaaaa_ag_bbbbbbbbbbbb", "rm_0123"]) {
        keys.push(pulledRecordBody(readPulledRecord({ hub_msg_id: "h", room_id, topic: "t" })!, envelope, "signature", null).body.sessionKey as string);
      }
    }
  }
  return keys;
}

describe("hooks.allowedSessionKeyPrefixes: docs, doctor and the keys sent agree", () => {
  it("the docs set one list, with the hub's prefixes and the gateway's own hook:", () => {
    expect(docsLists.length).toBeGreaterThan(0);
    for (const list of docsLists) expect(new Set(list)).toEqual(new Set([...HUB_SESSION_KEY_PREFIXES, "hook:"]));
  });

  it("doctor, given a list without them, advises the docs' list, and is satisfied by it", () => {
    const narrow = doctorSays(["hook:"]);
    expect(narrow.level).toBe("FAIL");
    const advised = JSON.parse(/"allowedSessionKeyPrefixes": (\[[^\]]*\])/.exec(narrow.fix)![1]!) as string[];
    expect(new Set(advised)).toEqual(new Set(docsLists[0]));
    expect(doctorSays(docsLists[0]!).level).toBe("OK");
    // No list at all lets every key through: nothing to add.
    expect(doctorSays(null).level).toBe("OK");
  });

  it("every key the renderer writes, and npm start's demo body, pass the docs' list; the old list refuses the renderer's", () => {
    const keys = renderedKeys();
    expect(new Set(keys).size).toBe(3); // the default, the DM room and a group room (with the topic)
    for (const key of [...keys, DEMO_WEBHOOK_BODY.sessionKey]) expect(allowed(key, docsLists[0]!), key).toBe(true);
    expect(keys.filter((key) => allowed(key, ["agentline:", "hook:"]))).toEqual([]);
  });
});
