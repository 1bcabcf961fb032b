import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseWithBuiltInKinds as parseConfig } from '../test/support/config-problems.js';

const here = (file: string) => join(import.meta.dirname, file);
const yamlOf = (file: string) => parse(readFileSync(here(file), 'utf8')) as Record<string, any>;

/** The manifests, each checked against the Kubernetes schema of its kind (throws on a violation). */
const MANIFESTS = {
  configMap: new ConfigMap(yamlOf('kubernetes/configmap.yaml') as never),
  deployment: new Deployment(yamlOf('kubernetes/deployment.yaml') as never),
  service: new Service(yamlOf('kubernetes/service.yaml') as never),
  pdb: new PodDisruptionBudget(yamlOf('kubernetes/pdb.yaml') as never),
  hpa: new HorizontalPodAutoscaler(yamlOf('kubernetes/hpa.yaml') as never),
};

describe('the Kubernetes manifests (deploy/kubernetes)', () => {
  it.each(Object.entries(MANIFESTS))('%s is valid against the Kubernetes schemas', (_name, manifest) => {
    expect(() => manifest.validate()).not.toThrow();
  });

  it('the schema check catches a broken manifest', () => {
    const broken = yamlOf('kubernetes/deployment.yaml');
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'eight thousand';
    expect(() => new Deployment(broken as never).validate()).toThrow();
  });

  const deployment = MANIFESTS.deployment.spec!;
  const pod = deployment.template.spec!;
  const container = pod.containers[0];
  const gantryConfig = parseConfig(parse(MANIFESTS.configMap.data!['gantry.yaml']), 'deploy/kubernetes/configmap.yaml');

  it("carries a gateway configuration that Gantry's own loader accepts", () => {
    expect(gantryConfig.server.host).toBe('0.0.0.0');
    expect(container.ports?.map((port) => port.containerPort)).toEqual([gantryConfig.server.port]);
  });

  it('probes readiness on /ready and liveness on /health', () => {
    expect(container.readinessProbe?.httpGet?.path).toBe('/ready');
    expect(container.livenessProbe?.httpGet?.path).toBe('/health');
  });

  it('gives the drain time to finish: grace period above the preStop pause plus shutdown.drainMs', () => {
    const pauseSeconds = Number(container.lifecycle?.preStop?.exec?.command?.at(-1));
    expect(pauseSeconds).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(
      pauseSeconds * 1000 + gantryConfig.shutdown.drainMs,
    );
  });

  it('gives every replica the same Responses encryption key, from a Secret', () => {
    const key = container.env?.find((variable) => variable.name === 'GANTRY_RESPONSES_ENCRYPTION_KEY');
    expect(key?.valueFrom?.secretKeyRef).toMatchObject({ name: expect.any(String), key: expect.any(String) });
    expect(MANIFESTS.deployment.spec!.replicas).toBeGreaterThan(1);
  });

  it('runs as the non-root user of the image, without privileges', () => {
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(container.securityContext?.allowPrivilegeEscalation).toBe(false);
  });

  it('routes the Service, the budget and the autoscaler to the Deployment', () => {
    const labels = deployment.template.metadata!.labels!;
    const selects = (selector: Record<string, string> | undefined) =>
      Object.entries(selector ?? {}).every(([key, value]) => labels[key] === value);
    expect(selects(MANIFESTS.service.spec!.selector)).toBe(true);
    expect(selects(MANIFESTS.pdb.spec!.selector!.matchLabels)).toBe(true);
    expect(MANIFESTS.hpa.spec!.scaleTargetRef).toMatchObject({
      kind: 'Deployment',
      name: MANIFESTS.deployment.metadata!.name,
    });
    expect(MANIFESTS.pdb.spec!.minAvailable).toBeLessThan(MANIFESTS.hpa.spec!.minReplicas!);
  });
});

