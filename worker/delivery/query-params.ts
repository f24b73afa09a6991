// Query-string parameters of the inbox's GET routes, refused with one code when out of range.
import { RelayError } from "../../protocol/index.ts";

export function queryInteger(value: string | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  // Decimal digits only: Number() would also read "0x10", "1e3" and " 5".
  const n = /^[0-9]{1,16}$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new RelayError(400, "invalid_query", `${name} must be an integer from ${min} to ${max}`);
  return n;
}
