// Forward targets: a webhook source whose events go to a local app (http://127.0.0.1:3000/…) instead of
// the OpenClaw gateway. Shared by the relay, which keeps the target with the source and each event's
// request (method, the URL's tail, the sender's headers), and the local agent, which posts it there.
// Pure. The relay checks a target when it is set; the agent checks it again, with the address a host
// name resolves to, before every post (local-agent/forward/), so neither alone decides where it goes.
// Covered by test/protocol/forward.test.ts.

/** The methods a forwarded request may have: the relay answers at once, so only requests that carry an event. */
export const FORWARD_METHODS = ["POST", "PUT", "PATCH", "DELETE"] as const;
export type ForwardMethod = (typeof FORWARD_METHODS)[number];

export const FORWARD_URL_MAX_LENGTH = 2048;
/** What the relay keeps of a forwarded request's headers at most (Node's own default limit is 16 KiB). */
export const FORWARD_HEADERS_MAX_BYTES = 16 * 1024;
export const FORWARD_HEADERS_MAX_COUNT = 64;
/** A tail (sub-path and query after a token source's URL) at most. */
export const FORWARD_TAIL_MAX_LENGTH = 2048;

/** What a request sent to a source looked like, kept with its event (the `request` column). */
export interface StoredRequest {
  method: ForwardMethod;
  /** "" or what followed the source's URL: "/stripe/events?x=1", "?x=1" (token sources only). */
  tail: string;
  /** The sender's headers in order, names lower-cased, without hop-by-hop ones and the relay's own. */
  headers: [string, string][];
  /** Set when the event was first sent live and held after its deadline (live.ts): the live request's id. */
  live_rid?: string;
}

/** A delivery frame's `forward`: where the local agent posts this event instead of the gateway. */
export interface ForwardFrame extends StoredRequest {
  /** The source's name (its events keep their order, one at a time). */
  source: string;
  /** The source's target, e.g. http://127.0.0.1:3000/webhooks. */
  target: string;
  /** The owner allowed a target outside loopback and private networks (--allow-public-target). */
  allow_public: boolean;
  /** The source's post time limit (FORWARD_POLICY.timeoutSec when absent: an older relay). */
  timeout_sec?: number;
  /** The source's retry budget for its head (FORWARD_POLICY.retries when absent). */
  retries?: number;
  /** False when the source said its events' order does not matter (posted several at once); absent: ordered. */
  ordered?: boolean;
}

/** Where an address is: only loopback and private ones are forwarded to without --allow-public-target. */
export type AddressClass = "loopback" | "private" | "public";

function ipv4Parts(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return null;
  const numbers = parts.map(Number);
  return numbers.every((n) => n <= 255) ? numbers : null;
}

function classifyIpv4([a, b]: number[]): AddressClass {
  if (a === 127 || a === 0) return "loopback";
  if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168)) return "private";
  // Carrier-grade NAT space, where Tailscale and similar overlay networks number their machines.
  if (a === 100 && b! >= 64 && b! <= 127) return "private";
  // Link-local (169.254/16, a cloud's metadata service among it) is not a place a webhook belongs.
  return "public";
}

/** The 16 bytes of an IPv6 literal (no brackets, no zone), or null. */
function ipv6Bytes(text: string): number[] | null {
  if (!/^[0-9a-f:.]+$/i.test(text) || text.split("::").length > 2) return null;
  let head = text;
  let v4: number[] = [];
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".")) {
    const parts = ipv4Parts(text.slice(lastColon + 1));
    if (!parts) return null;
    v4 = parts;
    head = text.slice(0, lastColon + 1) + "0:0";
  }
  const [left, right] = head.split("::") as [string, string | undefined];
  const groups = (s: string | undefined) => (s ? s.split(":") : []);
  const l = groups(left);
  const r = groups(right);
  const missing = 8 - l.length - r.length;
  if (right === undefined ? missing !== 0 : missing < 1) return null;
  const all = [...l, ...Array<string>(right === undefined ? 0 : missing).fill("0"), ...r];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return null;
  const bytes = all.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]);
  if (v4.length === 4) bytes.splice(12, 4, ...v4);
  return bytes;
}

function classifyIpv6(bytes: number[]): AddressClass {
  const zeroFirst = (n: number) => bytes.slice(0, n).every((b) => b === 0);
  if (zeroFirst(15) && (bytes[15] === 1 || bytes[15] === 0)) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d): the IPv4 address decides.
  if (zeroFirst(10) && bytes[10] === 0xff && bytes[11] === 0xff) return classifyIpv4(bytes.slice(12));
  if ((bytes[0]! & 0xfe) === 0xfc) return "private"; // fc00::/7, unique local
  return "public";
}

/**
 * An IP literal's class (IPv6 with or without brackets); null when `address` is not an IP literal.
 * "localhost" and names under .localhost are loopback by definition (RFC 6761); any other name is null:
 * only the machine that resolves it can tell.
 */
export function addressClass(address: string): AddressClass | null {
  const host = address.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  const v4 = ipv4Parts(host);
  if (v4) return classifyIpv4(v4);
  const v6 = host.includes(":") ? ipv6Bytes(host) : null;
  return v6 ? classifyIpv6(v6) : null;
}

