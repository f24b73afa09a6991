// `npm run dev:relay` takes a port (issue 24, item 8: it was fixed to 8787 and `-- --port N` was refused):
// the argument builder, and a real `wrangler dev` answering /healthz on the port asked for.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_DEV_PORT, devRelayArgs } from "../../scripts/dev-relay.ts";
import { LOCAL_EMBEDDING_MODEL } from "../../worker/directory/embeddings/embedding-models.ts";
import { freePort } from "../openclaw/support/real-gateway.ts";

const portOf = (args: string[]) => args.filter((arg, i) => args[i - 1] === "--port");

describe("devRelayArgs", () => {
  it("--port N, -p N, --port=N and PORT set the one --port wrangler gets; the flag wins over PORT", () => {
    expect(portOf(devRelayArgs(["--port", "9999"], {}))).toEqual(["9999"]);
    expect(portOf(devRelayArgs(["-p", "9998"], {}))).toEqual(["9998"]);
    expect(portOf(devRelayArgs(["--port=9997"], {}))).toEqual(["9997"]);
    expect(portOf(devRelayArgs([], { PORT: "9996" }))).toEqual(["9996"]);
    expect(portOf(devRelayArgs(["--port", "9995"], { PORT: "9996" }))).toEqual(["9995"]);
    expect(portOf(devRelayArgs([], {}))).toEqual([String(DEFAULT_DEV_PORT)]);
  });

  it("keeps loopback and the state folder, and passes other arguments to wrangler", () => {
    const args = devRelayArgs(["--port", "9000", "--log-level", "debug", "--live-reload"], {});
    expect(args.slice(0, 3)).toEqual(["dev", "--ip", "127.0.0.1"]);
    expect(args).toContain(".clawrelay-dev/wrangler-state");
    // The relay's config with AI as the local model, and LocalAi beside it (scripts/local-ai/).
    expect(args.filter((arg, i) => args[i - 1] === "-c")).toEqual([".clawrelay-dev/wrangler.dev.toml", ".clawrelay-dev/local-ai.wrangler.toml"]);
    expect(args.filter((arg, i) => args[i - 1] === "--var")).toEqual([`EMBEDDING_MODEL:${LOCAL_EMBEDDING_MODEL}`]);
    expect(args.slice(-3)).toEqual(["--log-level", "debug", "--live-reload"]);
  });

  it.each(["0", "70000", "abc", ""])("refuses the port %j", (port) => {
    expect(() => devRelayArgs(["--port", port], {})).toThrow(/port number/);
  });
});

describe("npm run dev:relay -- --port N", () => {
  it("serves the relay's /healthz on that port", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [join(import.meta.dirname, "../../scripts/dev-relay.ts"), "--port", String(port)], { detached: true, stdio: "ignore", env: { ...process.env, PORT: "1" } });
    try {
      let status = 0;
      for (let i = 0; i < 600 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = await fetch(`http://127.0.0.1:${port}/healthz`).then((res) => res.status, () => 0);
      }
      expect(status, `wrangler dev did not answer on 127.0.0.1:${port} within 60 s`).toBe(200);
    } finally {
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        // already gone
      }
    }
  }, 90_000);
});
