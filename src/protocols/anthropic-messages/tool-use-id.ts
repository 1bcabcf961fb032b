import { createHash } from 'node:crypto';

/**
 * Tool-use ids in Anthropic's shape (`toolu_01` and base62), made from the engine's own call ids
 * without any state: the engine's id is written into the Anthropic one, and read back out when the
 * client returns it (`tool_use` blocks of the history, `tool_result.tool_use_id`). So an upstream
 * sees its own ids again (a Mistral model on vLLM refuses any other kind), across gateway
 * replicas and restarts. Ids that Gantry did not make (Anthropic's own, another gateway's) fail the
 * check and pass through unchanged.
 *
 * Layout: `toolu_01` + base62(0x01 byte + the engine id in UTF-8) + 4 base62 check characters (a
 * digest of the engine id). The leading byte keeps leading zero bytes of the id.
 */
const PREFIX = 'toolu_01';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const CHECK_LENGTH = 4;
/** Longer ids cannot be Gantry's (an engine id of a few hundred bytes at most): not decoded. */
const MAX_ID_LENGTH = 1024;
const SHAPE = /^toolu_01([0-9A-Za-z]+)$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Engine ids longer than this go out unchanged: their encoding would pass MAX_ID_LENGTH (and cost quadratic time). */
const MAX_ENGINE_ID_BYTES = 512;

/** The Anthropic id for an engine's call id (an over-long one as it is, so that it still maps back). */
export function toAnthropicToolUseId(engineId: string): string {
  if (Buffer.byteLength(engineId, 'utf8') > MAX_ENGINE_ID_BYTES) return engineId;
  const bytes = Buffer.concat([Buffer.of(1), Buffer.from(engineId, 'utf8')]);
  return PREFIX + toBase62(BigInt(`0x${bytes.toString('hex')}`)) + checkOf(engineId);
}

/** The engine's call id inside an id this gateway made; any other id as it is. */
export function fromAnthropicToolUseId(id: string): string {
  if (id.length > MAX_ID_LENGTH) return id;
  const body = SHAPE.exec(id)?.[1];
  if (body === undefined || body.length <= CHECK_LENGTH) return id;
  let hex = fromBase62(body.slice(0, -CHECK_LENGTH)).toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  const bytes = Buffer.from(hex, 'hex');
  if (bytes[0] !== 1) return id;
  let engineId: string;
  try {
    engineId = strictUtf8.decode(bytes.subarray(1));
  } catch {
    return id;
  }
  return checkOf(engineId) === body.slice(-CHECK_LENGTH) ? engineId : id;
}

function checkOf(engineId: string): string {
  const digest = createHash('sha256').update(engineId).digest().readUInt32BE(0);
  return toBase62(BigInt(digest % ALPHABET.length ** CHECK_LENGTH)).padStart(CHECK_LENGTH, '0');
}

function toBase62(value: bigint): string {
  const base = BigInt(ALPHABET.length);
  let digits = '';
  do {
    digits = ALPHABET[Number(value % base)] + digits;
    value /= base;
  } while (value > 0n);
  return digits;
}

function fromBase62(digits: string): bigint {
  const base = BigInt(ALPHABET.length);
  let value = 0n;
  for (const digit of digits) value = value * base + BigInt(ALPHABET.indexOf(digit));
  return value;
}
