// Bindings the workerd tests see: the Worker's own plus the stand-in hub's URL (vitest.config.ts).
import type { Directory } from "../../../worker/directory/directory.ts";
import type { Inbox } from "../../../worker/inbox.ts";

declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import("../../../worker/index.ts");
      durableNamespaces: "Inbox" | "Directory";
    }
    interface Env {
      INBOX: DurableObjectNamespace<Inbox>;
      DIRECTORY: DurableObjectNamespace<Directory>;
      DEFAULT_HUB_URL: string;
      TEST_HUB_URL: string;
      RECEIPT_KEY_SECRET: string;
    }
  }
}
