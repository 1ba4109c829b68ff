import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { heapArgsOf, SERVICE_HEAPS, type NodeHeap } from '@ota/devstack';
import { statusCacheOverHeap } from '../../services/rollout/src/domain/device-status-cache';

// The Helm chart, checked the way CI can without a cluster: helm lint --strict, helm template with
// the default, the all-features and the documented example values, every rendered object decoded
// strictly into the Kubernetes API types (deploy/k8s-validate, offline), and the invariants a
// platform team relies on.

const root = join(__dirname, '..', '..');
const chart = join(root, 'helm', 'ota');
const bin = (name: string) => {
  const path = join(root, '.tools', 'bin', name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run the tests with \`npm test\`, which builds helm and k8s-validate`);
  return path;
};
const COMPONENTS = ['gateway', 'registry', 'artifacts', 'rollout', 'telemetry'] as const;

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: any; data?: any; stringData?: any };

function helm(args: string[]): { status: number; stdout: string; stderr: string } {
  const result = spawnSync(bin('helm'), args, { encoding: 'utf8' });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

function render(valuesFiles: string[], sets: string[] = []): { manifest: string; objects: K8sObject[] } {
  const result = helm(['template', 'ota', chart, '--namespace', 'fleet', ...valuesFiles.flatMap((file) => ['-f', file]), ...sets.flatMap((set) => ['--set', set])]);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  const objects = parseAllDocuments(result.stdout)
    .map((document) => document.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
  return { manifest: result.stdout, objects };
}

/** The defaults plus the one value an install must give (gateway.publicBaseUrl). */
const MINIMAL = join(chart, 'ci', 'minimal-values.yaml');

const VALUE_SETS: Record<string, string[]> = {
  default: [MINIMAL],
  'all features': [join(chart, 'ci', 'all-features-values.yaml')],
  'the operations guide example': [join(chart, 'examples', 'external-stores.yaml')],
};

describe.each(Object.entries(VALUE_SETS))('the chart with %s values', (_name, valuesFiles) => {
  const { manifest, objects } = render(valuesFiles);
  const ofKind = (kind: string) => objects.filter((object) => object.kind === kind);
  const component = (object: K8sObject) => object.metadata.labels?.['app.kubernetes.io/component'];
  const podSpecs = () => [
    ...ofKind('Deployment').map((d) => ({ owner: `Deployment/${d.metadata.name}`, pod: d.spec.template.spec })),
    ...ofKind('Job').map((j) => ({ owner: `Job/${j.metadata.name}`, pod: j.spec.template.spec })),
  ];
  const containersOf = (pod: any): any[] => [...(pod.initContainers ?? []), ...pod.containers];

  it('passes helm lint --strict', () => {
    const result = helm(['lint', '--strict', chart, ...valuesFiles.flatMap((file) => ['-f', file])]);
    expect(result.stderr + result.stdout).toContain('0 chart(s) failed');
    expect(result.status).toBe(0);
  });

  it('renders only objects that decode strictly into the Kubernetes API types', () => {
    const result = spawnSync(bin('k8s-validate'), [], { input: manifest, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^\d+ objects checked, 0 invalid/);
    expect(result.status).toBe(0);
  });

  it('runs every component with its Deployment, Service, ServiceAccount and disruption budget', () => {
    for (const name of COMPONENTS) {
      for (const kind of ['Deployment', 'Service', 'ServiceAccount']) {
        expect([kind, ofKind(kind).filter((object) => component(object) === name)]).toEqual([kind, [expect.anything()]]);
      }
    }
    for (const pdb of ofKind('PodDisruptionBudget')) {
      const target = ofKind('Deployment').find((d) => component(d) === component(pdb))!;
      expect(target.spec.selector.matchLabels).toEqual(pdb.spec.selector.matchLabels);
    }
  });

  it('gives every container probes, resources, a non-root hardened context and a pinned image', () => {
    for (const { owner, pod } of podSpecs()) {
      expect([owner, pod.securityContext?.runAsNonRoot]).toEqual([owner, true]);
      expect([owner, pod.automountServiceAccountToken]).toEqual([owner, false]);
      for (const container of containersOf(pod)) {
        const where = `${owner} ${container.name}`;
        expect([where, container.resources?.requests?.cpu, container.resources?.requests?.memory, container.resources?.limits?.memory]).toEqual([
          where,
          expect.any(String),
          expect.any(String),
          expect.any(String),
        ]);
        expect([where, container.securityContext]).toEqual([
          where,
          expect.objectContaining({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } }),
        ]);
        // A tag that is not `latest`, or a digest.
        expect([where, container.image]).toEqual([where, expect.stringMatching(/^[^@\s]+(:(?!latest$)[\w][\w.-]*|@sha256:[0-9a-f]{64})$/)]);
      }
    }
    for (const deployment of ofKind('Deployment')) {
      const [container] = deployment.spec.template.spec.containers;
      const where = deployment.metadata.name;
      if (component(deployment) === 'gateway') {
        expect([where, container.readinessProbe.httpGet.path, container.livenessProbe.httpGet.path]).toEqual([where, '/readyz', '/healthz']);
      } else {
        const grpcPort = container.ports.find((port: { name: string }) => port.name === 'grpc').containerPort;
        expect([where, container.readinessProbe.grpc.port, container.livenessProbe.grpc.port]).toEqual([where, grpcPort, grpcPort]);
      }
      expect([where, deployment.spec.selector.matchLabels]).toEqual([where, expect.objectContaining({ 'app.kubernetes.io/component': component(deployment) })]);
      for (const [key, value] of Object.entries(deployment.spec.selector.matchLabels)) expect(deployment.spec.template.metadata.labels[key]).toBe(value);
      expect([where, deployment.spec.template.spec.topologySpreadConstraints?.length]).toEqual([where, 2]);
      expect(ofKind('ServiceAccount').map((account) => account.metadata.name)).toContain(deployment.spec.template.spec.serviceAccountName);
    }
  });

  it('runs each component with the heap the local stack and the benchmarks run it with (or the heap its values set), within its memory limit', () => {
    const values = valuesFiles.map((file) => parse(readFileSync(file, 'utf8')) as Record<string, { nodeHeap?: NodeHeap } | undefined>);
    for (const deployment of ofKind('Deployment')) {
      const [container] = deployment.spec.template.spec.containers;
      const name = component(deployment) as keyof typeof SERVICE_HEAPS;
      const options = container.env.filter((env: { name: string }) => env.name === 'NODE_OPTIONS').map((env: { value: string }) => env.value);
      const setHeap = values.map((set) => set[name]?.nodeHeap).find((heap) => heap !== undefined);
      const heap = setHeap ?? SERVICE_HEAPS[name];
      const expected = setHeap ? `--max-old-space-size=${heap.oldSpaceMiB} --max-semi-space-size=${heap.semiSpaceMiB}` : heapArgsOf(name).join(' ');
      expect([name, options]).toEqual([name, [expected]]);
      const limitMiB = Number(/^(\d+)Mi$/.exec(container.resources.limits.memory)?.[1]);
      expect([name, heap.oldSpaceMiB + 3 * heap.semiSpaceMiB < limitMiB]).toEqual([name, true]);
      if (name === 'rollout') {
        // Rollout refuses to start with a status cache its heap could not hold when full (V8's heap limit is the old generation and three semi-spaces).
        const entries = Number(container.env.find((env: { name: string }) => env.name === 'DEVICE_STATUS_CACHE_ENTRIES')?.value ?? 500_000);
        expect(statusCacheOverHeap(entries, (heap.oldSpaceMiB + 3 * heap.semiSpaceMiB) * 2 ** 20)).toBeNull();
      }
    }
  });

  it('names every Service port, and every Service selects a Deployment', () => {
    for (const service of ofKind('Service')) {
      for (const port of service.spec.ports) expect([service.metadata.name, port.name]).toEqual([service.metadata.name, expect.stringMatching(/^[a-z][a-z0-9-]*$/)]);
      const selected = ofKind('Deployment').filter((d) =>
        Object.entries(service.spec.selector).every(([key, value]) => d.spec.template.metadata.labels[key] === value),
      );
      expect([service.metadata.name, selected.length]).toEqual([service.metadata.name, 1]);
    }
  });

  it('exposes only the gateway', () => {
    for (const service of ofKind('Service').filter((s) => component(s) !== 'gateway')) expect([service.metadata.name, service.spec.type]).toEqual([service.metadata.name, 'ClusterIP']);
    for (const ingress of ofKind('Ingress')) {
      for (const rule of ingress.spec.rules) {
        for (const path of rule.http.paths) expect(path.backend.service.name).toBe('ota-ota-gateway');
      }
    }
    const policies = ofKind('NetworkPolicy');
    for (const name of COMPONENTS) {
      const policy = policies.find((p) => p.spec.podSelector.matchLabels['app.kubernetes.io/component'] === name);
      expect([name, policy?.spec.policyTypes]).toEqual([name, ['Ingress']]);
      if (name === 'gateway') continue;
      // Their service port is open only to pods of this release.
      const serviceRule = policy!.spec.ingress.find((rule: any) => rule.ports.some((port: { port: string }) => port.port === 'grpc'));
      expect([name, serviceRule.from]).toEqual([name, [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'ota', 'app.kubernetes.io/instance': 'ota' } } }]]);
      for (const rule of policy!.spec.ingress) expect(rule.ports.every((port: { port: string }) => ['grpc', 'metrics'].includes(port.port))).toBe(true);
    }
  });

  it('wires every address and secret to something that exists', () => {
    const config = ofKind('ConfigMap').find((c) => c.metadata.name === 'ota-ota-config')!;
    for (const key of ['REGISTRY_ADDR', 'ARTIFACTS_ADDR', 'ROLLOUT_ADDR', 'TELEMETRY_ADDR']) {
      const [host, port] = String(config.data[key]).split(':');
      const service = ofKind('Service').find((s) => s.metadata.name === host);
      expect([key, service?.spec.ports.some((p: { port: number }) => p.port === Number(port))]).toEqual([key, true]);
    }
    const chartSecret = ofKind('Secret')[0];
    const secretKeys = new Set<string>();
    for (const { pod } of podSpecs()) {
      for (const container of containersOf(pod)) {
        for (const env of container.env ?? []) {
          const ref = env.valueFrom?.secretKeyRef;
          if (!ref) continue;
          secretKeys.add(ref.key);
          if (chartSecret) {
            expect(ref.name).toBe(chartSecret.metadata.name);
            if (!ref.optional) expect(Object.keys(chartSecret.stringData)).toContain(ref.key);
          } else {
            expect(ref.name).toBe('ota-credentials');
          }
        }
      }
    }
    expect([...secretKeys].sort()).toEqual(['mongodb-uri', 's3-access-key-id', 's3-secret-access-key', 'url-signing-key', 'webhook-secret-keys']);
  });

  it('runs the index migrations of every service as a hook Job', () => {
    const [job] = ofKind('Job');
    expect(job!.metadata.annotations!['helm.sh/hook']).toBe('post-install,pre-upgrade');
    const pod = job!.spec.template.spec;
    expect(containersOf(pod).map((c: { name: string; command: string[] }) => [c.name, c.command])).toEqual(
      ['registry', 'artifacts', 'rollout', 'telemetry', 'gateway'].map((name) => [`migrate-${name}`, ['node', 'dist/migrate.js']]),
    );
  });

  it('scales with an HPA only the Deployments that leave their replica count to it', () => {
    for (const hpa of ofKind('HorizontalPodAutoscaler')) {
      const target = ofKind('Deployment').find((d) => d.metadata.name === hpa.spec.scaleTargetRef.name);
      expect([hpa.metadata.name, target?.spec.replicas]).toEqual([hpa.metadata.name, undefined]);
    }
  });
});

