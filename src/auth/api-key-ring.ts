import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The accepted API keys, held only as SHA-256 digests. A presented key is digested and compared
 * with every accepted digest by `timingSafeEqual`, without stopping at a match, so neither the
 * answer time nor a key's length tells an attacker how close a guess was.
 */
export class ApiKeyRing {
  private readonly digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.digests = [...new Set(keys)].map(digestOf);
  }

  /** No keys configured: the gateway is open. */
  get isOpen(): boolean {
    return this.digests.length === 0;
  }

  /**
   * A stable, non-secret id of the matching key (a digest prefix, the same on every replica,
   * used to count per-key limits), or undefined when the key is not accepted.
   */
  identify(presented: string): string | undefined {
    const digest = digestOf(presented);
    let match: Buffer | undefined;
    for (const accepted of this.digests) {
      if (timingSafeEqual(digest, accepted)) match = accepted;
    }
    return match === undefined ? undefined : `key-${match.subarray(0, 8).toString('hex')}`;
  }
}

function digestOf(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}
