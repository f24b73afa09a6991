// The stored form of a source event's request (the message's `request` column since schema 5): the
// StoredRequest of protocol/forward.ts as JSON, where — since issue 32 — each credential header's value
// (protocol/credential-headers.ts) may stand as REDACTED_VALUE with the values themselves sealed together
// in `sealed` (sources/kept-credentials.ts seals and opens them). A row stored before holds its headers as
// sent and no `sealed`: it is read as it always was. The same column, one field more: no migration.
// Pure; used by sources/kept-credentials.ts and delivery/ (frames, the owner's queue detail); covered by
// test/worker/kept-credentials.test.ts.
import { isCredentialHeader, redactHeaderPairs } from "../../protocol/index.ts";
import type { StoredRequest } from "../../protocol/index.ts";

export interface KeptRequest extends StoredRequest {
  /** secret-box.ts's sealed JSON of the credentials' [index in headers, value] pairs; absent when none is sealed. */
  sealed?: string;
}

/** A credential's place among the request's headers and its value. */
export type CredentialValue = [index: number, value: string];

export function parseKeptRequest(json: string): KeptRequest {
  return JSON.parse(json) as KeptRequest;
}

/** The request with its credential headers taken out: what a source that delivers to the gateway keeps. */
export function withoutCredentials(request: StoredRequest): StoredRequest {
  return { ...request, headers: request.headers.filter(([name]) => !isCredentialHeader(name)) };
}

/** The request with each credential's value replaced by REDACTED_VALUE, and the values apart (empty when it has none). */
export function splitCredentials(request: StoredRequest): { request: StoredRequest; credentials: CredentialValue[] } {
  const credentials: CredentialValue[] = [];
  request.headers.forEach(([name, value], index) => {
    if (isCredentialHeader(name)) credentials.push([index, value]);
  });
  return { request: { ...request, headers: redactHeaderPairs(request.headers) }, credentials };
}

/** The request as sent: the opened values back in their places (`sealed` dropped). */
export function joinCredentials(request: KeptRequest, credentials: readonly CredentialValue[]): StoredRequest {
  const { sealed: _sealed, ...plain } = request;
  const headers = plain.headers.map(([name, value]): [string, string] => [name, value]);
  for (const [index, value] of credentials) {
    const pair = headers[index];
    // Only a credential's place takes a value back: a tampered index cannot rewrite another header.
    if (pair && isCredentialHeader(pair[0])) pair[1] = value;
  }
  return { ...plain, headers };
}

/**
 * A request whose sealed credentials cannot be opened (the operator removed or changed RECEIPT_KEY_SECRET):
 * the credential headers are left out rather than sent as REDACTED_VALUE to the app.
 */
export function withoutSealed(request: KeptRequest): StoredRequest {
  const { sealed, ...plain } = request;
  return sealed === undefined ? plain : withoutCredentials(plain);
}

/** What the owner is shown (the queue API's detail): every credential redacted, sealed or not. */
export function shownRequest(request: KeptRequest): StoredRequest {
  const { sealed: _sealed, ...plain } = request;
  return { ...plain, headers: redactHeaderPairs(plain.headers) };
}
