import type { FailoverResults } from './failover-scenario.js';
import { failuresOf, ms } from './report-cells.js';
import { renderTable } from './text-table.js';

/** The failover scenario's table: kills, streams, resumes and the gaps they left. */
export function renderFailover(results: FailoverResults): [title: string, table: string] {
  const { plan, ...run } = results;
  const errors = failuresOf(run.failures);
  return [
    `Mid-stream failover (${plan.streams} streams of ${plan.tokens} tokens, ${plan.tokenIntervalMs} ms apart, over ${plan.replicas} mock replicas; ` +
      `one killed every ${plan.killEveryMs / 1000} s and back ${plan.downMs / 1000} s later, for ${plan.durationMs / 1000} s; gaps between two tokens in ms)`,
    renderTable(
      [
        'kills',
        'streams',
        'completed',
        'with an error',
        'wrong text',
        'resumes',
        'not resumed',
        'resume gap p50',
        'p99',
        'max',
        'other gaps p50',
        'p99',
      ],
      [
        [
          run.kills,
          run.started,
          run.completed,
          errors,
          run.wrongAnswers,
          run.resumes,
          run.resumeFailures,
          ms(run.resumeGap.p50),
          ms(run.resumeGap.p99),
          ms(run.resumeGap.max),
          ms(run.tokenGap.p50),
          ms(run.tokenGap.p99),
        ],
      ],
    ) +
      (errors > 0
        ? `
errors: ${Object.entries(run.failures)
            .map(([reason, count]) => `${reason} ${count}`)
            .join(', ')}`
        : ''),
  ];
}
