// Calls a method of this instance as the signed-in person: the same
// /api/v1 route, validation, scopes, prices and errors as every other client,
// with the session cookie and its CSRF token (published by the shell page).

/** A refusal as the API states it ({ error: { status, kind, message, field? } }), or the server out of reach (status 0). */
export class CallError extends Error {
  readonly status: number;
  readonly kind: string;
  readonly field: string | null;
  readonly retry: boolean;
  constructor(e: { status: number; kind: string; message: string; field?: string | null; retry?: boolean }) {
    super(e.message);
    this.status = e.status;
    this.kind = e.kind;
    this.field = e.field ?? null;
    this.retry = e.retry ?? false;
  }
}

/** The session's CSRF token, from the shell's <meta name="csrf-token">. */
export function csrfToken(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? "";
}

/** Sends the person to sign in, coming back here after. */
export function signIn(): never {
  location.assign(`/signin?next=${encodeURIComponent(location.pathname + location.search)}`);
  throw new CallError({ status: 401, kind: "unauthenticated", message: "Signed out: sign in again." });
}

/** POSTs JSON to one of this instance's own paths with the session's CSRF token; the answer's `result`, or a CallError. */
export async function post<T>(path: string, body: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": csrfToken() },
      body: JSON.stringify(body ?? {}),
    });
  } catch {
    throw new CallError({ status: 0, kind: "offline", message: "The server cannot be reached: nothing was sent. Try again when you are back online.", retry: true });
  }
  const answer = (await res.json().catch(() => null)) as { result?: T; error?: ConstructorParameters<typeof CallError>[0] } | null;
  if (res.ok && answer && "result" in answer) return answer.result as T;
  if (res.status === 401) signIn();
  throw new CallError(answer?.error ?? { status: res.status, kind: "internal", message: `The server answered ${res.status}; nothing was changed.` });
}

/**
 * Calls `service/method` with `args`: `await call("notes/add", { title, text })`.
 * Resolves to the method's result; a refusal throws a CallError whose message
 * (and field, for a bad argument) is written to be shown to the person.
 */
export function call<T = any>(method: string, args: Record<string, unknown> = {}): Promise<T> {
  const [service, name] = method.split("/");
  if (!service || !name) throw new CallError({ status: 400, kind: "invalid_argument", message: `call("service/method", args): got "${method}"` });
  return post<T>(`/api/v1/${encodeURIComponent(service)}/${encodeURIComponent(name)}`, args);
}
