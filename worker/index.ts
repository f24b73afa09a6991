// Worker entry: the edge app and the per-inbox Durable Object class.
import { app } from "./app.ts";

export { Inbox } from "./inbox.ts";
export default app;
