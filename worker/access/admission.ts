// Who may claim an inbox and publish a directory card on this deployment: the operator's choice, read
// from the Worker's environment. A public relay left `open` lets anyone who knows its URL create
// inboxes (Durable Objects, storage) on the operator's account (docs/operations.md, "Admission").
//   CLAWRELAY_ADMISSION      open (default) | allowlist | token
//   CLAWRELAY_ALLOWED_AGENTS ag_ ids, separated by commas or spaces (allowlist)
//   CLAWRELAY_CLAIM_TOKEN    a secret the operator hands out (token): sent as x-clawrelay-claim-token
// Used by inbox-routes.ts (claims) and directory/routes.ts (publishing); covered by test/node/admission.e2e.test.ts
// (a relay started with each setting).
import { CLAIM_TOKEN_HEADER, RelayError, constantTimeEqual, isAgentId, sha256 } from "../../protocol/index.ts";

export type Admission = { mode: "open" } | { mode: "allowlist"; allow: ReadonlySet<string> } | { mode: "token"; token: string };

export interface AdmissionEnv {
  CLAWRELAY_ADMISSION?: string;
  CLAWRELAY_ALLOWED_AGENTS?: string;
  CLAWRELAY_CLAIM_TOKEN?: string;
}

const closed = (message: string) => new RelayError(403, "claims_closed", message);

/** The operator's rule; a setting that makes no sense closes claims (it never opens them). */
export function admissionFrom(env: AdmissionEnv): Admission | RelayError {
  const mode = (env.CLAWRELAY_ADMISSION ?? "open").trim().toLowerCase();
  if (mode === "open" || mode === "") return { mode: "open" };
  if (mode === "allowlist") {
    const ids = (env.CLAWRELAY_ALLOWED_AGENTS ?? "").split(/[\s,]+/).filter((id) => id !== "");
    const wrong = ids.find((id): boolean => !isAgentId(id));
    if (wrong !== undefined) return closed(`this relay's operator set CLAWRELAY_ALLOWED_AGENTS with "${wrong.slice(0, 40)}", which is not an ag_ id; claims are closed until it is fixed`);
    return { mode: "allowlist", allow: new Set(ids) };
  }
  if (mode === "token") {
    const token = env.CLAWRELAY_CLAIM_TOKEN ?? "";
    if (token.length < 16) return closed("this relay's operator chose CLAWRELAY_ADMISSION=token without a CLAWRELAY_CLAIM_TOKEN secret of 16+ characters; claims are closed until it is set");
    return { mode: "token", token };
  }
  return closed(`this relay's operator set CLAWRELAY_ADMISSION to "${mode.slice(0, 40)}"; expected open, allowlist or token. Claims are closed until it is fixed`);
}

/** Compared by hash, in constant time: the token's length and content do not show in timing. */
async function tokenMatches(admission: Extract<Admission, { mode: "token" }>, presented: string | null): Promise<boolean> {
  return presented !== null && constantTimeEqual(await sha256(presented), await sha256(admission.token));
}

/**
 * May `agentId` claim a new inbox here? Throws claims_closed saying what would let it in. In token
 * mode the token is needed for the first claim only; an allow-list is checked on every claim.
 */
export async function assertMayClaim(admission: Admission | RelayError, agentId: string, firstClaim: boolean, headers: Headers): Promise<void> {
  if (admission instanceof RelayError) throw admission;
  if (admission.mode === "allowlist" && !admission.allow.has(agentId)) {
    throw closed(`this relay admits listed agents only, and ${agentId} is not listed; ask its operator to add it to CLAWRELAY_ALLOWED_AGENTS`);
  }
  if (admission.mode === "token" && firstClaim && !(await tokenMatches(admission, headers.get(CLAIM_TOKEN_HEADER)))) {
    throw closed(`this relay admits new inboxes with its operator's claim token only: send it as ${CLAIM_TOKEN_HEADER} (clawrelay init --claim-token)`);
  }
}

/** Whether this claim carries the operator's valid claim token (recorded on the inbox for publishing). */
export async function claimHasToken(admission: Admission | RelayError, headers: Headers): Promise<boolean> {
  return !(admission instanceof RelayError) && admission.mode === "token" && (await tokenMatches(admission, headers.get(CLAIM_TOKEN_HEADER)));
}

/** May `agentId`, whose inbox is claimed here (`admittedByToken` if a token admitted it), publish a card? */
export function assertMayPublish(admission: Admission | RelayError, agentId: string, admittedByToken: boolean): void {
  if (admission instanceof RelayError) throw admission;
  if (admission.mode === "allowlist" && !admission.allow.has(agentId)) {
    throw closed(`this relay's directory lists admitted agents only, and ${agentId} is not on CLAWRELAY_ALLOWED_AGENTS`);
  }
  if (admission.mode === "token" && !admittedByToken) {
    throw closed(`this relay's directory lists inboxes admitted with its claim token only; ${agentId}'s inbox was claimed without one (claim it again with clawrelay init --claim-token)`);
  }
}
