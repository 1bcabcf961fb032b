/**
 * The sliding windows of the per-key limits (requests and tokens per minute or per day), as the
 * memory store counts them; the Redis store's scripts do the same arithmetic
 * (redis-limit-scripts.ts). A window of W ms is cut into slices of W / 60: what is counted at time
 * t goes into the slice t falls in, and a slice counts until W has passed since its end. So no
 * span of W ever holds more than the limit, and what was counted comes back between W and
 * W + W / 60 after it (1 s late at most for a minute; 24 min for a day): never early.
 */
export const SLICES_PER_WINDOW = 60;

/** The slices of one window that hold something, by index. */
export type Slices = Map<number, number>;

/** The slice `now` falls in. */
export function sliceAt(now: number, windowMs: number): number {
  return Math.floor(now / (windowMs / SLICES_PER_WINDOW));
}

/** The oldest slice that still counts at `now`; older ones are dropped from `slices`. */
function dropOld(slices: Slices, now: number, windowMs: number): number {
  const oldest = sliceAt(now, windowMs) - SLICES_PER_WINDOW;
  for (const slice of slices.keys()) if (slice < oldest) slices.delete(slice);
  return oldest;
}

/** What the window holds at `now` (old slices dropped). */
export function countOf(slices: Slices, now: number, windowMs: number): number {
  dropOld(slices, now, windowMs);
  let sum = 0;
  for (const amount of slices.values()) sum += amount;
  return sum;
}

/**
 * In how many ms the window will have room for `need` more under `limit` (0: now), as its
 * oldest slices leave; a `need` above the limit never fits: a whole window (and a slice).
 */
export function roomInMs(slices: Slices, now: number, windowMs: number, limit: number, need: number): number {
  let held = countOf(slices, now, windowMs);
  if (held + need <= limit) return 0;
  const sliceMs = windowMs / SLICES_PER_WINDOW;
  if (need > limit) return Math.ceil(windowMs + sliceMs);
  for (const slice of [...slices.keys()].sort((a, b) => a - b)) {
    held -= slices.get(slice)!;
    if (held + need <= limit) return Math.max(1, Math.ceil((slice + SLICES_PER_WINDOW + 1) * sliceMs - now));
  }
  return Math.ceil(windowMs + sliceMs);
}

/** Adds `amount` to slice `slice` (negative: gives back, never below nothing). */
export function addTo(slices: Slices, slice: number, amount: number): void {
  const total = Math.max(0, (slices.get(slice) ?? 0) + amount);
  if (total === 0) slices.delete(slice);
  else slices.set(slice, total);
}
