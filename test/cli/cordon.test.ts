/**
 * `cards cordon` / `cards uncordon` (issue 25): the pure parts (targets, cards, holders, rules,
 * the one-line faults) and the command against a small fake API server that serves what the
 * command reads and writes — discovery, a Node, ResourceSlices, ResourceClaims and
 * DeviceTaintRules — so every write it makes is recorded and checked.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CORDON_TAINT_KEY,
  DEVICE_TAINT_RULES_NOT_SERVED,
  buildCordonRules,
  buildDeviceLedger,
  cordonRuleName,
  cordonSelector,
  taintValue,
} from '../../src/dra/index.js';
import { cordonCommand } from '../../src/cli/cordon.js';
import { holdersOf, parseTarget, resolveCards } from '../../src/cli/cordon-plan.js';
import { UsageError } from '../../src/cli/errors.js';
import { failure, json, readBody } from '../support/fake-http.js';
import { TOKEN, kubeConfigText } from '../admission/support.js';
import { NVIDIA, allocatedClaim, nodePool } from '../dra/builders.js';

const cards = (node = 'gpu-a', n = 4) => buildDeviceLedger(nodePool(node, n), []).cards(node);

describe('cordon: targets and rules (pure)', () => {
  it('reads NODE, NODE/3, NODE/card-3 and NODE/nvidia:card-3; refuses anything else in one line', () => {
    expect(parseTarget('gpu-a')).toEqual({ node: 'gpu-a' });
    expect(parseTarget('gpu-a/3')).toEqual({ node: 'gpu-a', card: { name: 'card-3' } });
    expect(parseTarget('gpu-a/card-03')).toEqual({ node: 'gpu-a', card: { name: 'card-3' } });
    expect(parseTarget('gpu-a/nvidia:card-3')).toEqual({
      node: 'gpu-a',
      card: { name: 'card-3', manufacturer: 'nvidia' },
    });
    expect(() => parseTarget('gpu-a/x')).toThrow(UsageError);
    expect(() => parseTarget('Gpu_A')).toThrow('"Gpu_A" is not a node name');
    expect(() => parseTarget(undefined)).toThrow('name a node or a card');
  });

  it('names the node or card it cannot find, and lists what the node has', () => {
    expect(resolveCards({ node: 'gpu-a' }, cards()).map((c) => c.name)).toEqual([
      'card-0',
      'card-1',
      'card-2',
      'card-3',
    ]);
    expect(resolveCards(parseTarget('gpu-a/2'), cards()).map((c) => c.name)).toEqual(['card-2']);
    expect(() => resolveCards(parseTarget('gpu-a/9'), cards())).toThrow(
      'node "gpu-a" has no card "card-9" (it has card-0, card-1, card-2, card-3)',
    );
    expect(() => resolveCards(parseTarget('gpu-z/0'), [])).toThrow('node "gpu-z" publishes no cards of ours');
    const two = [
      ...cards(),
      ...buildDeviceLedger(nodePool('gpu-a', 1, { driver: 'amd.gpustack.ai' }), []).cards('gpu-a'),
    ];
    expect(() => resolveCards(parseTarget('gpu-a/0'), two)).toThrow(
      'node "gpu-a" has card-0 of nvidia.gpustack.ai and amd.gpustack.ai: name one, e.g. gpu-a/nvidia:card-0',
    );
    expect(resolveCards(parseTarget('gpu-a/amd:0'), two).map((c) => c.driver)).toEqual(['amd.gpustack.ai']);
  });

  it('builds one rule per device of the card, named and labelled for node, card and driver', () => {
    const [card] = cards().slice(3);
    const rules = buildCordonRules(card!, 'firmware update: 2.1 → 2.2', 'NoSchedule', 'resource.k8s.io/v1beta2');
    expect(rules.map((r) => r.metadata.name)).toEqual([
      'gpustack-cordon-gpu-a-nvidia-card-3',
      'gpustack-cordon-gpu-a-nvidia-card-3-shared',
    ]);
    expect(rules[1]).toEqual({
      apiVersion: 'resource.k8s.io/v1beta2',
      kind: 'DeviceTaintRule',
      metadata: {
        name: 'gpustack-cordon-gpu-a-nvidia-card-3-shared',
        labels: {
          'gpustack.ai/cordon': 'true',
          'gpustack.ai/cordon-node': 'gpu-a',
          'gpustack.ai/cordon-card': 'card-3',
          'gpustack.ai/cordon-driver': NVIDIA,
        },
        annotations: {
          'gpustack.ai/cordon-node': 'gpu-a',
          'gpustack.ai/cordon-reason': 'firmware update: 2.1 → 2.2',
        },
      },
      spec: {
        deviceSelector: { driver: NVIDIA, pool: 'gpu-a', device: 'card-3-shared' },
        taint: { key: CORDON_TAINT_KEY, value: 'firmware-update-2.1-2.2', effect: 'NoSchedule' },
      },
    });
    expect(cordonSelector('gpu-a', card)).toBe(
      `gpustack.ai/cordon=true,gpustack.ai/cordon-node=gpu-a,gpustack.ai/cordon-card=card-3,gpustack.ai/cordon-driver=${NVIDIA}`,
    );
  });

  it('keeps names and label values valid for a long node name, and a reason with nothing valid has no taint value', () => {
    const long = `${'n'.repeat(240)}.example.com`;
    const name = cordonRuleName(long, NVIDIA, 'card-12-shared');
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name).toMatch(/^gpustack-cordon-n+-[0-9a-f]{16}-nvidia-card-12-shared$/);
    expect(cordonSelector(long)).toMatch(/cordon-node=[0-9a-f]{16}$/);
    expect(taintValue('—')).toBeUndefined();
    expect(taintValue('x'.repeat(80))).toHaveLength(63);
  });

  it('finds the claims holding either device of a card, with their pods', () => {
    const claims = [
      allocatedClaim('whole', [{ node: 'gpu-a', device: 'card-1' }]),
      allocatedClaim('share', [{ node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '10Gi' } }], false),
      allocatedClaim('other', [{ node: 'gpu-a', device: 'card-2' }]),
    ];
    const ledger = buildDeviceLedger(nodePool('gpu-a', 4), claims);
    const card = ledger.cards('gpu-a')[1];
    expect(holdersOf(ledger.use(card!))).toEqual([
      { claim: 'team-a/share', pods: [] },
      { claim: 'team-a/whole', pods: ['team-a/whole-pod'] },
    ]);
  });
});

/** A fake API server: what the command reads, and DeviceTaintRules it writes (recorded). */
interface Fake {
  readonly url: string;
  /** Whether discovery lists devicetaintrules (v1beta2, as a gated 1.36). */
  served: boolean;
  /** Answer 403 to these `METHOD resource` pairs. */
  readonly forbidden: Set<string>;
  readonly rules: Map<string, Record<string, unknown>>;
  readonly writes: string[];
  close(): Promise<void>;
}