describe('the chart values', () => {
  it('are refused when unknown, mistyped or an unpinned image tag', () => {
    for (const set of ['image.tag=latest', 'gateway.replcas=3', 'logLevel=loud', 'gateway.service.type=ExternalName']) {
      const result = helm(['template', 'ota', chart, '--set', set]);
      expect([set, result.status]).toEqual([set, 1]);
      expect(result.stderr).toContain('schema');
    }
  });

  it('require the public base URL, or make it from the Ingress host, so that no request header chooses where devices download', () => {
    const missing = helm(['template', 'ota', chart]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('gateway.publicBaseUrl is required');
    const config = (sets: string[]) => render([], sets).objects.find((object) => object.kind === 'ConfigMap' && object.data?.PUBLIC_BASE_URL !== undefined)!.data;
    expect(config(['ingress.enabled=true', 'ingress.host=ota.acme.example', 'ingress.tls.enabled=true']).PUBLIC_BASE_URL).toBe('https://ota.acme.example');
    expect(config(['gateway.publicBaseUrl=https://devices.acme.example', 'ingress.enabled=true']).PUBLIC_BASE_URL).toBe('https://devices.acme.example');
    expect(render([MINIMAL]).objects.find((object) => object.kind === 'ConfigMap' && object.data?.TRUSTED_PROXIES !== undefined)!.data.TRUSTED_PROXIES).toMatch(/^10\.0\.0\.0\/8,/);
  });

  it('keep a stored URL-signing key or generate one, and take a set one as it is', () => {
    const generated = render([MINIMAL]).objects.find((object) => object.kind === 'Secret')!;
    expect(generated.stringData['url-signing-key']).toMatch(/^[A-Za-z0-9]{48}$/);
    const set = render([MINIMAL], ['gateway.urlSigningKey=chosen-by-the-operator']).objects.find((object) => object.kind === 'Secret')!;
    expect(set.stringData['url-signing-key']).toBe('chosen-by-the-operator');
  });

  it('are each documented in docs/operations.md', () => {
    const operations = readFileSync(join(root, 'docs', 'operations.md'), 'utf8');
    const leaves = (value: unknown, path: string[]): string[][] =>
      value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0
        ? Object.entries(value).flatMap(([key, inner]) => leaves(inner, [...path, key]))
        : [path];
    const values = parse(readFileSync(join(chart, 'values.yaml'), 'utf8'));
    // Resource maps and security contexts are documented as a whole; a key every component has is
    // documented once as `<component>.key`.
    const documented = (path: string[]) => {
      const generic = (COMPONENTS as readonly string[]).includes(path[0]!) && path.length > 1 ? ['<component>', ...path.slice(1)] : path;
      return [path, generic].some((candidate) => operations.includes(`\`${candidate.join('.')}\``));
    };
    const undocumented = leaves(values, [])
      .map((path) => path.slice(0, path.findIndex((key) => ['resources', 'podSecurityContext', 'containerSecurityContext'].includes(key)) + 1 || undefined))
      .filter((path) => !documented(path))
      .map((path) => path.join('.'));
    expect(undocumented).toEqual([]);
  });
});

describe('skaffold and compose', () => {
  it('build one image per component from the repository root', () => {
    const skaffold = parse(readFileSync(join(root, 'skaffold.yaml'), 'utf8'));
    expect(skaffold.build.artifacts.map((a: any) => [a.image, a.docker.dockerfile, a.docker.buildArgs.SERVICE])).toEqual(
      COMPONENTS.map((name) => [`ota-${name}`, 'deploy/Dockerfile', name]),
    );
    const templates = skaffold.deploy.helm.releases[0].setValueTemplates;
    for (const name of COMPONENTS) expect(templates[`${name}.image`]).toBe(`{{.IMAGE_FULLY_QUALIFIED_ota_${name}}}`);
    expect(skaffold.profiles.map((profile: { name: string }) => profile.name)).toContain('dev');

    const compose = parse(readFileSync(join(root, 'deploy', 'compose.yaml'), 'utf8'), { merge: true });
    for (const name of COMPONENTS) expect([name, compose.services[name].build.args.SERVICE, compose.services[name].read_only]).toEqual([name, name, true]);
    for (const name of ['mongodb', 'nats', 'minio']) expect(compose.services[name].image).toMatch(/:[\w.-]*\d[\w.-]*$/);
    expect(compose.services.mongodb.image).toMatch(/^mongo:7\./);
  });
});
