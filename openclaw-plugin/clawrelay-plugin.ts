// The OpenClaw plugin's entry (package.json "openclaw.extensions"): registers the clawrelay service,
// which runs the local agent inside the gateway (relay-service.ts). The gateway (2026.9.6) loads the
// built dist/openclaw-plugin/clawrelay-plugin.js ("openclaw.runtimeExtensions"), a linked checkout
// (`openclaw plugins install -l`) too: run `npm run build` after editing, then `openclaw plugins reload
// clawrelay`. Covered by test/node/plugin-service.e2e.test.ts and test/openclaw/doctor-plugin.interop.test.ts.
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";
import { PLUGIN_ID, relayService } from "./relay-service.ts";

export default definePluginEntry({
  id: PLUGIN_ID,
  name: "clawrelay",
  description: "A permanent public inbox for this agent: takes messages from the clawrelay relay and posts them into the hooks endpoint; serves the local search/delegate API",
  register(api) {
    api.registerService(relayService(api));
  },
});
