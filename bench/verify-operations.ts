// What bench/verify-worker.ts can be asked to time. Apart from the Worker, whose module may export only
// its handler (workerd refuses other values); imported by the Worker and the benches that drive it.

/** The webhook-source checks (worker/sources/), each over SOURCE_BODY_BYTES of JSON, as the relay runs them. */
export const SOURCE_OPERATIONS = ["github", "stripe", "slack", "standard-webhooks", "token"] as const;
export const VERIFY_OPERATIONS = ["webcrypto", "purejs", "hash-input", ...SOURCE_OPERATIONS] as const;
export type VerifyOperation = (typeof VERIFY_OPERATIONS)[number];
/** About a GitHub push event's size. */
export const SOURCE_BODY_BYTES = 8 * 1024;
