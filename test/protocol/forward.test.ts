// Forward targets (protocol/forward.ts): which addresses are loopback, private or public; which targets
// the owner may set; how a token source's URL tail joins the target; which of the sender's headers a
// forwarded event keeps.
import { describe, expect, it } from "vitest";
import { addressClass, checkForwardTarget, forwardUrl, keptRequestHeaders } from "../../protocol/index.ts";

describe("addressClass", () => {
  it.each([
    ["127.0.0.1", "loopback"], ["127.255.0.9", "loopback"], ["0.0.0.0", "loopback"], ["localhost", "loopback"], ["app.localhost", "loopback"],
    ["::1", "loopback"], ["[::1]", "loopback"], ["0:0:0:0:0:0:0:1", "loopback"], ["::ffff:127.0.0.1", "loopback"],
    ["10.1.2.3", "private"], ["172.16.0.1", "private"], ["172.31.255.255", "private"], ["192.168.1.20", "private"], ["100.100.1.1", "private"],
    ["fd12:3456::1", "private"], ["fc00::", "private"], ["::ffff:192.168.0.1", "private"], ["[fd00::1%eth0]", "private"],
    ["8.8.8.8", "public"], ["172.32.0.1", "public"], ["169.254.169.254", "public"], ["100.128.0.1", "public"], ["2001:db8::1", "public"],
    ["fe80::1", "public"], ["::ffff:8.8.8.8", "public"],
  ])("%s is %s", (address, expected) => {
    expect(addressClass(address)).toBe(expected);
  });

  it.each(["example.com", "my-laptop.local", "256.1.1.1", "1.2.3", "::1::2", "12345::", "1:2:3:4:5:6:7:8:9"])("%s is not an IP literal: null", (address) => {
    expect(addressClass(address)).toBeNull();
  });
});

