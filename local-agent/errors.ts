// The local agent's one error type: a stable code and a message that says how to fix it.
// Only cli.ts turns it into output and an exit code.

export class AgentError extends Error {
  readonly code: string;
  /** For a refusal by the relay: its HTTP status; for a refusal by the local API: the status it answers. */
  readonly status: number | undefined;

  constructor(code: string, message: string, status?: number) {
    super(message);
    this.name = "AgentError";
    this.code = code;
    this.status = status;
  }
}
