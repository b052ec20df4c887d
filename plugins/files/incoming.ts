// A body the WebDAV drive received into the blob store's temp space, handed
// to files/put without passing through its arguments: the drive's uploads go
// through the same call as the API's (scopes, limits, prices, size cap) while
// their bytes are never turned into a string and held whole. files/put takes
// it only when called in `withReceived` with an empty `content`.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Received } from "hearth";

const current = new AsyncLocalStorage<Received>();

/** Runs `fn` (a files/put call) with the received body as the file's content. */
export const withReceived = <T>(got: Received, fn: () => Promise<T>): Promise<T> => current.run(got, fn);

/** The received body files/put stores instead of `content`, when it is called for one. */
export const received = (): Received | undefined => current.getStore();
