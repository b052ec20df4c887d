// A database answer used as soon as it is there. The embedded store answers
// queries synchronously while their type is the promise any store may give,
// as drizzle's own async database type says. Mapping the answer at once when
// it is already a value spares the caller a turn of the event loop; on a
// store that answers over the network it waits for it. Either way the caller
// gets a real promise, as its type says.

/** Maps a query's answer with `f`: at once when the store gave a value, when it resolves when it gave a promise. */
export function mapAnswer<T, U>(answer: T | PromiseLike<T>, f: (value: T) => U): Promise<Awaited<U>> {
  if (answer !== null && typeof answer === "object" && typeof (answer as PromiseLike<T>).then === "function") return Promise.resolve(answer as PromiseLike<T>).then(f) as Promise<Awaited<U>>;
  try {
    return Promise.resolve(f(answer as T)) as Promise<Awaited<U>>;
  } catch (e) {
    return Promise.reject(e);
  }
}

/** A value as a store gives an answer it has at once. */
export const answered = <T>(value: T): Promise<T> => Promise.resolve(value);
