import type { AdmissionClaim, QueueOrder } from '../../src/admission/admission-claim.js';
import { FairQueue, type FairEntry } from '../../src/admission/fair-queue.js';

/** The queue alone, in this process: what one request costs it while `waiting` others wait. */
export interface SchedulerCost {
  order: QueueOrder;
  waiting: number;
  tenants: number;
  /** CPU per request (admitted, settled, and a newcomer put in line), µs. */
  microsPerRequest: number;
  /** Heap comparisons per request. */
  comparisonsPerRequest: number;
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/**
 * Keeps `waiting` requests of `tenants` tenants (weights 1 to 3) in a FairQueue and, `operations`
 * times, admits the next one, settles it with its reported usage and puts a newcomer in line:
 * the scheduler's own cost per request, without HTTP.
 */
export function measureSchedulerCost(
  order: QueueOrder,
  waiting: number,
  tenants: number,
  operations: number,
): SchedulerCost {
  const queue = new FairQueue(order);
  let made = 0;
  const entry = (): FairEntry => {
    made += 1;
    const claim: AdmissionClaim = {
      tenant: `tenant-${made % tenants}`,
      weight: 1 + (made % 3),
      priority: 0,
      background: false,
      promptTokens: 100 + (made % 50),
      maxTokens: 256,
    };
    return { claim };
  };
  const cycle = () => {
    const admitted = queue.dequeue()!;
    admitted.claim.served = { promptTokens: admitted.claim.promptTokens, completionTokens: 20 + (made % 200) };
    queue.settle(admitted);
    queue.enqueue(entry());
  };
  for (let index = 0; index < waiting; index += 1) queue.enqueue(entry());
  // Unmeasured first: the code compiles and the heap settles.
  for (let index = 0; index < operations / 10; index += 1) cycle();
  const comparisons = queue.comparisons;
  const before = cpuMicros();
  for (let index = 0; index < operations; index += 1) cycle();
  return {
    order,
    waiting,
    tenants,
    microsPerRequest: (cpuMicros() - before) / operations,
    comparisonsPerRequest: (queue.comparisons - comparisons) / operations,
  };
}
