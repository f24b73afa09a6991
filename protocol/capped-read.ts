// Reading a byte stream whole but never past a cap: chunk by chunk, cancelling the stream the moment
// the cap is passed so the rest never comes in. One reader for what arrives from outside with no
// trusted length: a sender's chunked body (worker/intake/request-body.ts) and a hub's answer
// (hub-api-core.ts). Covered through both: test/worker/hooks.test.ts (a streamed body past the cap) and test/protocol/hub-api-core.test.ts.

/** The stream's bytes, or null when it holds more than `maxBytes` (then it is cancelled). */
export async function readStreamCapped(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array | null> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    total += next.value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined); // The caller's refusal is the report; a failed cancel changes nothing.
      return null;
    }
    chunks.push(next.value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}
