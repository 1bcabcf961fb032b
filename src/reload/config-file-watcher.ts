import { type Stats, statSync } from 'node:fs';

export interface WatchOptions {
  /** How often the file is looked at. */
  intervalMs?: number;
  /** Quiet time after a change before `onChange`, so that a file written in steps is read once. */
  settleMs?: number;
  /** The file's status when it was last read; a change from it, even before the first look, counts. */
  since?: Stats;
}

/** A file's status, or undefined while it cannot be read (being replaced, say). */
export function fileStatus(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

/** Whether two looks at a file saw the same file, unchanged (both missing counts as the same). */
export function sameFileStatus(before: Stats | undefined, after: Stats | undefined): boolean {
  if (before === undefined || after === undefined) return before === after;
  return before.mtimeMs === after.mtimeMs && before.size === after.size && before.ino === after.ino;
}

/**
 * Calls `onChange` when `file` changes (its modification time, size or inode), until the
 * returned function is called. It polls the file's status rather than using inotify: a status
 * follows symbolic links, so a file replaced by a rename (editors) or a Kubernetes ConfigMap's
 * link swap is seen as well as one written in place. Each look compares with the status last
 * seen (Node's watchFile compares with its own first look, which misses a change made before it).
 */
export function watchConfigFile(
  file: string,
  onChange: () => void,
  { intervalMs = 250, settleMs = 100, since }: WatchOptions = {},
): () => void {
  let seen = since ?? fileStatus(file);
  let settling: NodeJS.Timeout | undefined;
  const look = () => {
    const current = fileStatus(file);
    if (current === undefined || sameFileStatus(seen, current)) return;
    seen = current;
    clearTimeout(settling);
    settling = setTimeout(onChange, settleMs);
  };
  const polling = setInterval(look, intervalMs).unref();
  look();
  return () => {
    clearInterval(polling);
    clearTimeout(settling);
  };
}
