// The data folder as the container has it: a mount point (a volume at /data)
// whose parent is read-only (compose's read_only: true, / owned by root). It
// cannot be renamed (EBUSY, or EROFS here), and nothing can be written beside
// it. Made without Docker and without root, in a user and mount namespace of
// the process's own (`unshare -rm`): the mounts exist for that process alone
// and go with it, so nothing is left mounted on the machine.
import { spawnSync } from "node:child_process";

/** Whether this machine lets a process make its own mount namespace (unprivileged user namespaces). */
export const mountsPossible = spawnSync("unshare", ["-rm", "true"]).status === 0;

/**
 * The command prefix that runs what follows it with `data` a mount point of
 * its own inside `parent`, which is read-only; the data folder stays writable.
 */
export function asMounted(data: string, parent: string): string[] {
  const script = 'd="$0"; p="$1"; shift; mount --bind "$d" "$d" && mount --rbind "$p" "$p" && mount -o remount,bind,ro "$p" && exec "$@"';
  return ["unshare", "-rm", "sh", "-c", script, data, parent];
}