const RULES = '/apis/resource.k8s.io/v1beta2/devicetaintrules';

async function startFake(): Promise<Fake> {
  const slices = nodePool('gpu-a', 4);
  const claims = [
    { ...allocatedClaim('train-gpus', [{ node: 'gpu-a', device: 'card-1' }]) },
    allocatedClaim('chat-gpus', [{ node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '10Gi' } }]),
  ];
  const fake: Fake = {
    url: '',
    served: true,
    forbidden: new Set(),
    rules: new Map(),
    writes: [],
    close: async () => undefined,
  };
  const list = (res: ServerResponse, items: unknown[]) =>
    json(res, 200, { kind: 'List', metadata: { resourceVersion: '1' }, items });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return failure(res, 401, 'Unauthorized');
    const { pathname, searchParams } = new URL(req.url ?? '', 'http://fake');
    const method = req.method ?? '';
    const resource = pathname.startsWith(RULES) ? 'devicetaintrules' : (pathname.split('/')[4] ?? '');
    if (fake.forbidden.has(`${method} ${resource}`)) return failure(res, 403, `${resource} is forbidden`);
    if (pathname === '/apis/resource.k8s.io/v1beta2')
      return fake.served ? json(res, 200, { resources: [{ name: 'devicetaintrules' }] }) : failure(res, 404, 'nf');
    if (pathname === '/apis/resource.k8s.io/v1') return json(res, 200, { resources: [{ name: 'resourceslices' }] });
    if (pathname === '/api/v1/nodes/gpu-a') return json(res, 200, { metadata: { name: 'gpu-a' } });
    if (pathname.startsWith('/api/v1/nodes/')) return failure(res, 404, 'node not found');
    if (pathname === '/apis/resource.k8s.io/v1/resourceslices') {
      const node = searchParams.get('fieldSelector')?.replace('spec.nodeName=', '');
      return list(
        res,
        slices.filter((s) => s.spec.nodeName === node),
      );
    }
    if (pathname === '/apis/resource.k8s.io/v1/resourceclaims') return list(res, claims);
    if (pathname === RULES && method === 'GET') {
      const wanted = (searchParams.get('labelSelector') ?? '').split(',').filter(Boolean);
      const labelsOf = (r: Record<string, unknown>) =>
        ((r['metadata'] as { labels?: Record<string, string> }).labels ?? {}) as Record<string, string>;
      return list(
        res,
        [...fake.rules.values()].filter((r) => wanted.every((w) => labelsOf(r)[w.split('=')[0]!] === w.split('=')[1])),
      );
    }
    if (pathname === RULES && method === 'POST') {
      const rule = JSON.parse(body) as { metadata: { name: string } };
      if (fake.rules.has(rule.metadata.name)) return failure(res, 409, 'already exists');
      fake.rules.set(rule.metadata.name, rule);
      fake.writes.push(`create ${rule.metadata.name}`);
      return json(res, 201, rule);
    }
    const name = pathname.slice(RULES.length + 1);
    if (method === 'GET') return fake.rules.has(name) ? json(res, 200, fake.rules.get(name)) : failure(res, 404, 'nf');
    if (method === 'DELETE') {
      fake.rules.delete(name);
      fake.writes.push(`delete ${name}`);
      return json(res, 200, {});
    }
    return failure(res, 404, `no route for ${method} ${pathname}`);
  };
  const server: Server = createServer(
    (req, res) => void handle(req, res).catch((e: unknown) => failure(res, 500, String(e))),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(fake, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

describe('cards cordon / uncordon against an API server', () => {
  let fake: Fake;
  let dir: string;
  let kubeconfig: string;
  beforeEach(async () => {
    fake = await startFake();
    dir = mkdtempSync(join(tmpdir(), 'cordon-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, kubeConfigText(fake.url));
  });
  afterEach(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(verb: 'cordon' | 'uncordon', ...args: string[]): Promise<{ code: number; out: string }> {
    let out = '';
    const code = await cordonCommand(verb, [...args, '--kubeconfig', kubeconfig], { write: (t) => void (out += t) });
    return { code, out };
  }

  it('cordons a held card with NoSchedule (both devices), says who keeps running; uncordon deletes both rules', async () => {
    const cordoned = await run('cordon', 'gpu-a/1', '--reason', 'bad fan');
    expect(cordoned.code).toBe(0);
    expect(fake.writes).toEqual([
      'create gpustack-cordon-gpu-a-nvidia-card-1',
      'create gpustack-cordon-gpu-a-nvidia-card-1-shared',
    ]);
    expect(cordoned.out).toBe(
      'cordoned gpu-a/card-1 (NoSchedule): DeviceTaintRules gpustack-cordon-gpu-a-nvidia-card-1, gpustack-cordon-gpu-a-nvidia-card-1-shared\n' +
        'keeps running (NoSchedule evicts nothing):\n' +
        '  gpu-a/card-1: team-a/chat-gpus-pod (claim team-a/chat-gpus)\n' +
        '  gpu-a/card-1: team-a/train-gpus-pod (claim team-a/train-gpus)\n',
    );
    expect((await run('cordon', 'gpu-a/1', '--reason', 'bad fan')).out).toMatch(/^already cordoned gpu-a\/card-1/);
    expect(fake.writes).toHaveLength(2);
    const uncordoned = await run('uncordon', 'gpu-a/1');
    expect(uncordoned).toEqual({
      code: 0,
      out:
        'deleted DeviceTaintRule gpustack-cordon-gpu-a-nvidia-card-1\n' +
        'deleted DeviceTaintRule gpustack-cordon-gpu-a-nvidia-card-1-shared\n',
    });
    expect(fake.rules.size).toBe(0);
    expect((await run('uncordon', 'gpu-a/1')).out).toBe('gpu-a/card-1 is not cordoned\n');
  });

  it('--drain lists the pods it evicts and does nothing without --yes; with --yes it replaces the NoSchedule rules by NoExecute', async () => {
    await run('cordon', 'gpu-a/1', '--reason', 'bad fan');
    const refused = await run('cordon', 'gpu-a/1', '--reason', 'bad fan', '--drain');
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('WARNING: --drain taints with NoExecute');
    expect(refused.out).toContain('team-a/train-gpus-pod (claim team-a/train-gpus)');
    expect(refused.out).toContain('nothing done: run again with --drain --yes');
    expect(fake.writes).toHaveLength(2);
    expect((await run('cordon', 'gpu-a/1', '--reason', 'bad fan', '--drain', '--yes')).code).toBe(0);
    const effects = [...fake.rules.values()].map((r) => (r['spec'] as { taint: { effect: string } }).taint.effect);
    expect(effects).toEqual(['NoExecute', 'NoExecute']);
  });

  it('cordons every card of a node, and uncordons the node', async () => {
    expect((await run('cordon', 'gpu-a', '--reason', 'maintenance')).code).toBe(0);
    expect(fake.rules.size).toBe(8);
    expect((await run('uncordon', 'gpu-a')).out.split('\n').filter(Boolean)).toHaveLength(8);
    expect(fake.rules.size).toBe(0);
  });

  it('says each fault in one line: unknown node or card, no RBAC, DeviceTaintRule not served', async () => {
    await expect(run('cordon', 'gpu-z/0', '--reason', 'x')).rejects.toThrow(/^node "gpu-z" not found$/);
    await expect(run('cordon', 'gpu-a/7', '--reason', 'x')).rejects.toThrow(
      /^node "gpu-a" has no card "card-7" \(it has card-0, card-1, card-2, card-3\)$/,
    );
    fake.forbidden.add('POST devicetaintrules');
    await expect(run('cordon', 'gpu-a/0', '--reason', 'x')).rejects.toThrow(
      /^forbidden: your credentials may not create devicetaintrules \(resource\.k8s\.io\/v1beta2\); /,
    );
    fake.forbidden.add('GET devicetaintrules');
    await expect(run('uncordon', 'gpu-a/0')).rejects.toThrow(/may not list devicetaintrules/);
    fake.served = false;
    await expect(run('cordon', 'gpu-a/0', '--reason', 'x')).rejects.toThrow(DEVICE_TAINT_RULES_NOT_SERVED);
    expect(DEVICE_TAINT_RULES_NOT_SERVED).not.toContain('\n');
    expect(fake.writes).toEqual([]);
    await expect(run('cordon', 'gpu-a/0')).rejects.toThrow('--reason TEXT is required');
  });
});
