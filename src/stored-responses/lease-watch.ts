/** At most this many run-out leases are watched at once; past it the oldest sighting is forgotten (it starts again). */
const MAX_WATCHED = 10_000;

/**
 * Tells a background run whose replica is gone from one that could not renew its lease for a
 * while. A lease is its run's promise to write again before it runs out, and a run keeps it only
 * while the store answers; after an outage every lease has run out, and the runs still alive renew
 * theirs as soon as they can. So a run is left only when this replica has seen the same lease,
 * run out, for a whole lease, with the store answering it all along: one read after an outage
 * proves nothing, and a run alive through it has renewed by the next.
 */
export class LeaseWatch {
  /** Leases seen run out, by response: which one, and since when. */
  private readonly runOut = new Map<string, { leaseUntil: number; since: number }>();
  /** Since when the store has answered without a failure (undefined while it fails). */
  private answeringSince: number | undefined;

  constructor(
    private readonly leaseMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.answeringSince = now();
  }

  answered(): void {
    this.answeringSince ??= this.now();
  }

  failed(): void {
    this.answeringSince = undefined;
  }

  /** Whether the run of response `id`, read now with a lease to `leaseUntil` (ms since the epoch), was left. */
  isLeft(id: string, leaseUntil: number): boolean {
    const now = this.now();
    if (leaseUntil >= now || this.answeringSince === undefined) {
      this.runOut.delete(id);
      return false;
    }
    const seen = this.runOut.get(id);
    if (seen === undefined || seen.leaseUntil !== leaseUntil || seen.since < this.answeringSince) {
      this.runOut.delete(id);
      this.runOut.set(id, { leaseUntil, since: now });
      if (this.runOut.size > MAX_WATCHED) this.runOut.delete(this.runOut.keys().next().value!);
      return false;
    }
    if (now - seen.since < this.leaseMs) return false;
    this.runOut.delete(id);
    return true;
  }
}
