// The screen's hand on the WebDAV drive (/files/dav/, dav.ts): the spec's
// files/* methods store, read and delete a file, but nothing there names a
// folder, renames or moves. The drive does, in one transaction each, with the
// same checks as for a phone or a file manager; the page reaches it with the
// person's session and the session's CSRF token, as `call` reaches the API.
// Another site's page cannot: its cookie is never counted for another origin,
// the drive's OPTIONS answer allows no origin, and a custom method such as
// MOVE needs that allowance before a browser sends it.
import { CallError, csrfToken } from "hearth/ui";

export const DAV = "/files/dav";

/** A folder's path as the drive and the screen's address hold it: "" for the top, "Photos/2025" below. */
export type FolderPath = string;

export const joinPath = (folder: FolderPath, name: string) => (folder ? `${folder}/${name}` : name);
export const parentOf = (path: string) => path.split("/").slice(0, -1).join("/");
export const baseName = (path: string) => path.split("/").pop() ?? "";
/** Whether `path` is `folder` or inside it. */
export const within = (path: string, folder: FolderPath) => folder === "" || path === folder || path.startsWith(`${folder}/`);

/** The drive's address of a file or folder: each name percent-encoded (a # or a space in a name stays in the name). */
export function hrefOf(path: string, folder = false): string {
  const encoded = path.split("/").filter(Boolean).map(encodeURIComponent).join("/");
  return `${DAV}/${encoded}${folder && encoded ? "/" : ""}`;
}

/** What the drive said, in the person's words: its plain-text answer says why. */
async function refusal(res: Response, what: string): Promise<CallError> {
  if (res.status === 401) {
    location.assign(`/signin?next=${encodeURIComponent(location.pathname + location.search)}`);
    return new CallError({ status: 401, kind: "unauthenticated", message: "Signed out: sign in again." });
  }
  // The drive's own refusals are a plain sentence; the instance's (too large, rate limited) its JSON error.
  let said = (await res.text().catch(() => "")).trim();
  try {
    said = (JSON.parse(said) as { error?: { message?: string } }).error?.message ?? said;
  } catch {}
  const kind = res.status === 412 ? "conflict" : res.status === 423 ? "locked" : res.status === 404 ? "not_found" : "refused";
  return new CallError({ status: res.status, kind, message: said ? `${what}: ${said}` : `${what}: the server answered ${res.status}` });
}

async function send(method: string, path: string, headers: Record<string, string> = {}, body?: BodyInit): Promise<Response> {
  try {
    return await fetch(path, { method, credentials: "same-origin", headers: { "x-csrf-token": csrfToken(), ...headers }, body });
  } catch {
    throw new CallError({ status: 0, kind: "offline", message: "The server cannot be reached: nothing was changed. Try again when you are back online.", retry: true });
  }
}

export interface Folder {
  path: FolderPath;
  name: string;
}

