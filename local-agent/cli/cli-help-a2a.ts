// The help entries of `clawrelay a2a …`: publishing the OpenClaw gateway's A2A channel through the inbox
// (docs/live.md, "A2A"). Pure data; imported by cli-help.ts; covered by test/node/cli-usage.e2e.test.ts
// and live-gateway.e2e.test.ts.
import { json } from "./cli-spec.ts";
import type { CommandSpec, FlagSpec, GroupSpec } from "./cli-spec.ts";

const openclawConfig: FlagSpec = { name: "openclaw-config", value: "FILE", about: "the openclaw.json to read (default: OpenClaw's own lookup)" };

export const A2A_GROUP: GroupSpec = { kind: "group", name: "a2a", summary: "publish the gateway's A2A channel (Agent Card, SendMessage) through the inbox", actions: ["enable", "status", "disable"] };

export const A2A_COMMANDS: CommandSpec[] = [
  {
    kind: "command",
    name: "a2a enable",
    summary: "publish the gateway's A2A channel at the inbox: its peers' tokens (hashed) checked at the relay, calls passed live to the gateway",
    usage: ["a2a enable [--openclaw-config FILE] [--json]"],
    flags: [openclawConfig, json("print the relay's answer as JSON")],
    positionals: 0,
    examples: ["clawrelay a2a enable", "A2A_HERMES_TOKEN=… clawrelay a2a enable"],
  },
  {
    kind: "command",
    name: "a2a status",
    summary: "the relay's view of the inbox's A2A endpoint, and each peer whose token cannot be resolved here",
    usage: ["a2a status [--openclaw-config FILE] [--json]"],
    flags: [openclawConfig, json("print the relay's view as JSON")],
    positionals: 0,
    examples: ["clawrelay a2a status"],
  },
  {
    kind: "command",
    name: "a2a disable",
    summary: "stop publishing the A2A channel at the inbox (the relay forgets the peers' hashes and the card)",
    usage: ["a2a disable [--json]"],
    flags: [json("print the relay's answer as JSON")],
    positionals: 0,
    examples: ["clawrelay a2a disable"],
  },
];
