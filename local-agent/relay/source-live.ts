// A source's live answers (protocol/sources.ts SourceView.live_sec, docs/live.md) in words for
// `sources add|set|list` and `listen`. Pure; imported by sources.ts, ../cli/cli-sources.ts and
// ../cli/cli-listen.ts; covered by test/node/live-cli.e2e.test.ts.
import type { SourceView } from "../../protocol/index.ts";

/** Said of a live source; null for one that is not (or from an older relay, which reports no live_sec). */
export function liveText(s: SourceView): string | null {
  if (typeof s.live_sec !== "number") return null;
  const where = s.forward !== null ? "the app's answer" : "the gateway's answer";
  return `Live: while the agent runs, ${where} goes back to the sender (waited for up to ${s.live_sec} s); offline or late, a POST is held and delivered later, a GET is refused (503/504).`;
}

/** What `sources set --live/--no-live` changed; "" when the relay did not report live_sec (an older relay ignores it). */
export function liveSetText(s: SourceView, asked: number | null): string {
  if (s.live_sec === undefined) return `source "${s.name}": the relay did not report live answers (an older relay answers at once and delivers later)`;
  if (typeof s.live_sec === "number") return `source "${s.name}": answered live from now on, waiting up to ${s.live_sec} s for the answer`;
  return asked === null ? `source "${s.name}": answered at once from now on, delivered later (not live)` : "";
}
