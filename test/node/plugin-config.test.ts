// plugins.entries.clawrelay.config read as the plugin reads it, and the changes between the config the
// plugin's agent started with and the one saved now (local-agent/gateway/plugin-config.ts).
import { describe, expect, it } from "vitest";
import { pluginConfigChanges, pluginConfigOf } from "../../local-agent/gateway/plugin-config.ts";

describe("the plugin's config", () => {
  it("keeps the four fields it uses, of the right type, and drops the rest", () => {
    expect(pluginConfigOf({ home: "/h", apiPort: 4100, gatewayPort: 18790, openclawAgent: "openclaw/ops", other: 1 })).toEqual({ home: "/h", apiPort: 4100, gatewayPort: 18790, openclawAgent: "openclaw/ops" });
    expect(pluginConfigOf({ home: "", apiPort: "4100", gatewayPort: 0, openclawAgent: 7 })).toEqual({});
    expect(pluginConfigOf({ apiPort: 0 })).toEqual({ apiPort: 0 }); // 0: any free port
    expect(pluginConfigOf({ apiPort: 70000, gatewayPort: 1.5 })).toEqual({});
    expect(pluginConfigOf(null)).toEqual({});
    expect(pluginConfigOf(["x"])).toEqual({});
  });

  it("names each changed field with its old and new value; none when equal", () => {
    expect(pluginConfigChanges({ home: "/h", apiPort: 4100 }, { home: "/h", apiPort: 4100 })).toEqual([]);
    expect(pluginConfigChanges({ home: "/h", apiPort: 4100 }, { home: "/g" })).toEqual(['home "/h" → "/g"', "apiPort 4100 → (unset)"]);
    expect(pluginConfigChanges({}, { gatewayPort: 18790, openclawAgent: "openclaw" })).toEqual(["gatewayPort (unset) → 18790", 'openclawAgent (unset) → "openclaw"']);
  });
});
