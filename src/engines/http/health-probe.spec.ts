import { describe, expect, it } from 'vitest';
import { healthProbePaths, judgeProbeStatus } from './health-probe.js';

describe('healthProbePaths', () => {
  it('by default: /health beside the API prefix, then {base}/models', () => {
    expect(healthProbePaths('http://10.0.0.5:8000/v1')).toEqual(['/health', '/v1/models']);
    expect(healthProbePaths('https://gw.example/openai/v1/')).toEqual(['/openai/health', '/openai/v1/models']);
  });

  it('a configured path alone, resolved as a link from the base URL', () => {
    expect(healthProbePaths('http://127.0.0.1:11434/v1', '/api/tags')).toEqual(['/api/tags']);
    expect(healthProbePaths('https://api.example/v1', 'models')).toEqual(['/v1/models']);
    expect(healthProbePaths('https://api.example/v1', '/ping?deep=1')).toEqual(['/ping?deep=1']);
  });
});

describe('judgeProbeStatus', () => {
  it('2xx passes, 5xx and 408 fail, anything else says nothing', () => {
    expect([200, 204].map(judgeProbeStatus)).toEqual(['pass', 'pass']);
    expect([500, 503, 408].map(judgeProbeStatus)).toEqual(['fail', 'fail', 'fail']);
    expect([404, 405, 401, 403, 301, 429].map(judgeProbeStatus)).toEqual(Array(6).fill('inconclusive'));
  });
});
