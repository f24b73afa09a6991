// Webhook sub-paths: what the relay stores after /hooks/ and the local agent appends to the gateway's
// hooks.path. Canonical means one spelling per path and no way out of hooks.path: segments of
// [A-Za-z0-9._~-] only, none "." or "..", none empty, at most SUBPATH_MAX_LENGTH characters. The relay
// refuses anything else at the edge; the agent checks again before it builds a gateway URL.

export const SUBPATH_MAX_LENGTH = 256;

const SEGMENT = /^[A-Za-z0-9._~-]+$/;

export function isCanonicalSubpath(subpath: string): boolean {
  if (subpath.length === 0 || subpath.length > SUBPATH_MAX_LENGTH) return false;
  return subpath.split("/").every((segment) => SEGMENT.test(segment) && segment !== "." && segment !== "..");
}

export type SubpathResult = { ok: true; subpath: string } | { ok: false; problem: string };

/**
 * The canonical sub-path of a request path's raw (still percent-encoded) tail after /hooks/.
 * Decoded once, segment by segment, so an encoded slash or backslash cannot join or split segments;
 * one trailing slash is tolerated (senders append it), anything else that is not canonical is refused.
 */
export function canonicalSubpath(rawTail: string): SubpathResult {
  const tail = rawTail.endsWith("/") ? rawTail.slice(0, -1) : rawTail;
  if (tail.length === 0) return { ok: false, problem: "the sub-path after /hooks/ is empty" };
  if (tail.length > SUBPATH_MAX_LENGTH * 3) return { ok: false, problem: `the sub-path is longer than ${SUBPATH_MAX_LENGTH} characters` };
  const segments: string[] = [];
  for (const raw of tail.split("/")) {
    if (raw === "") return { ok: false, problem: "the sub-path has an empty segment (//)" };
    if (/%2f|%5c/i.test(raw)) return { ok: false, problem: "the sub-path has an encoded slash or backslash" };
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return { ok: false, problem: "the sub-path has invalid percent-encoding" };
    }
    if (segment === "." || segment === "..") return { ok: false, problem: `the sub-path has a "${segment}" segment` };
    if (!SEGMENT.test(segment)) return { ok: false, problem: `the segment "${printable(segment)}" has a character outside [A-Za-z0-9._~-]` };
    segments.push(segment);
  }
  const subpath = segments.join("/");
  if (subpath.length > SUBPATH_MAX_LENGTH) return { ok: false, problem: `the sub-path is longer than ${SUBPATH_MAX_LENGTH} characters` };
  return { ok: true, subpath };
}

/** Control characters shown as escapes, and long segments cut, so an error message stays readable. */
function printable(text: string): string {
  const shown = text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return shown.length > 40 ? `${shown.slice(0, 40)}…` : shown;
}
