// SHA-256 (FIPS 180-4), synchronous, for the hashes the protocol computes inline: payload_hash, agent
// ids, key ids, signed-request body digests, envelope fingerprints. Kept here rather than taken from
// a library so the Worker bundle stays small; test/protocol/hash-and-jcs.test.ts holds it to WebCrypto's
// answers, block boundaries included.

/** The first 32 bits of the fractional parts of the cube roots (K) and square roots (H0) of the first primes. */
const K = new Uint32Array(64);
const H0 = new Uint32Array(8);
for (let n = 2, i = 0; i < 64; n++) {
  let prime = true;
  for (let f = 2; f * f <= n; f++) if (n % f === 0) prime = false;
  if (!prime) continue;
  K[i] = (Math.cbrt(n) % 1) * 2 ** 32;
  if (i < 8) H0[i] = (Math.sqrt(n) % 1) * 2 ** 32;
  i++;
}

const W = new Uint32Array(64);

export function sha256(data: Uint8Array): Uint8Array {
  // The message, a 1 bit, zeros, and its length in bits as a 64-bit big-endian number.
  const padded = new Uint8Array((((data.length + 8) >> 6) + 1) << 6);
  padded.set(data);
  padded[data.length] = 0x80;
  const bits = data.length * 8;
  for (let i = 1; i <= 8; i++) padded[padded.length - i] = Math.floor(bits / 2 ** (8 * (i - 1))) & 0xff;
  const h = H0.slice();
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) {
      const j = off + i * 4;
      W[i] = (padded[j]! << 24) | (padded[j + 1]! << 16) | (padded[j + 2]! << 8) | padded[j + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const a = W[i - 15]!;
      const b = W[i - 2]!;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      W[i] = W[i - 16]! + s0 + W[i - 7]! + s1;
    }
    let a = h[0]!, b = h[1]!, c = h[2]!, d = h[3]!, e = h[4]!, f = h[5]!, g = h[6]!, k = h[7]!;
    for (let i = 0; i < 64; i++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (k + s1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0]! += a;
    h[1]! += b;
    h[2]! += c;
    h[3]! += d;
    h[4]! += e;
    h[5]! += f;
    h[6]! += g;
    h[7]! += k;
  }
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    out[i * 4] = h[i]! >>> 24;
    out[i * 4 + 1] = h[i]! >>> 16;
    out[i * 4 + 2] = h[i]! >>> 8;
    out[i * 4 + 3] = h[i]!;
  }
  return out;
}
