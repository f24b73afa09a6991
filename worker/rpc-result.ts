// Errors do not keep their class across Durable Object RPC, so an object returns its refusals as
// values and the calling route turns them back into RelayError (and so into the JSON error shape).
import { RelayError } from "../protocol/index.ts";

export type RpcResult<T> = { ok: true; value: T } | { ok: false; status: number; code: string; message: string };

export async function asRpcResult<T>(work: () => Promise<T> | T): Promise<RpcResult<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (err) {
    if (err instanceof RelayError) return { ok: false, status: err.status, code: err.code, message: err.message };
    throw err;
  }
}

export function unwrapRpc<T>(result: RpcResult<T>): T {
  if (!result.ok) throw new RelayError(result.status, result.code, result.message);
  return result.value;
}
