// The one node:crypto call the workerd tests make (nodejs_compat provides it): HMAC computed by the
// runtime's Node layer, independent of the relay's WebCrypto verifiers. Declared here because the
// Worker's tsconfig carries no Node types, so that none can leak into Worker code.
declare module "node:crypto" {
  interface Hmac {
    update(data: string | Uint8Array): Hmac;
    digest(encoding: "hex" | "base64"): string;
  }
  export function createHmac(algorithm: "sha256", key: string | Uint8Array): Hmac;
}
