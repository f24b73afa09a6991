// The one error type of clawrelay. The Worker turns it into
// {"error":{"code","message"}} with `status`; the local agent's CLI turns it into a message and exit code.

export class RelayError extends Error {
  readonly code: string;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = "RelayError";
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

export interface ErrorBody {
  error: { code: string; message: string };
}

export function errorBody(code: string, message: string): ErrorBody {
  return { error: { code, message } };
}