/** "localhost" or a name under .localhost: loopback by definition, though a resolver may say otherwise (/etc/hosts). */
export function isLocalhostName(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return host === "localhost" || host.endsWith(".localhost");
}

/**
 * 0.0.0.0 and :: (and ::ffff:0.0.0.0): the addresses a server listens on to mean "every interface" — not a
 * place to send to. Linux happens to connect them to this machine; other systems refuse them.
 */
export function isUnspecifiedAddress(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  const v4 = ipv4Parts(host);
  if (v4) return v4.every((b) => b === 0);
  const v6 = host.includes(":") ? ipv6Bytes(host) : null;
  if (!v6) return false;
  const mapped = v6.slice(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff;
  return (mapped ? v6.slice(12) : v6).every((b) => b === 0);
}

export type TargetCheck = { ok: true; url: string; host: string; hostClass: AddressClass | null } | { ok: false; problem: string };

/**
 * A forward target as the owner gives it: an absolute http(s) URL with no user name, password or
 * fragment, not an unspecified address (0.0.0.0, ::); an IP literal outside loopback and private
 * networks only with `allowPublic`. A host name passes here (hostClass null) and is checked where it is
 * resolved; so is localhost (loopback here, required to resolve to loopback where it is posted to).
 * `stored`: a target the relay already holds, read by the agent to post to — one set to 0.0.0.0 before
 * those were refused keeps working (Linux and macOS connect it to this machine).
 */
export function checkForwardTarget(value: string, allowPublic: boolean, options: { stored?: boolean } = {}): TargetCheck {
  if (value.length === 0 || value.length > FORWARD_URL_MAX_LENGTH) return { ok: false, problem: `a target is an http:// or https:// URL of at most ${FORWARD_URL_MAX_LENGTH} characters, e.g. http://127.0.0.1:3000/webhooks` };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, problem: `"${value.slice(0, 80)}" is not a URL: give one like http://127.0.0.1:3000/webhooks` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, problem: `a target must be http:// or https://, not ${url.protocol}` };
  if (url.username || url.password) return { ok: false, problem: "a target may not hold a user name or password: they would be shown wherever the target is listed" };
  if (url.hash) return { ok: false, problem: "a target may not have a #fragment: it is never sent" };
  if (isUnspecifiedAddress(url.hostname) && !options.stored) {
    return { ok: false, problem: `${url.hostname} is where a server listens ("every interface"), not an address to send to: give http://127.0.0.1:${url.port || (url.protocol === "https:" ? 443 : 80)}${url.pathname === "/" ? "" : url.pathname} for an app on this machine, or the machine's own address` };
  }
  const hostClass = addressClass(url.hostname);
  if (hostClass === "public" && !allowPublic) {
    return { ok: false, problem: `${url.hostname} is a public address: targets are loopback or private addresses unless you allow a public one (--allow-public-target), so the agent cannot be made a proxy to the internet` };
  }
  return { ok: true, url: url.href, host: url.hostname, hostClass };
}

/**
 * One segment of a tail's path as a server behind the target may read it: percent-decoded once as
 * UTF-8 and cut at its first ";" (Tomcat and Jetty drop ";params" before they resolve "..", so "..;x"
 * is ".." to them). Null when the escapes are not UTF-8 (an overlong "%C0%AE", a lone "%", a surrogate):
 * a lenient decoder may read "." there.
 */
function decodedSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment).split(";")[0]!;
  } catch {
    // URIError is how decodeURIComponent says "not UTF-8 escapes": refused by the caller, not a failure here.
    return null;
  }
}

/**
 * Whether a tail's path could step out of the target's path on some server behind it: an empty segment
 * ("//host/…" reads as a host to some routers and URL joiners), a backslash (a "/" to WHATWG URLs and
 * Windows servers), a segment that decodes to "/", "\\", a control character or only dots and spaces
 * (".", "..", "..;x", "%2e%2e", and "..." or ".. ", which Windows trims to ".."), escapes that are not
 * UTF-8, or an escape of "%" before "." "/" "\\" (decoded twice by a proxy and then the app: "%252e%252e").
 */
function leavesPath(path: string): boolean {
  if (path.includes("\\") || path.includes("//")) return true;
  return path
    .split("/")
    .slice(1)
    .some((segment) => {
      const decoded = decodedSegment(segment);
      return decoded === null || /[/\\\x00-\x1f\x7f]/.test(decoded) || /^[. ]+$/.test(decoded) || /%(?:25)*(?:2e|2f|5c)/i.test(decoded);
    });
}

/**
 * The URL a forwarded request goes to: the target's path with the tail's path after it, the target's
 * query then the tail's. Null when the tail would leave the target's path (leavesPath) or is not a path
 * and query.
 */
