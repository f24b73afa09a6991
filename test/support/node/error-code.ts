// The stable code of the AgentError a call throws (undefined when it throws none): the local agent's
// tests assert codes, not messages, where a caller branches on them.
import { expect } from "vitest";
import { AgentError } from "../../../local-agent/errors.ts";

export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    return (err as AgentError).code;
  }
  return undefined;
}
