// The Agentline test vector (checked independently with node:crypto and Python when it was written):
// one seed, its key and id, two payload hashes and one envelope signature. Shared by
// test/protocol/test-vector.test.ts and the worked examples of docs/protocol.md.
export const VECTOR = {
  seed: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
  publicKey: "ed25519:A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=",
  agentId: "ag_ff73a0647bbc",
  hashHello: "sha256:cbbbdcd27692344de5dbab3abcaba413fb0f45307267de7081401576df1cb176",
  hashEmpty: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
  /** sig.value of the vector's envelope (msg_id …0001, ts 1700000000, to ag_000000000000, {"text":"hello"}). */
  envelopeSig: "5ic80ANuYcX5E9H7fs5gFmsOTrnaKXIzXUb7w0eCIg7F3LVwYT8ynW2lGYOjgNQKh9ZruLkYInWdli/aJs0xBA==",
} as const;
