// The hint a Stripe event refused for its age gets on the dead shelf. Stripe's SDKs refuse a signature
// whose `t=` is more than 300 s old by default (DEFAULT_TOLERANCE in stripe-node, stripe-python …); the
// relay forwards the provider's signature unchanged (it cannot sign anew without the app's secret), so an
// event that waited — the laptop slept, the app was down, a replay from the shelf — is refused with a 4xx
// whose words ("Timestamp outside the tolerance zone") do not say what to do. The time is read from the
// Stripe-Signature header itself, so a token source carrying Stripe's events gets the hint too. Pure;
// imported by app-response.ts; covered by test/node/forward-delivery.test.ts.

/** Stripe's SDKs' default tolerance for a signature's age. */
export const STRIPE_DEFAULT_TOLERANCE_SEC = 300;
/** The tolerance the recipe suggests: three days covers a weekend away. */
const SUGGESTED_TOLERANCE_SEC = 3 * 24 * 3600;

/** The time a Stripe-Signature header signed (its `t=`), in unix seconds; null when there is none. */
export function stripeSignedAtSec(headers: readonly (readonly [string, string])[]): number | null {
  const header = headers.find(([name]) => name.toLowerCase() === "stripe-signature")?.[1];
  const t = header?.split(",").map((part) => part.trim()).find((part) => part.startsWith("t="))?.slice(2);
  return t !== undefined && /^\d{1,12}$/.test(t) ? Number(t) : null;
}

const ageText = (sec: number): string => (sec < 3600 ? `${Math.round(sec / 60)} min` : sec < 48 * 3600 ? `${Math.round(sec / 3600)} h` : `${Math.round(sec / 86_400)} days`);

/**
 * The recipe for a refused Stripe event signed more than the default tolerance before `postedAtMs`
 * (README, "Signatures age"); null when the request carries no Stripe signature or it was fresh.
 */
export function staleStripeHint(headers: readonly (readonly [string, string])[], postedAtMs: number, messageId: number | null): string | null {
  const signedAtSec = stripeSignedAtSec(headers);
  if (signedAtSec === null) return null;
  const ageSec = Math.floor(postedAtMs / 1000) - signedAtSec;
  if (ageSec <= STRIPE_DEFAULT_TOLERANCE_SEC) return null;
  const replay = `clawrelay messages replay ${messageId ?? "ID"}`;
  return (
    `Stripe signed this event ${ageText(ageSec)} before it was posted, past the ${STRIPE_DEFAULT_TOLERANCE_SEC} s its SDK accepts by default; ` +
    `the relay checked the signature when the event arrived, so give the SDK a longer tolerance — ` +
    `stripe.webhooks.constructEvent(body, signature, secret, ${SUGGESTED_TOLERANCE_SEC}) — then: ${replay}`
  );
}