/** The folders directly in `folder`, by name. A folder that is not there (moved away meanwhile) is a CallError with status 404. */
export async function foldersIn(folder: FolderPath): Promise<Folder[]> {
  const body = '<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/></D:prop></D:propfind>';
  const res = await send("PROPFIND", hrefOf(folder, true), { depth: "1", "content-type": 'application/xml; charset="utf-8"' }, body);
  if (res.status !== 207) throw await refusal(res, "The folder could not be read");
  const doc = new DOMParser().parseFromString(await res.text(), "application/xml");
  const out: Folder[] = [];
  for (const r of Array.from(doc.getElementsByTagNameNS("DAV:", "response"))) {
    if (!r.getElementsByTagNameNS("DAV:", "collection").length) continue;
    const href = r.getElementsByTagNameNS("DAV:", "href")[0]?.textContent ?? "";
    const path = new URL(href, location.origin).pathname.slice(DAV.length).split("/").filter(Boolean).map(decodeURIComponent).join("/");
    if (path !== folder) out.push({ path, name: baseName(path) });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** Makes a folder; a name already taken there is a CallError with status 405. */
export async function makeFolder(path: FolderPath): Promise<void> {
  const res = await send("MKCOL", hrefOf(path, true));
  if (res.status !== 201) throw await refusal(res, `“${baseName(path)}” was not made`);
}

/**
 * Moves (renames) a file or a folder with everything in it, in one step.
 * Unless `replace`, a name taken at the destination refuses with status 412
 * and nothing moves, so the person can be asked first.
 */
export async function move(from: string, to: string, o: { folder: boolean; replace?: boolean }): Promise<void> {
  const res = await send("MOVE", hrefOf(from, o.folder), { destination: new URL(hrefOf(to, o.folder), location.origin).href, overwrite: o.replace ? "T" : "F" });
  if (res.status !== 201 && res.status !== 204) throw await refusal(res, `“${baseName(from)}” was not moved`);
}

/** Deletes a folder with everything in it. */
export async function removeFolder(path: FolderPath): Promise<void> {
  const res = await send("DELETE", hrefOf(path, true));
  if (res.status !== 204) throw await refusal(res, `“${baseName(path)}” was not deleted`);
}

/**
 * Stores bytes as a file at `path`, with the upload's progress. Unless
 * `replace`, a file of that name already there refuses with status 412
 * (If-None-Match: *) and nothing is written.
 */
export function putFile(path: string, body: Blob, o: { replace?: boolean; progress?: (sent: number, total: number) => void } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", hrefOf(path));
    xhr.setRequestHeader("x-csrf-token", csrfToken());
    if (body.type) xhr.setRequestHeader("content-type", body.type);
    if (!o.replace) xhr.setRequestHeader("if-none-match", "*");
    xhr.upload.onprogress = (e) => e.lengthComputable && o.progress?.(e.loaded, e.total);
    xhr.onload = () => {
      if (xhr.status === 201 || xhr.status === 204) return resolve();
      void refusal(new Response(xhr.responseText || (xhr.status === 413 ? "the file is larger than this server accepts" : ""), { status: xhr.status }), `“${baseName(path)}” was not uploaded`).then(reject);
    };
    xhr.onerror = () => reject(new CallError({ status: 0, kind: "offline", message: "The server cannot be reached: nothing was uploaded.", retry: true }));
    xhr.send(body);
  });
}

/** Every folder inside `folder`, at any depth, each after the folder holding it. */
export async function foldersUnder(folder: FolderPath): Promise<FolderPath[]> {
  const out: FolderPath[] = [];
  for (let level = [folder]; level.length; ) {
    level = (await Promise.all(level.map(foldersIn))).flat().map((f) => f.path);
    out.push(...level);
  }
  return out;
}

/** What Undo writes back after a folder is deleted: the folder, the folders in it and each file's bytes, taken before it went. */
export interface FolderCopy {
  path: FolderPath;
  folders: FolderPath[];
  files: { path: string; body: Blob }[];
}

/**
 * Makes a deleted folder again from its copy: the folder, the folders in it,
 * then each file, never over anything made there meanwhile. A folder made
 * again meanwhile is used as it is; a file whose name was taken meanwhile is
 * left out and named in the error, after the rest are back.
 */
export async function restoreFolder(copy: FolderCopy): Promise<void> {
  for (const path of [copy.path, ...copy.folders]) {
    try {
      await makeFolder(path);
    } catch (e) {
      if ((e as CallError).status !== 405) throw e;
    }
  }
  const taken: string[] = [];
  for (const f of copy.files) {
    try {
      await putFile(f.path, f.body);
    } catch (e) {
      if ((e as CallError).status !== 412) throw e;
      taken.push(`“${f.path}”`);
    }
  }
  if (taken.length) throw new CallError({ status: 412, kind: "conflict", message: `Not brought back, since a file of the same name is there now: ${taken.join(", ")}` });
}