export function forwardUrl(target: string, tail: string): string | null {
  const base = new URL(target);
  if (tail === "") return base.href;
  const match = /^(\/[^?#]*)?(?:\?([^#]*))?$/.exec(tail);
  if (!match) return null;
  const [, path = "", query] = match;
  if (leavesPath(path)) return null;
  const basePath = base.pathname.replace(/\/+$/, "");
  const joined = new URL(base.href);
  joined.pathname = `${basePath}${path}` || "/";
  // At a segment's boundary: "/prefix" is not a parent of "/prefixevil".
  if (joined.pathname !== basePath && !joined.pathname.startsWith(`${basePath}/`)) return null;
  const queries = [base.search.slice(1), query ?? ""].filter((q) => q !== "");
  joined.search = queries.length > 0 ? `?${queries.join("&")}` : "";
  return joined.href;
}

/** Headers that belong to one connection (RFC 9110 §7.6.1), or that the poster sets itself. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers", "transfer-encoding", "upgrade", "host", "content-length", "expect"]);
/** What Cloudflare and the relay add on the way in: not the sender's. accept-encoding: the agent reads the answer. */
const ADDED_ON_THE_WAY = /^(?:cf-|x-forwarded-|x-clawrelay-)|^(?:cdn-loop|x-real-ip|true-client-ip|accept-encoding)$/;
/**
 * Headers an app believes because it thinks a proxy of its own set them: the client's address, the URL
 * or method the proxy saw, a client certificate, the user an auth proxy signed in. The local app has no
 * such proxy in front of it here (the relay is not one it knows), so from a sender they are forgeries.
 */
const PROXY_TRUST = new Set([
  "forwarded", "x-original-url", "x-original-uri", "x-rewrite-url", "x-original-method",
  "x-http-method-override", "x-http-method", "x-method-override",
  "x-host", "x-original-host", "x-http-host-override", "x-scheme", "x-url-scheme", "front-end-https", "x-arr-ssl",
  "x-client-ip", "client-ip", "x-cluster-client-ip", "x-originating-ip", "x-remote-ip", "x-remote-addr", "x-original-remote-addr",
  "fastly-client-ip", "x-proxyuser-ip", "wl-proxy-client-ip", "proxy-client-ip", "x-azure-clientip", "x-azure-socketip", "x-appengine-user-ip", "x-original-forwarded-for",
  "x-arr-clientcert", "x-client-cert", "ssl-client-cert", "x-client-verify",
  "remote-user", "x-remote-user", "x-webauth-user", "x-authenticated-user", "x-goog-iap-jwt-assertion",
]);
const PROXY_TRUST_PREFIX = /^(?:x-envoy-|x-amzn-oidc-|x-ms-client-principal|x-goog-authenticated-user-|x-auth-request-|x-ssl-client-)/;
/** A header value passed on as it came (Node refuses control characters; other bytes would be re-encoded); live.ts's answers too. */
export const SENDABLE_HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/** Header entries with their names lower-cased, and the names a Connection header lists (each as hop-by-hop as it: RFC 9110 §7.6.1). */
export function lowerCasedHeaders(entries: Iterable<[string, string]>): { all: [string, string][]; connectionNamed: Set<string> } {
  const all = [...entries].map(([name, value]): [string, string] => [name.toLowerCase(), value]);
  const connectionNamed = new Set(all.filter(([name]) => name === "connection").flatMap(([, value]) => value.toLowerCase().split(",").map((s) => s.trim())));
  return { all, connectionNamed };
}

export type KeptHeaders =
  | { ok: true; headers: [string, string][] }
  /** `code` is the relay's error code for it: 431 headers_too_large, or 400 invalid_header_value (`header` names it). */
  | { ok: false; code: "headers_too_large"; problem: string }
  | { ok: false; code: "invalid_header_value"; header: string; problem: string };

/**
 * The sender's headers a forwarded event keeps: all but hop-by-hop ones (and those Connection names),
 * those added on the way in and those only a trusted proxy may set. Refused: more than the limits, or a
 * kept value the agent could not send as it came (outside visible ASCII, space and tab).
 */
export function keptRequestHeaders(entries: Iterable<[string, string]>): KeptHeaders {
  const { all, connectionNamed } = lowerCasedHeaders(entries);
  const dropped = (name: string) => HOP_BY_HOP.has(name) || ADDED_ON_THE_WAY.test(name) || PROXY_TRUST.has(name) || PROXY_TRUST_PREFIX.test(name) || connectionNamed.has(name);
  const kept = all.filter(([name]) => !dropped(name));
  const bytes = kept.reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0);
  if (kept.length > FORWARD_HEADERS_MAX_COUNT || bytes > FORWARD_HEADERS_MAX_BYTES) {
    return { ok: false, code: "headers_too_large", problem: `the request has ${kept.length} headers of ${bytes} bytes; a forwarded request keeps at most ${FORWARD_HEADERS_MAX_COUNT} headers and ${FORWARD_HEADERS_MAX_BYTES} bytes of them` };
  }
  const unsendable = kept.find(([, value]) => !SENDABLE_HEADER_VALUE.test(value));
  if (unsendable) {
    const [header] = unsendable;
    return { ok: false, code: "invalid_header_value", header, problem: `the value of header ${header} holds a character the agent cannot pass on to a local app as it came: header values are visible ASCII, spaces and tabs (a control character, or text outside ASCII, which has no single byte form)` };
  }
  return { ok: true, headers: kept };
}
