/**
 * The Redis the Redis-backed specs use: .ci/run starts a redis-server and always sets
 * GANTRY_TEST_REDIS_URL; a developer without Redis may leave it unset, and those specs skip.
 */
export const TEST_REDIS_URL = process.env.GANTRY_TEST_REDIS_URL;
if (TEST_REDIS_URL === undefined && process.env.CI) {
  throw new Error('GANTRY_TEST_REDIS_URL must be set in CI (.ci/run starts redis-server and sets it)');
}
