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
  /** Its finished responses, least recently written first: the ones that may go. */
  finished: Map<string, Entry>;
}

/**
 * Who holds what in the memory store, so that making room is fair. When a bound is passed, what
 * goes is the least recently written finished response of the key holding the most (bytes for
 * the byte bound, responses for the count bound): a key may fill a store that nobody else uses,
 * but one that writes into a full store takes the room from the biggest holder, most often
 * itself, so no key pushes another below an equal share of the store. Running responses never
 * go: they are `pinned`, and their results are not lost to another key's writes.
 */
export class StoreShares<Entry extends SharedEntry> {
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
    if (holder === undefined) this.holders.set(entry.owner, (holder = { bytes: 0, count: 0, finished: new Map() }));
    holder.count += 1;
    holder.bytes += entry.bytes;
  }

  remove(entry: Entry): void {
    const holder = this.holders.get(entry.owner);
    if (holder === undefined) return;
    holder.count -= 1;
    holder.bytes -= entry.bytes;
    holder.finished.delete(entry.id);
    if (this.running.delete(entry)) this.runningBytes -= entry.bytes;
    if (holder.count === 0) this.holders.delete(entry.owner);
  }

  /** Call before `entry.bytes` changes to `bytes`. */
  resize(entry: Entry, bytes: number): void {
    const holder = this.holders.get(entry.owner)!;
    holder.bytes += bytes - entry.bytes;
    if (this.running.has(entry)) this.runningBytes += bytes - entry.bytes;
  }

  /** `entry` was written: it is its holder's newest, running (never to go) or finished. */
  written(entry: Entry, running: boolean): void {
    const holder = this.holders.get(entry.owner)!;
    holder.finished.delete(entry.id);
    if (running) {
      if (!this.running.has(entry)) this.runningBytes += entry.bytes;
      this.running.add(entry);
      return;
    }
    if (this.running.delete(entry)) this.runningBytes -= entry.bytes;
    holder.finished.set(entry.id, entry);
  }

  /** What goes first to bring back the count bound (`byCount`) or the byte bound; never `spared`. */
  victim(byCount: boolean, spared: Entry): Entry | undefined {
    const ranked = [...this.holders.values()].sort((a, b) => (byCount ? b.count - a.count : b.bytes - a.bytes));
    for (const holder of ranked) {
      for (const entry of holder.finished.values()) if (entry !== spared) return entry;
    }
    return undefined;
  }
}
