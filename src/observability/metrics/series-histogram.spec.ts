import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesHistogram } from './series-histogram.js';

const config = (registry: Registry) => ({
  name: 'gap_seconds',
  help: 'Gap between outputs.',
  labelNames: ['model', 'api'] as const,
  buckets: [0.001, 0.01, 0.1],
  registers: [registry],
});

describe('SeriesHistogram', () => {
  it('exposes exactly what prom-client’s Histogram exposes for the same observations', async () => {
    const reference = new Registry();
    const fast = new Registry();
    const histogram = new Histogram(config(reference));
    const seriesHistogram = new SeriesHistogram(config(fast));
    const observations: Array<[{ model: string; api: string }, number]> = [
      [{ model: 'a', api: 'chat' }, 0.0005],
      [{ model: 'a', api: 'chat' }, 0.001],
      [{ model: 'a', api: 'chat' }, 0.05],
      [{ model: 'a', api: 'chat' }, 3],
      [{ model: 'b "x"', api: 'messages' }, 0.002],
    ];
    const series = seriesHistogram.series({ model: 'a', api: 'chat' });
    for (const [labels, value] of observations) {
      histogram.observe(labels, value);
      if (labels.model === 'a') series.observe(value);
      else seriesHistogram.observe(labels, value);
    }
    expect(await fast.metrics()).toBe(await reference.metrics());
  });

  it('resolves one series per label set, whatever the key order, and zeroes them on reset', () => {
    const histogram = new SeriesHistogram(config(new Registry()));
    const series = histogram.series({ model: 'a', api: 'chat' });
    expect(histogram.series({ api: 'chat', model: 'a' })).toBe(series);
    series.observe(0.5);
    histogram.reset();
    expect(histogram.series({ model: 'a', api: 'chat' }).count).toBe(0);
    expect([...series.counts, series.sum, series.touched]).toEqual([0, 0, 0, 0, false]);
  });
});
