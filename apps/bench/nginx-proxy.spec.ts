import { createServer } from 'node:net';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startChildServer } from './child-server.js';
import { nginxConfig, startNginx } from './nginx-proxy.js';

describe('nginxConfig', () => {
  const text = nginxConfig({ port: 18123, upstream: new URL('http://127.0.0.1:18000/v1'), dir: '/tmp/bench-x' });

  it('proxies loopback to the upstream over kept-alive HTTP/1.1, unbuffered, in one process', () => {
    expect(text).toContain('listen 127.0.0.1:18123;');
    expect(text).toMatch(/upstream bench_upstream \{\s+server 127\.0\.0\.1:18000;\s+keepalive \d+;/);
    expect(text).toContain('proxy_http_version 1.1;');
    expect(text).toContain('proxy_set_header Connection "";');
    expect(text).toContain('proxy_buffering off;');
    expect(text).toMatch(/master_process off;\s+worker_processes 1;/);
    expect(text).toContain('daemon off;');
  });

  it('keeps every file it writes in the run folder', () => {
    const paths = [...text.matchAll(/(?:pid|error_log|temp_path)\s+(\S+?);?\s/g)].map((match) => match[1]);
    expect(paths.length).toBeGreaterThanOrEqual(4);
    for (const path of paths) expect(path.startsWith('/tmp/bench-x/')).toBe(true);
  });
});

describe('startChildServer with a program that announces nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'child-server-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('waits until the address accepts connections, and stops the program', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    // Listens after 300 ms, silently.
    const script = `setTimeout(() => require('node:net').createServer().listen(${port}, '127.0.0.1'), 300)`;
    const started = performance.now();
    const server = await startChildServer({
      name: 'silent',
      command: process.execPath,
      args: ['-e', script],
      cwd: dir,
      logPath: join(dir, 'silent.log'),
      listening: new URL(`http://127.0.0.1:${port}`),
      startTimeoutMs: 10_000,
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    expect(server.url.port).toBe(String(port));
    await server.stop();
  });

  it('says so when the program cannot be started', async () => {
    await expect(
      startChildServer({
        name: 'missing',
        command: join(dir, 'no-such-program'),
        args: [],
        cwd: dir,
        logPath: join(dir, 'missing.log'),
        listening: new URL('http://127.0.0.1:9'),
        startTimeoutMs: 5_000,
      }),
    ).rejects.toThrow(/missing could not start/);
  });
});

describe('startNginx', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nginx-proxy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a server that takes the port but is not nginx, after trying other ports', async () => {
    // A stand-in "nginx": it reads the port from the config it is given and answers as someone else.
    const impostor = join(dir, 'impostor.mjs');
    writeFileSync(
      impostor,
      `#!${process.execPath}\n` +
        `import { readFileSync } from 'node:fs'; import { createServer } from 'node:http';\n` +
        `const config = readFileSync(process.argv[process.argv.indexOf('-c') + 1], 'utf8');\n` +
        `const port = Number(/listen 127\\.0\\.0\\.1:(\\d+);/.exec(config)[1]);\n` +
        `createServer((request, response) => response.writeHead(404, { server: 'impostor' }).end()).listen(port, '127.0.0.1');\n`,
    );
    chmodSync(impostor, 0o755);
    await expect(startNginx(impostor, new URL('http://127.0.0.1:9/v1'), dir, 2)).rejects.toThrow(
      /nginx did not come up on a port of its own after 2 tries/,
    );
    expect(readFileSync(join(dir, 'nginx.conf'), 'utf8')).toContain('proxy_pass http://bench_upstream;');
  });
});
