// The hooks.mappings entry to suggest for a message the gateway had no mapping for, fitted to its body
// so that pasting it and replaying the message works (classifyProbe in gateway-response.ts puts it in
// the dead shelf's reason). What the gateway 2026.9.6 does with a mapping, seen on it: an agent mapping
// whose messageTemplate renders empty is refused (400 "hook mapping requires message"), a wake mapping
// likewise without text; templates read top-level fields by name (an object renders as JSON) and
// `{{path}}`, but nothing renders the whole body (`{{payload}}` is empty); `deliver: false` keeps a run in
// a gateway without a chat channel from ending "status=error deliveryError=Channel is required".
// Covered by test/node/mapping-fix-suggestion.test.ts and test/openclaw/mapping-fix.interop.test.ts.

export interface MappingSuggestion {
  /** The entry, as a JSON5 object literal in the style of docs/openclaw-setup.md. */
  entry: string;
  /** What else the gateway needs for it, or "". */
  note: string;
}

/** Field names a template may read: the gateway splits expressions on `.` and `[`, and stops at `}`. */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const BLOCKED = new Set(["__proto__", "prototype", "constructor"]);
/** Fields worth naming first in a template for an unknown webhook, when the body has them. */
const TELLING = ["title", "subject", "summary", "event", "type", "action", "status", "name", "description", "content", "data"];
const MAX_FIELDS = 3;

function parseObject(body: Uint8Array | string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(typeof body === "string" ? body : new TextDecoder().decode(body));
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const filled = (value: unknown): value is string => typeof value === "string" && value.trim() !== "";

function literal(fields: [string, string | boolean][]): string {
  return `{ ${fields.map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(", ")} }`;
}

/** Up to three fields a template can read, the telling ones first. */
function templateFields(body: Record<string, unknown>): string[] {
  const usable = Object.keys(body).filter((key) => PLAIN_KEY.test(key) && !BLOCKED.has(key) && body[key] !== null && body[key] !== "");
  const first = TELLING.filter((key) => usable.includes(key));
  return [...first, ...usable.filter((key) => !first.includes(key))].slice(0, MAX_FIELDS);
}

function sessionNote(sessionKey: string): string {
  const colon = sessionKey.indexOf(":");
  const prefix = colon > 0 ? `"${sessionKey.slice(0, colon + 1)}"` : "its prefix";
  return `the sessionKey line needs hooks.allowRequestSessionKey: true and ${prefix} in hooks.allowedSessionKeyPrefixes (or leave the line out)`;
}

/** The mapping that fits `body` at `subpath`. */
export function suggestMapping(subpath: string, body: Uint8Array | string): MappingSuggestion {
  const match = `{ path: ${JSON.stringify(subpath)} }`;
  const parsed = parseObject(body);
  const sessionKey = parsed && filled(parsed.sessionKey) ? parsed.sessionKey : null;
  const withSession = (fields: [string, string | boolean][], persistent: boolean): [string, string | boolean][] =>
    sessionKey ? [...fields, ["sessionKey", "{{sessionKey}}"], ...(persistent ? [["sessionMode", "persistent"] as [string, string]] : [])] : fields;
  const entry = (fields: [string, string | boolean][]) => literal(fields).replace(/^\{ /, `{ match: ${match}, `);
  const note = sessionKey ? sessionNote(sessionKey) : "";

  // A hub's wake body (contact requests): text or body, and a wake mode.
  const wakeText = parsed && (filled(parsed.text) ? "text" : filled(parsed.body) ? "body" : null);
  if (parsed && wakeText && (parsed.mode === "now" || parsed.mode === "next-heartbeat") && !filled(parsed.message)) {
    return { entry: entry(withSession([["action", "wake"], ["textTemplate", `{{${wakeText}}}`]], false)), note };
  }
  const agent = (template: string) => entry(withSession([["action", "agent"], ["messageTemplate", template], ["deliver", false]], true));
  if (parsed && filled(parsed.message)) return { entry: agent("{{message}}"), note };
  if (parsed && wakeText) return { entry: agent(`{{${wakeText}}}`), note };
  const fields = parsed ? templateFields(parsed) : [];
  if (fields.length === 0) {
    // Nothing a template can read (not a JSON object, or an empty one): a fixed text, never empty.
    return { entry: agent("A webhook arrived at {{path}}"), note };
  }
  return { entry: agent(`Webhook ${subpath}: ${fields.map((key) => `${key}={{${key}}}`).join(", ")}`), note };
}