describe("checkForwardTarget", () => {
  it("takes loopback, private and named targets and normalizes them", () => {
    expect(checkForwardTarget("http://127.0.0.1:3000/webhooks", false)).toEqual({ ok: true, url: "http://127.0.0.1:3000/webhooks", host: "127.0.0.1", hostClass: "loopback" });
    expect(checkForwardTarget("http://[::1]:8080", false)).toMatchObject({ ok: true, url: "http://[::1]:8080/", hostClass: "loopback" });
    expect(checkForwardTarget("https://192.168.1.9/hook?x=1", false)).toMatchObject({ ok: true, hostClass: "private" });
    expect(checkForwardTarget("http://devbox.lan:3000", false)).toMatchObject({ ok: true, hostClass: null });
  });

  it("refuses a public IP without allowPublic and takes it with", () => {
    const refused = checkForwardTarget("http://8.8.8.8/hook", false);
    expect(refused.ok).toBe(false);
    expect(refused.ok ? "" : refused.problem).toMatch(/--allow-public-target/);
    expect(checkForwardTarget("http://8.8.8.8/hook", true)).toMatchObject({ ok: true, hostClass: "public" });
  });

  it.each([
    ["ftp://127.0.0.1/x", /http:\/\/ or https:\/\//],
    ["http://user:pw@127.0.0.1/", /user name or password/],
    ["http://127.0.0.1/#frag", /fragment/],
    ["not a url", /not a URL/],
    ["", /at most/],
    [`http://127.0.0.1/${"a".repeat(2100)}`, /at most/],
  ])("refuses %s", (value, problem) => {
    const check = checkForwardTarget(value, true);
    expect(check.ok).toBe(false);
    expect(check.ok ? "" : check.problem).toMatch(problem);
  });
});

describe("forwardUrl", () => {
  it.each([
    ["http://127.0.0.1:3000", "", "http://127.0.0.1:3000/"],
    ["http://127.0.0.1:3000", "/stripe/events?x=1", "http://127.0.0.1:3000/stripe/events?x=1"],
    ["http://127.0.0.1:3000/", "/stripe/events", "http://127.0.0.1:3000/stripe/events"],
    ["http://127.0.0.1:3000/prefix", "/a/b", "http://127.0.0.1:3000/prefix/a/b"],
    ["http://127.0.0.1:3000/prefix/", "?x=1&y=2", "http://127.0.0.1:3000/prefix?x=1&y=2"],
    ["http://127.0.0.1:3000/hook?token=t", "/more?x=1", "http://127.0.0.1:3000/hook/more?token=t&x=1"],
    ["http://127.0.0.1:3000", "/a%20b/c", "http://127.0.0.1:3000/a%20b/c"],
  ])("%s + %s = %s", (target, tail, expected) => {
    expect(forwardUrl(target, tail)).toBe(expected);
  });

  it.each(["/../admin", "/a/%2e%2e/b", "/a%2Fb", "/a/./b", "relative", "/a#frag"])("refuses the tail %s", (tail) => {
    expect(forwardUrl("http://127.0.0.1:3000/prefix", tail)).toBeNull();
  });

  it.each([
    // Tomcat/Jetty path parameters: "..;" is ".." once ";params" are cut.
    ["..;", "/..;/admin"], ["..;x=1", "/a/..;x=1/b"], [".;", "/a/.;/b"], ["%2e%2e;", "/%2e%2e;/admin"], ["..%3b (an encoded ;)", "/..%3b/admin"],
    // Decoded twice (a proxy, then the app).
    ["%252e%252e", "/%252e%252e/admin"], ["%252E%252E", "/%252E%252E/admin"], ["%252f", "/a%252f..%252fadmin"], ["%255C", "/a%255C..%255Cadmin"], ["%25252e", "/%25252e%25252e/x"], ["%25%32%65", "/%25%32%65%25%32%65/x"],
    // Escapes that are not UTF-8: lenient decoders read "." in overlong forms.
    ["%C0%AE", "/%C0%AE%C0%AE/admin"], ["%c0%ae", "/%c0%ae/x"], ["%E0%80%AE", "/%E0%80%AE%E0%80%AE/admin"], ["a lone %", "/100%/x"], ["a surrogate", "/%ED%A0%80"],
    // Empty segments, backslashes, names Windows trims to "..", control characters.
    ["//host", "//evil.example/x"], ["a//b", "/a//b"], ["a backslash", "/a\\..\\..\\admin"], ["a lone backslash", "/a\\b"],
    ["...", "/.../x"], [".. and a space", "/..%20/x"], ["%00", "/a%00.json"], ["%0d%0a", "/a%0d%0aX-Injected:%201"],
  ])("refuses a tail with %s (%s)", (_what, tail) => {
    expect(forwardUrl("http://127.0.0.1:3000/prefix", tail)).toBeNull();
    expect(forwardUrl("http://127.0.0.1:3000", tail)).toBeNull();
  });

  it("regression: a tail that resolves beside the target's path, not below it (\"/prefixevil\" under \"/prefix\"), is refused", () => {
    // Built through a backslash before, which a WHATWG URL reads as "/" and then resolves.
    expect(forwardUrl("http://127.0.0.1:3000/prefix", "/a\\..\\..\\prefixevil")).toBeNull();
  });

  it.each([
    ["/webhooks/", "http://127.0.0.1:3000/prefix/webhooks/"],
    ["/a;v=1/b", "http://127.0.0.1:3000/prefix/a;v=1/b"],
    ["/caf%C3%A9/%2E%2Ehidden", "http://127.0.0.1:3000/prefix/caf%C3%A9/%2E%2Ehidden"],
    ["/v1.2/..x/a.b", "http://127.0.0.1:3000/prefix/v1.2/..x/a.b"],
    ["/a%25/b", "http://127.0.0.1:3000/prefix/a%25/b"],
    ["/a?next=//evil/..;/%C0%AE", "http://127.0.0.1:3000/prefix/a?next=//evil/..;/%C0%AE"],
  ])("takes the ordinary tail %s", (tail, expected) => {
    expect(forwardUrl("http://127.0.0.1:3000/prefix", tail)).toBe(expected);
  });
});

describe("keptRequestHeaders", () => {
  it("keeps the sender's headers in order and drops hop-by-hop ones and those added on the way", () => {
    const kept = keptRequestHeaders([
      ["Content-Type", "application/json"],
      ["Stripe-Signature", "t=1,v1=ab"],
      ["Host", "relay.example"],
      ["Content-Length", "12"],
      ["Connection", "keep-alive, X-Hop"],
      ["X-Hop", "1"],
      ["Transfer-Encoding", "chunked"],
      ["CF-Connecting-IP", "203.0.113.9"],
      ["CF-Ray", "x"],
      ["X-Forwarded-For", "203.0.113.9"],
      ["X-Real-IP", "203.0.113.9"],
      ["CDN-Loop", "cloudflare"],
      ["Accept-Encoding", "gzip"],
      ["X-Clawrelay-Source", "forged"],
      ["Authorization", "Bearer app-token"],
      ["User-Agent", "Stripe/1.0"],
    ]);
    expect(kept).toEqual({
      ok: true,
      headers: [["content-type", "application/json"], ["stripe-signature", "t=1,v1=ab"], ["authorization", "Bearer app-token"], ["user-agent", "Stripe/1.0"]],
    });
  });

  it("drops the headers an app believes only from a proxy of its own (client address, URL, method, certificate, signed-in user)", () => {
    const forged: [string, string][] = [
      "Forwarded", "X-Original-URL", "X-Rewrite-URL", "X-Original-URI", "X-Client-IP", "X-Host", "X-Original-Host", "X-HTTP-Method-Override", "X-HTTP-Method",
      "X-Method-Override", "X-Cluster-Client-IP", "Client-IP", "X-Originating-IP", "X-Remote-IP", "X-Remote-Addr", "Fastly-Client-IP", "X-ProxyUser-IP",
      "WL-Proxy-Client-IP", "Proxy-Client-IP", "X-Original-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Envoy-External-Address",
      "X-ARR-ClientCert", "X-SSL-Client-Cert", "X-Amzn-OIDC-Identity", "X-MS-Client-Principal-Name", "X-Goog-Authenticated-User-Email",
      "X-Auth-Request-Email", "Remote-User", "X-Remote-User", "X-WEBAUTH-USER",
    ].map((name): [string, string] => [name, name === "Forwarded" ? "for=127.0.0.1;host=localhost;proto=https" : "127.0.0.1"]);
    const kept = keptRequestHeaders([["Content-Type", "application/json"], ...forged, ["X-Request-Id", "r-1"]]);
    expect(kept).toEqual({ ok: true, headers: [["content-type", "application/json"], ["x-request-id", "r-1"]] });
  });

  it("refuses a kept value the agent cannot send (a control character, text outside ASCII), naming the header; takes spaces and tabs", () => {
    for (const value of ["a\x00b", "a\x01b", "a\x7fb", "a\x1b[31m", "caf\u00e9", "\u20ac", "\u00ff"]) {
      const refused = keptRequestHeaders([["Content-Type", "application/json"], ["X-Note", value]]);
      expect(refused).toMatchObject({ ok: false, code: "invalid_header_value", header: "x-note" });
      expect(refused.ok ? "" : refused.problem).toMatch(/x-note.*visible ASCII/);
    }
    expect(keptRequestHeaders([["X-Note", "a b\tc ~!"]])).toEqual({ ok: true, headers: [["x-note", "a b\tc ~!"]] });
    // Dropped headers are not passed on, so their values do not matter.
    expect(keptRequestHeaders([["X-Forwarded-For", "caf\u00e9"], ["X-Client-IP", "\x01"]]).ok).toBe(true);
  });

  it("refuses more than 64 headers or 16 KiB of them, saying the limits", () => {
    const many = Array.from({ length: 65 }, (_, i): [string, string] => [`x-h${i}`, "v"]);
    const tooMany = keptRequestHeaders(many);
    expect(tooMany).toMatchObject({ ok: false, code: "headers_too_large" });
    expect(tooMany.ok ? "" : tooMany.problem).toMatch(/at most 64 headers/);
    const big = keptRequestHeaders([["x-big", "v".repeat(17 * 1024)]]);
    expect(big.ok).toBe(false);
    expect(keptRequestHeaders([["x-ok", "v".repeat(15 * 1024)]]).ok).toBe(true);
  });
});
