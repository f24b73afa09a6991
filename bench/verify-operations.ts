// What bench/verify-worker.ts can time inside workerd. Apart from the Worker (whose module may export only
// its handler: workerd refuses others), and free of Node imports: the Worker's bundle takes all of it.

/** The webhook-source checks (worker/sources/), each over SOURCE_BODY_BYTES of JSON, as the relay runs them. */
export const SOURCE_OPERATIONS = ["github", "stripe", "slack", "standard-webhooks", "token"] as const;
export const VERIFY_OPERATIONS = ["webcrypto", "purejs", "hash-input", ...SOURCE_OPERATIONS] as const;
export type VerifyOperation = (typeof VERIFY_OPERATIONS)[number];
export const SOURCE_BODY_BYTES = 8 * 1024;
