// The OpenClaw plugin's entry (package.json "openclaw.extensions"): registers the clawrelay service,
// which runs the local agent inside the gateway (relay-service.ts). Linked installs
// (`openclaw plugins install -l <checkout>`) load this file as TypeScript; npm installs load the
// built dist/openclaw-plugin/clawrelay-plugin.js.
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
