// Bindings the workerd tests see: the Worker's own (AI the local model) plus the stand-in hub's URL
// (vitest.config.ts).
import type { Directory } from "../../../worker/directory/directory.ts";
import type { EmbeddingsBinding } from "../../../worker/directory/embeddings/semantic-index.ts";
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
      /** The local model in the vitest process (scripts/local-ai/), as Workers AI is called. */
      AI: EmbeddingsBinding;
      EMBEDDING_MODEL: string;
    }
  }
}
