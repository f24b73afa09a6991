// The local agent's one error type: a stable code and a message that says how to fix it.
// Only cli.ts turns it into output and an exit code.

export class AgentError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = "AgentError";
    this.code = code;
  }
}
