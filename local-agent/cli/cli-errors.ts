// Turns whatever a command threw into what the person sees: one line `clawrelay: …` (plus the usage
// after a usage mistake) and the exit code — 2 for a usage mistake, 1 for anything else. A stack trace
// only for an unexpected error (not an AgentError or RelayError), and only with --debug. Pure;
// imported by cli.ts, covered by test/node/cli-usage.e2e.test.ts.
import { RelayError } from "../../protocol/index.ts";
import { UsageError } from "./cli-args.ts";
import { usageText } from "./cli-help.ts";
import type { HelpTopic } from "./cli-help.ts";
import { AgentError } from "../errors.ts";

export interface FailureContext {
  /** The command that was running, for the usage under a usage mistake. */
  topic: HelpTopic;
  debug: boolean;
  /** Where the relay URL came from, said after "cannot reach the relay …": "check --relay". */
  relayHint: string;
}

/** relay-api.ts's errors that the hint completes, each with what goes before it. */
const RELAY_HINTS: Record<string, string> = { relay_unreachable: " ", invalid_relay_url: "; " };

const firstLine = (text: string) => text.split("\n")[0] ?? text;

export function failureText(err: unknown, context: FailureContext): { text: string; exitCode: number } {
  if (err instanceof UsageError) return { text: `clawrelay: ${err.message}\n${usageText(err.topic ?? context.topic)}`, exitCode: 2 };
  if (err instanceof AgentError) {
    const before = RELAY_HINTS[err.code];
    const hint = before === undefined ? "" : `${before}${context.relayHint}`;
    return { text: `clawrelay: ${err.message}${hint}`, exitCode: 1 };
  }
  if (err instanceof RelayError) return { text: `clawrelay: ${err.message}`, exitCode: 1 };
  const stack = context.debug && err instanceof Error && err.stack ? `\n${err.stack}` : "";
  const message = err instanceof Error ? firstLine(err.message) || err.name : String(err);
  if (stack) return { text: `clawrelay: unexpected error: ${message}${stack}`, exitCode: 1 };
  return { text: `clawrelay: unexpected error: ${message} (run again with --debug for details)`, exitCode: 1 };
}
