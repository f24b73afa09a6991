// What bench/verify-worker.ts can time inside workerd. Apart from the Worker (whose module may export only
// its handler: workerd refuses others), and free of Node imports: the Worker's bundle takes all of it.

/** The webhook-source checks (worker/sources/), each over SOURCE_BODY_BYTES of JSON, as the relay runs them. */
export const SOURCE_OPERATIONS = ["github", "stripe", "slack", "standard-webhooks", "token"] as const;
/** The steps of a signed envelope's intake that grow with its size, each over a 256 KiB payload (relay-cpu.ts prints them). */
export const INTAKE_OPERATIONS = ["utf8-decode", "strict-scan", "json-parse", "jcs", "canonical-check", "sha256", "re-serialise"] as const;
export const VERIFY_OPERATIONS = ["webcrypto", "purejs", "hash-input", ...SOURCE_OPERATIONS, ...INTAKE_OPERATIONS] as const;
export const INTAKE_PAYLOAD_BYTES = 256 * 1024;
export type VerifyOperation = (typeof VERIFY_OPERATIONS)[number];
export const SOURCE_BODY_BYTES = 8 * 1024;
