/**
 * Measures every target `rounds` times, the targets taking turns (A B C A B C ...), and returns
 * each target's measurements in the targets' order. A drift of the machine during the run then
 * weighs on all targets alike instead of on whichever ran during it.
 */
export async function interleave<T, R>(
  targets: readonly T[],
  rounds: number,
  measure: (target: T) => Promise<R>,
): Promise<R[][]> {
  const results = targets.map((): R[] => []);
  for (let round = 0; round < rounds; round += 1) {
    for (const [index, target] of targets.entries()) results[index].push(await measure(target));
  }
  return results;
}
