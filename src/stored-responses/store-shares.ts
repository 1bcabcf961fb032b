/** What StoreShares needs of a kept response. */
export interface SharedEntry {
  readonly id: string;
  /** The id of the API key whose response it is ('' on an open gateway). */
  readonly owner: string;
  /** The JSON bytes it holds. */
  readonly bytes: number;
}

interface Holder<Entry> {
  bytes: number;
  count: number;
  /** What its running responses hold, and how many there are. */
  runningBytes: number;
  runningCount: number;
  /** Its finished responses, least recently written first: the ones that may go. */
  finished: Map<string, Entry>;
}

/**
 * Who holds what in the memory store, so that making room is fair. When a bound is passed, what
 * goes is the least recently written finished response of the key holding the most (bytes for
 * the byte bound, responses for the count bound): a key may fill a store that nobody else uses,
 * but one that writes into a full store takes the room from the biggest holder, most often
 * itself, so no key pushes another below an equal share of the store. Running responses never
 * go: they are `pinned`, and their results are not lost to another key's writes. A key's share
 * is the bounds divided by the keys holding something: one holding more than its share in
 * running responses is refused its next (`overShare`), and a key within its share gives no room
 * to another's writes (docs/operations.md#the-memory-response-store).
 */
export class StoreShares<Entry extends SharedEntry> {
  /** The store's bounds: bytes, and responses. */
  constructor(
    private readonly maxBytes = Infinity,
    private readonly maxCount = Infinity,
  ) {}

  private readonly holders = new Map<string, Holder<Entry>>();
  private readonly running = new Set<Entry>();
  /** Bytes of the running responses: what no eviction can free. */
  private runningBytes = 0;

  /** What running responses hold, and how many there are. */
  get pinned(): { bytes: number; count: number } {
    return { bytes: this.runningBytes, count: this.running.size };
  }

  add(entry: Entry): void {
    let holder = this.holders.get(entry.owner);
    if (holder === undefined)
      this.holders.set(
        entry.owner,
        (holder = { bytes: 0, count: 0, runningBytes: 0, runningCount: 0, finished: new Map() }),
      );
    holder.count += 1;
    holder.bytes += entry.bytes;
  }

  remove(entry: Entry): void {
    const holder = this.holders.get(entry.owner);
    if (holder === undefined) return;
    holder.count -= 1;
    holder.bytes -= entry.bytes;
    holder.finished.delete(entry.id);
    if (this.running.delete(entry)) this.unpin(holder, entry.bytes);
    if (holder.count === 0) this.holders.delete(entry.owner);
  }

  /** Call before `entry.bytes` changes to `bytes`. */
  resize(entry: Entry, bytes: number): void {
    const holder = this.holders.get(entry.owner)!;
    holder.bytes += bytes - entry.bytes;
    if (this.running.has(entry)) {
      this.runningBytes += bytes - entry.bytes;
      holder.runningBytes += bytes - entry.bytes;
    }
  }

  /** `entry` was written: it is its holder's newest, running (never to go) or finished. */
  written(entry: Entry, running: boolean): void {
    const holder = this.holders.get(entry.owner)!;
    holder.finished.delete(entry.id);
    if (running) {
      if (!this.running.has(entry)) {
        this.runningBytes += entry.bytes;
        holder.runningBytes += entry.bytes;
        holder.runningCount += 1;
      }
      this.running.add(entry);
      return;
    }
    if (this.running.delete(entry)) this.unpin(holder, entry.bytes);
    holder.finished.set(entry.id, entry);
  }

  /** Whether `owner` holds more than its share of either bound in running responses. */
  overShare(owner: string): boolean {
    const holder = this.holders.get(owner);
    if (holder === undefined) return false;
    const keys = this.holders.size;
    return holder.runningBytes > this.maxBytes / keys || holder.runningCount > this.maxCount / keys;
  }

  private unpin(holder: Holder<Entry>, bytes: number): void {
    this.runningBytes -= bytes;
    holder.runningBytes -= bytes;
    holder.runningCount -= 1;
  }

  /**
   * What goes first to bring back the count bound (`byCount`) or the byte bound; never `spared`,
   * and nothing of another key than `spared`'s that holds no more than its share of that bound.
   */
  victim(byCount: boolean, spared: Entry): Entry | undefined {
    const held = (holder: Holder<Entry>) => (byCount ? holder.count : holder.bytes);
    const share = (byCount ? this.maxCount : this.maxBytes) / this.holders.size;
    const ranked = [...this.holders.entries()].sort(([, a], [, b]) => held(b) - held(a));
    for (const [owner, holder] of ranked) {
      if (owner !== spared.owner && held(holder) <= share) continue;
      for (const entry of holder.finished.values()) if (entry !== spared) return entry;
    }
    return undefined;
  }
}