describe('the container image and the local stack', () => {
  const dockerfile = readFileSync(here('../Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^(?=FROM )/m).slice(1);
  const [buildStage, finalStage] = stages;
  /** The final stage's install line, as the shell would run it with the build argument LLAMA set to `llama`. */
  const installArguments = (llama: string) => {
    const install = /^RUN (npm install .*?) \\?$/m.exec(finalStage)![1];
    return execFileSync('sh', ['-c', install.replace(/^npm install/, 'echo')], {
      env: { ...process.env, LLAMA: llama },
      encoding: 'utf8',
    })
      .trim()
      .split(' ');
  };

  it('Dockerfile: the gateway built and packed in one stage, the package installed in the other', () => {
    expect(stages).toHaveLength(2);
    expect(buildStage).toMatch(/^RUN npm ci /m);
    expect(buildStage).toMatch(/^RUN npm run build && npm pack .*\/tmp\/gantry\.tgz$/m);
    // Nothing of the repository but the package and the default configuration reaches the image.
    expect(finalStage.match(/^COPY .*$/gm)).toEqual([
      'COPY --from=build /tmp/gantry.tgz /opt/gantry/gantry.tgz',
      'COPY deploy/gantry.yaml /etc/gantry/gantry.yaml',
    ]);
    expect(finalStage).toMatch(/^CMD \["gantry"\]$/m);
  });

  it('Dockerfile: the package installed in /opt/gantry, where a mounted plugin resolves `gantry` (its bin on the PATH)', () => {
    // Not --global: a global install nests Nest under the package, out of a plugin's reach.
    expect(finalStage).toMatch(/^WORKDIR \/opt\/gantry$/m);
    expect(finalStage).toMatch(/^ENV PATH=\/opt\/gantry\/node_modules\/\.bin:\$PATH$/m);
    expect(finalStage.indexOf('WORKDIR /opt/gantry')).toBeLessThan(finalStage.indexOf('RUN npm install'));
    expect(installArguments('false').at(-1)).toBe('./gantry.tgz');
  });

  it('Dockerfile: production dependencies only, and node-llama-cpp only with --build-arg LLAMA=true', () => {
    expect(finalStage).toMatch(/^ARG LLAMA=false$/m);
    expect(installArguments('false')).toEqual([
      '--omit=dev',
      '--omit=optional',
      '--no-audit',
      '--no-fund',
      './gantry.tgz',
    ]);
    expect(installArguments('true')).toEqual(['--omit=dev', '--no-audit', '--no-fund', './gantry.tgz']);
  });

  it('Dockerfile: non-root, health check, SIGTERM', () => {
    expect(finalStage).toMatch(/^USER node$/m);
    expect(finalStage).toMatch(/^HEALTHCHECK .*\n?.*\/health/m);
    expect(finalStage).toMatch(/^STOPSIGNAL SIGTERM$/m);
  });

  it("the image's default configuration and the compose stack's are valid Gantry configurations", () => {
    expect(
      parseConfig(parse(readFileSync(here('gantry.yaml'), 'utf8')), 'deploy/gantry.yaml').models.map(
        (model) => model.name,
      ),
    ).toEqual(['stub']);
    const composed = parseConfig(
      parse(readFileSync(here('compose/gantry.yaml'), 'utf8').replace('{ env: GANTRY_API_KEY }', 'sk-test')),
      'deploy/compose/gantry.yaml',
    );
    expect(composed.models.map((model) => model.engine)).toEqual(['stub', 'http']);
  });

  it('docker-compose.yml: the gateway, Redis and the mock upstream, wired by name', () => {
    const compose = parse(readFileSync(here('../docker-compose.yml'), 'utf8')) as { services: Record<string, any> };
    expect(Object.keys(compose.services).sort()).toEqual(['gantry', 'mock-upstream', 'redis']);
    const config = readFileSync(here('compose/gantry.yaml'), 'utf8');
    expect(config).toContain('redis://redis:6379');
    expect(config).toContain(`http://mock-upstream:${compose.services['mock-upstream'].command.at(-5)}/v1`);
    expect(compose.services.gantry.stop_signal).toBe('SIGTERM');
    // The mock upstream is a companion program: it runs from the build stage, not the gateway's image.
    expect(compose.services['mock-upstream'].build).toEqual({ context: '.', target: 'build' });
    expect(compose.services['mock-upstream'].command.slice(0, 2)).toEqual(['node', 'dist/apps/mock-upstream/main.js']);
  });
});
