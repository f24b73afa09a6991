// The help entries of `clawrelay sources …` and `clawrelay listen`: webhook senders verified at the relay,
// and where their events go. Pure data; covered by test/node/cli-usage.e2e.test.ts.
import { FORWARD_POLICY, LIVE } from "../../protocol/index.ts";
import { json } from "./cli-spec.ts";
import type { CommandSpec, FlagSpec } from "./cli-spec.ts";

const sourceSecret = (about: string): FlagSpec => ({ name: "secret", value: "SECRET", about: `${about}; "-" reads it from stdin, out of the shell's history` });
const forward: FlagSpec = { name: "forward", value: "URL", about: "post its events to this local app instead of the gateway: same method, body and headers (signatures included)" };
const allowPublic: FlagSpec = { name: "allow-public-target", about: "allow a target outside loopback and private networks (the agent then posts to the internet for this source)" };
/** How its events are posted to the app (the relay keeps them with the source; its waiting events follow a change). */
const POLICY_FLAGS: FlagSpec[] = [
  { name: "timeout", value: "SECONDS", about: `a post to the app with no answer within this fails (1-${FORWARD_POLICY.timeoutSecMax}; default ${FORWARD_POLICY.timeoutSec})` },
  {
    name: "retries",
    value: "N",
    about: `how many failed posts (5xx, 408, 429, a time-out, a reset) an event may have before it goes to the dead shelf and the next goes on (0-${FORWARD_POLICY.retriesMax}; default ${FORWARD_POLICY.retries}); an app not listening spends none: its events wait for it`,
  },
  { name: "ordered", about: "post its events one at a time, in the order they came (the default)" },
  { name: "unordered", about: "its events' order does not matter: post several at once, which drains a backlog faster" },
];
const POLICY_USAGE = "[--timeout SECONDS] [--retries N] [--ordered|--unordered]";
/** Live answers (docs/live.md): the app's (or gateway's) answer goes back to the sender while the agent is connected. */
const liveFlag: FlagSpec = {
  name: "live",
  value: "SECONDS",
  optionalValue: true,
  about: `answer its requests live: the relay passes each to the running agent and returns the app's answer (status, headers, body), waiting up to SECONDS (default ${LIVE.deadlineSec}, at most ${LIVE.deadlineSecMax}); held and delivered later when the agent is offline or the answer is late`,
};
const noLive: FlagSpec = { name: "no-live", about: "answer its requests at once and deliver them later (the default for sources; listen's is --live)" };
const LIVE_USAGE = "[--live[=SECONDS]|--no-live]";

export const SOURCE_COMMANDS: CommandSpec[] = [
  {
    kind: "command",
    name: "sources add",
    summary: "give a webhook sender its own verified URL on the inbox",
    usage: [`sources add NAME --kind github|stripe|slack|standard-webhooks|token [--secret SECRET|-] [--subpath PATH | --forward URL [--allow-public-target] ${POLICY_USAGE}] ${LIVE_USAGE} [--json]`],
    flags: [
      { name: "kind", value: "KIND", about: "how its requests are verified: github, stripe, slack, standard-webhooks (Svix, Resend, Clerk …) or token (a secret in the URL)" },
      sourceSecret("the provider's signing secret (required for stripe and slack; github and standard-webhooks get one made if left out; token always does)"),
      { name: "subpath", value: "PATH", about: "where under the gateway's hooks path its events go (default sources/NAME)" },
      forward,
      allowPublic,
      ...POLICY_FLAGS,
      liveFlag,
      noLive,
      json("print the relay's answer as JSON"),
    ],
    positionals: 1,
    examples: [
      "clawrelay sources add github --kind github",
      "echo \"$SLACK_SIGNING_SECRET\" | clawrelay sources add slash --kind slack --secret - --forward http://127.0.0.1:3000/slack/commands --live=3",
      "clawrelay sources add stripe --kind stripe --secret - --forward http://127.0.0.1:3000/webhooks/stripe",
      "clawrelay sources add stripe --kind stripe --secret whsec_…",
      "echo \"$SLACK_SIGNING_SECRET\" | clawrelay sources add slack --kind slack --secret -",
      "clawrelay sources add zapier --kind token",
    ],
  },
  {
    kind: "command",
    name: "sources set",
    summary: "where a source's events go: a local app (--forward URL) or the gateway (--gateway); how they are posted to the app",
    usage: [`sources set NAME (--forward URL [--allow-public-target] | --gateway) ${POLICY_USAGE} ${LIVE_USAGE} [--json]`, `sources set NAME ${POLICY_USAGE} ${LIVE_USAGE} [--json]`],
    flags: [
      forward,
      { name: "gateway", about: "post its events to the gateway's hooks again (under its sub-path)" },
      allowPublic,
      ...POLICY_FLAGS,
      liveFlag,
      noLive,
      json("print the relay's answer as JSON"),
    ],
    positionals: 1,
    examples: [
      "clawrelay sources set stripe --forward http://127.0.0.1:3000/webhooks/stripe",
      "clawrelay sources set stripe --gateway",
      "clawrelay sources set stripe --timeout 10 --retries 3",
      "clawrelay sources set zapier --unordered",
      "clawrelay sources set stripe --live=5",
    ],
  },
  {
    kind: "command",
    name: "sources list",
    summary: "the inbox's sources: kind, where their events go (and how: time-out, retries, order), URL and the last refused request",
    usage: ["sources list [--json]"],
    flags: [json("print the sources as JSON")],
    positionals: 0,
    examples: ["clawrelay sources list"],
  },
  {
    kind: "command",
    name: "sources rotate",
    summary: "a new secret for a source (a new URL for a token source)",
    usage: ["sources rotate NAME [--secret SECRET|-] [--grace SECONDS] [--json]"],
    flags: [
      sourceSecret("the new secret (required for stripe and slack: the one the provider shows); else one is made"),
      { name: "grace", value: "SECONDS", about: "keep the old secret working this long too (at most 604800), while the sender switches" },
      json("print the relay's answer as JSON"),
    ],
    positionals: 1,
    examples: ["clawrelay sources rotate github --grace 3600", "clawrelay sources rotate zapier"],
  },
  {
    kind: "command",
    name: "sources remove",
    summary: "stop taking a source's events (those already in the inbox stay)",
    usage: ["sources remove NAME [--json]"],
    flags: [json("print the relay's answer as JSON")],
    positionals: 1,
    examples: ["clawrelay sources remove github"],
  },
  {
    kind: "command",
    name: "listen",
    summary: "forward every request sent to a public URL to a local port (like ngrok http PORT), kept while you are offline",
    usage: ["listen PORT [--path /PREFIX] [--host HOST] [--name NAME] [--no-live] [--json]"],
    flags: [
      { name: "path", value: "/PREFIX", about: "put this path before the one each request was sent to (…/SECRET/a?x=1 → http://127.0.0.1:PORT/PREFIX/a?x=1)" },
      { name: "host", value: "HOST", about: "the app's host (default 127.0.0.1); one outside loopback and private networks needs --allow-public-target" },
      { name: "name", value: "NAME", about: "the token source to make or reuse (default listen-PORT)" },
      allowPublic,
      { name: "no-live", about: `do not return the app's answers: every request is answered at once and delivered later (by default the app's answer goes back to the sender, within ${LIVE.deadlineSec} s, while the agent runs)` },
      json("print the URL and the source as JSON, and do not run the agent"),
    ],
    positionals: 1,
    examples: ["clawrelay listen 3000", "clawrelay listen 8000 --path /webhooks"],
  },
];
