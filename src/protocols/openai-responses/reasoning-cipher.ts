import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Bound into every tag: a blob sealed for anything else with the same key does not open here. */
const CONTEXT = Buffer.from('gantry/responses/reasoning/v1');

/** Seals reasoning into a reasoning item's `encrypted_content`. */
export interface ReasoningSealer {
  seal(text: string): string;
}

/**
 * Reasoning sealed for a stateless round trip (`include: ["reasoning.encrypted_content"]` with
 * `store: false`): the client keeps an opaque blob and sends it back in `input`, and only a
 * gateway holding the same key can read it (AES-256-GCM, authenticated), for the same API key
 * (`forKey`). Blob: base64 of a version byte, the 12-byte IV, the 16-byte tag, then the
 * ciphertext of the UTF-8 text.
 */
export class ReasoningCipher implements ReasoningSealer {
  private constructor(
    private readonly key: Buffer,
    /** The additional data every tag covers: what the blob was sealed for. */
    private readonly context: Buffer = CONTEXT,
  ) {}

  /** The key is the SHA-256 of `secret`; without one, a random key lives as long as this process. */
  static fromSecret(secret: string | undefined): ReasoningCipher {
    return new ReasoningCipher(
      secret === undefined ? randomBytes(32) : createHash('sha256').update(secret, 'utf8').digest(),
    );
  }

  /**
   * This cipher for one API key (ApiKeyRing's id; '' on an open gateway, which is one scope):
   * the key's id is bound into every tag, so a blob sealed for one key does not open for another.
   */
  forKey(keyId: string): ReasoningCipher {
    return keyId === ''
      ? this
      : new ReasoningCipher(this.key, Buffer.concat([CONTEXT, Buffer.from(`\n${keyId}`, 'utf8')]));
  }

  seal(text: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(this.context);
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /** The text sealed in `blob`, or undefined when this key did not seal it for this API key (altered, foreign, another key's, or made before a restart). */
  open(blob: string): string | undefined {
    const bytes = Buffer.from(blob, 'base64');
    // Node's base64 decoder skips what it cannot read; only the exact encoding of the bytes counts.
    if (bytes.length < 1 + IV_BYTES + TAG_BYTES || bytes[0] !== VERSION || bytes.toString('base64') !== blob)
      return undefined;
    const iv = bytes.subarray(1, 1 + IV_BYTES);
    const tag = bytes.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    try {
      const decipher = createDecipheriv(ALGORITHM, this.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(this.context);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(bytes.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      return undefined;
    }
  }
}
