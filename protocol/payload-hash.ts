// payload_hash = "sha256:" + hex(sha256(JCS(payload))), JCS = RFC 8785 (docs/protocol.md, "Envelopes").
// JCS of JSON data is JSON.stringify's own number and string forms with object keys sorted by UTF-16
// code units; test/protocol/hash-and-jcs.test.ts holds this to the canonicalize package on generated values.
import { toHex, utf8 } from "./encoding.ts";
import { sha256 } from "./sha256.ts";

type Serialised = string | undefined;

function serialise(input: unknown, open: Set<object>): Serialised {
  let value = input;
  // toJSON is followed as canonicalize does (a chain, each step checked for cycles).
  const wrappers: object[] = [];
  while (typeof value === "object" && value !== null && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    if (open.has(value)) throw new Error("Circular reference detected");
    open.add(value);
    wrappers.push(value);
    value = (value as { toJSON(): unknown }).toJSON();
  }
  if (value instanceof Number || value instanceof String || value instanceof Boolean) value = value.valueOf();
  let text: Serialised;
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw new Error(Number.isNaN(value) ? "NaN is not allowed" : "Infinity is not allowed");
  } else if (typeof value === "string" && !(value as string & { isWellFormed(): boolean }).isWellFormed()) {
    throw new Error("Lone surrogate is not allowed");
  } else if (typeof value !== "object" || value === null) {
    text = JSON.stringify(value);
  } else {
    if (open.has(value)) throw new Error("Circular reference detected");
    open.add(value);
    if (Array.isArray(value)) {
      text = `[${value.map((item) => serialise(item, open) ?? "null").join(",")}]`;
    } else {
      const record = value as Record<string, unknown>;
      const members: string[] = [];
      for (const key of Object.keys(record).sort()) {
        const member = serialise(record[key], open);
        if (member !== undefined) members.push(`${JSON.stringify(key)}:${member}`);
      }
      text = `{${members.join(",")}}`;
    }
    open.delete(value);
  }
  for (const wrapper of wrappers) open.delete(wrapper);
  return text;
}

export function jcs(value: unknown): string {
  const text = serialise(value, new Set());
  if (text === undefined) throw new TypeError("value cannot be canonicalized as JSON");
  return text;
}

export function payloadHash(payload: unknown): string {
  return "sha256:" + toHex(sha256(utf8(jcs(payload))));
}
