// Worker entry: the edge app, the per-inbox Durable Object class and the directory's.
import { app } from "./app.ts";

export { Directory } from "./directory/directory.ts";
export { Inbox } from "./inbox.ts";
export default app;
