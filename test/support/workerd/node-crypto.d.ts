// The node:crypto calls the workerd tests make (nodejs_compat provides them): HMAC and SHA-256 computed
// by the runtime's Node layer, independent of the relay's WebCrypto code, and synchronous (test agents'
// ids are made inline). Declared here because the Worker's tsconfig carries no Node types, so that none
// can leak into Worker code.
declare module "node:crypto" {
  interface Hmac {
    update(data: string | Uint8Array): Hmac;
    digest(encoding: "hex" | "base64"): string;
  }
  export function createHmac(algorithm: "sha256", key: string | Uint8Array): Hmac;
  export function createHash(algorithm: "sha256"): Hmac;
}
