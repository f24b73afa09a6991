// The platform-free protocol shared by worker/ and local-agent/: no cloudflare:*, hono or node:* here.
export * from "./encoding.ts";
export * from "./errors.ts";
export * from "./identity.ts";
export * from "./payload-hash.ts";
export * from "./ed25519.ts";
export * from "./ed25519-pure.ts";
export * from "./sha256.ts";
export * from "./envelope.ts";
export * from "./verify-envelope.ts";
export * from "./signed-request.ts";
export * from "./frames.ts";
export * from "./limits.ts";
export * from "./queue-item.ts";
export * from "./subpath.ts";
export * from "./hub-prefix.ts";
export * from "./strict-json.ts";
export * from "./sources.ts";
