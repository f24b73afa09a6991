// The address guard of forwarded posts: a target outside loopback and private networks only when its
// source allows a public one (--allow-public-target), so a relay's word cannot make the agent a proxy
// into the internet. An IP literal is decided by its text (protocol addressClass); a name is checked
// where it is resolved, by the lookup the connection itself uses, so a name that answers a private
// address to one check and a public one to the connect (DNS rebinding) cannot pass. `localhost` is no
// exception: it is loopback by definition (RFC 6761), but /etc/hosts may say otherwise, so the agent
// connects to it only when every address it resolves to is loopback, whatever the source allows.
// And the agent's own local API (status, messages, retry, delegation, the inspector), on this machine at
// its port, is never a target, whatever the source allows: whoever holds a source's URL would otherwise
// read and act on the inbox through it. Imported by app-client.ts and cli/forward-flags.ts; covered by
// test/node/forward-guard.test.ts.
import { lookup as dnsLookup } from "node:dns";
import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { networkInterfaces } from "node:os";
import { addressClass } from "../../protocol/index.ts";

/** Why a target may not be posted to; the reason says how to allow it. */
export class PublicTargetError extends Error {
  override readonly name = "PublicTargetError";
  readonly code = "ECLAWRELAY_PUBLIC_TARGET";
}

/** The fix a refused target's reason names. */
export function allowPublicFix(source: string, target: string): string {
  return `if that app is yours, allow it: clawrelay sources set ${source} --forward ${target} --allow-public-target`;
}

function refusal(host: string, addresses: string[], source: string, target: string): PublicTargetError {
  const where = addresses.length === 1 && addresses[0] === host ? `${host} is a public address` : `${host} resolves to ${addresses.join(", ")}, a public address`;
  return new PublicTargetError(`${where}: the agent forwards only to loopback and private addresses unless the source allows a public target; ${allowPublicFix(source, target)}`);
}

/** Refuses an IP literal or localhost outside loopback and private networks; null for a name (see guardedLookup). */
export function literalRefusal(hostname: string, source: string, target: string): PublicTargetError | null {
  const host = hostname.replace(/^\[(.*)\]$/, "$1");
  return addressClass(host) === "public" ? refusal(host, [host], source, target) : null;
}

/**
 * A `lookup` for node:net that resolves with `base` and fails the connection with PublicTargetError
 * unless every address it would use is loopback or private.
 */
export function guardedLookup(source: string, target: string, base: LookupFunction = dnsLookup as LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const all: LookupAddress[] = Array.isArray(address) ? address : [{ address, family: family ?? 0 }];
      const outside = all.map((a) => a.address).filter((a) => addressClass(a) !== "loopback" && addressClass(a) !== "private");
      if (outside.length > 0) return callback(refusal(hostname, outside, source, target), Array.isArray(address) ? [] : "", family);
      callback(null, address, family);
    });
  };
}

/** Why a target may not be posted to: it is named localhost and resolves outside loopback here. */
export class LocalhostNotLoopbackError extends Error {
  override readonly name = "LocalhostNotLoopbackError";
  readonly code = "ECLAWRELAY_LOCALHOST_NOT_LOOPBACK";
}

/**
 * A `lookup` for localhost (and names under .localhost) that fails the connection with
 * LocalhostNotLoopbackError unless every address it would use is loopback.
 */
export function loopbackLookup(source: string, target: string, base: LookupFunction = dnsLookup as LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const all: LookupAddress[] = Array.isArray(address) ? address : [{ address, family: family ?? 0 }];
      const outside = all.map((a) => a.address).filter((a) => addressClass(a) !== "loopback");
      if (outside.length > 0) {
        const fix = `fix this machine's hosts file (/etc/hosts), or point the source at the loopback address: clawrelay sources set ${source} --forward ${target.replace(hostname, "127.0.0.1")}`;
        return callback(new LocalhostNotLoopbackError(`${hostname} resolves to ${outside.join(", ")} on this machine, not a loopback address: the agent posts to ${hostname} only on loopback; ${fix}`), Array.isArray(address) ? [] : "", family);
      }
      callback(null, address, family);
    });
  };
}

/** Why a target may not be posted to: it is the agent's own local API. */
export class OwnApiTargetError extends Error {
  override readonly name = "OwnApiTargetError";
  readonly code = "ECLAWRELAY_OWN_API_TARGET";
}

/** An address (IP literal or localhost) that reaches this machine: loopback, "0.0.0.0" / "::", or one of its interfaces'. */
export function isThisMachine(address: string): boolean {
  const host = address.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "").replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, "$1");
  if (addressClass(host) === "loopback") return true;
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => i.address.toLowerCase() === host) ?? false);
}

/** The refusal of a post to `host`:`port` when that is the agent's own API; the reason says what to do instead. */
export function ownApiRefusal(host: string, port: number, apiPorts: readonly number[], source: string): OwnApiTargetError | null {
  if (!apiPorts.includes(port) || !isThisMachine(host)) return null;
  return new OwnApiTargetError(
    `${host}:${port} is this machine's clawrelay local API (status, messages, retry and the inspector): an event is never forwarded there, or anyone holding the source's URL could act on the inbox through it; point the source at your app's own port: clawrelay sources set ${source} --forward http://127.0.0.1:PORT/…`,
  );
}

/** A `lookup` that fails the connection with OwnApiTargetError when `hostname` resolves to this machine and `port` is the API's. */
export function apiPortLookup(source: string, port: number, apiPorts: readonly number[], base: LookupFunction = dnsLookup as LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const all: LookupAddress[] = Array.isArray(address) ? address : [{ address, family: family ?? 0 }];
      const own = all.map((a) => ownApiRefusal(a.address, port, apiPorts, source)).find((refused) => refused !== null);
      if (own) return callback(own, Array.isArray(address) ? [] : "", family);
      callback(null, address, family);
    });
  };
}
