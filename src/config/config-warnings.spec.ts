import { describe, expect, it } from 'vitest';
import { parseConfig } from './config-loader.js';
import { startWarnings } from './config-warnings.js';

const OPEN = 'No API keys (auth.apiKeys) and listening on';

describe('startWarnings', () => {
  it('warns of an open gateway (no API keys) that listens beyond loopback, in one line naming auth.apiKeys', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'gantry.internal']) {
      const warnings = startWarnings(parseConfig({ server: { host } }));
      expect(warnings).toEqual([expect.stringContaining(`${OPEN} ${host}, beyond this machine`)]);
      expect(warnings[0]).not.toContain('\n');
    }
  });

  it('says nothing of a gateway on loopback, or one with API keys', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '::ffff:127.0.0.1'])
      expect(startWarnings(parseConfig({ server: { host } }))).toEqual([]);
    expect(startWarnings(parseConfig({ server: { host: '0.0.0.0' }, auth: { apiKeys: ['sk-secret-key'] } }))).toEqual(
      [],
    );
  });

  it('reads the host as the gateway will listen (a --host given after the file was read)', () => {
    const config = parseConfig({});
    config.server.host = '0.0.0.0';
    expect(startWarnings(config)[0]).toContain(`${OPEN} 0.0.0.0`);
  });
});
