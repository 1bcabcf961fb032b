import { createHash } from 'node:crypto';

/** Points each member gets on the ring: enough that shares stay within a few percent of even. */
export const VIRTUAL_NODES = 512;

/** A 32-bit position on the ring: the first four bytes of the SHA-1 of `text`. */
export function ringPosition(text: string): number {
  return createHash('sha1').update(text).digest().readUInt32BE(0);
}

/**
 * A consistent-hash ring. Each member is placed at `virtualNodes` points derived from its id
 * alone, so any process that builds a ring of the same ids gets the same ring, whatever their
 * order; a member added or removed takes or gives back only the keys of its own points.
 */
export class HashRing<T> {
  /** Point positions, ascending. */
  private readonly positions: Uint32Array;
  /** The member index that owns each point. */
  private readonly owners: Uint16Array;

  constructor(
    readonly members: ReadonlyArray<{ id: string; member: T }>,
    virtualNodes = VIRTUAL_NODES,
  ) {
    if (members.length > 0xffff) throw new RangeError('a hash ring holds at most 65535 members');
    const points: Array<{ position: number; owner: number; id: string }> = [];
    members.forEach(({ id }, owner) => {
      for (let node = 0; node < virtualNodes; node += 1)
        points.push({ position: ringPosition(`${id}#${node}`), owner, id });
    });
    // Ties (vanishingly rare) are broken by id, so that the order never depends on the members' order.
    points.sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.positions = Uint32Array.from(points, (point) => point.position);
    this.owners = Uint16Array.from(points, (point) => point.owner);
  }

  /**
   * The members in ring order from `position` clockwise, each once: the first owns the key, the
   * next takes it when the first cannot, and so on. Stops early when `accept` returns true.
   */
  walk(position: number, accept: (member: T) => boolean): T | undefined {
    const count = this.positions.length;
    if (count === 0) return undefined;
    const seen = new Uint8Array(this.members.length);
    let left = this.members.length;
    for (
      let step = 0, point = this.firstAtOrAfter(position);
      step < count && left > 0;
      step += 1, point = (point + 1) % count
    ) {
      const owner = this.owners[point];
      if (seen[owner] === 1) continue;
      seen[owner] = 1;
      left -= 1;
      const member = this.members[owner].member;
      if (accept(member)) return member;
    }
    return undefined;
  }

  /** The member that owns `position` (the first clockwise), ignoring any condition. */
  ownerOf(position: number): T | undefined {
    return this.walk(position, () => true);
  }

  private firstAtOrAfter(position: number): number {
    let low = 0;
    let high = this.positions.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.positions[middle] < position) low = middle + 1;
      else high = middle;
    }
    return low === this.positions.length ? 0 : low;
  }
}
