// Reads a request body with a byte cap, so an oversized webhook is refused before it is buffered whole.
import { RelayError } from "../protocol/index.ts";

function tooLarge(limit: number): RelayError {
  return new RelayError(
    413,
    "payload_too_large",
    `the body is larger than this inbox's limit of ${limit} bytes; send less. (The default is the OpenClaw gateway's own 256 KiB hook limit; the inbox's owner can change limits.max_body_bytes in a claim, but the gateway refuses bigger hook bodies)`,
  );
}

export async function readBodyCapped(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

export function parseJsonBody(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new RelayError(400, "invalid_json", "the body is not valid JSON");
  }
}
