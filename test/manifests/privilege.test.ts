/**
 * Least privilege, checked: the chart rendered by the real helm with every option on grants no
 * wildcard, and every RBAC rule it renders is a row of the reviewed table in docs/architecture.md
 * (role, rule, why), and every row is still rendered; bindings bind only our ServiceAccounts and
 * the subjects given. kube-score (pinned, test/support/tools.ts) scans the same render: each finding
 * is fixed or accepted, with its reason, in the findings table next to it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

import { KUBE_SCORE, helmBinary, kubeScoreBinary } from '../support/tools.js';

const CHART = 'charts/gpustack-operator';
const NAMESPACE = 'gpustack-system';
const ARCHITECTURE = 'docs/architecture.md';

/** Every switch on (cert-manager and the chart's own certificates are alternatives: both are rendered). */
const EVERYTHING_ON = [
  ['admission.enabled', 'true'],
  ['agent.kubeletPlugin.enabled', 'true'],
  ['agent.nodeRestriction.enabled', 'true'],
  ['cardsCli.enabled', 'true'],
  ['cardsCli.subjects[0].kind', 'Group'],
  ['cardsCli.subjects[0].name', 'gpu-admins'],
  ['cardsCli.subjects[0].apiGroup', 'rbac.authorization.k8s.io'],
  ['serviceMonitor.enabled', 'true'],
  ['grafanaDashboard.enabled', 'true'],
  ['networkPolicy.enabled', 'true'],
  ['hooks.auth.bearerToken', 'true'],
  ['hooks.auth.clientCertificate', 'true'],
  ['server.podDisruptionBudget.enabled', 'true'],
] as const;

interface Rule {
  readonly apiGroups?: string[];
  readonly resources?: string[];
  readonly verbs?: string[];
  readonly resourceNames?: string[];
  readonly nonResourceURLs?: string[];
}
interface Rendered {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly rules?: Rule[];
  readonly subjects?: { kind: string; name: string; namespace?: string }[];
  readonly roleRef?: { kind: string; name: string };
}

function helmTemplate(helm: string, extra: readonly string[]): Rendered[] {
  const set = EVERYTHING_ON.flatMap(([key, value]) => ['--set', `${key}=${value}`]);
  const run = spawnSync(helm, ['template', 'gpustack-operator', CHART, '-n', NAMESPACE, ...set, ...extra], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'] },
  });
  if (run.status !== 0) throw new Error(`helm template: ${run.stderr}`);
  return parseAllDocuments(run.stdout)
    .map((d) => d.toJS() as Rendered | null)
    .filter((o): o is Rendered => o !== null);
}

/** The rows of the first table under the heading `heading` in docs/architecture.md, cells trimmed, backticks off. */
function tableUnder(heading: string): string[][] {
  const lines = readFileSync(ARCHITECTURE, 'utf8').split('\n');
  const start = lines.findIndex((l) => l.startsWith('#') && l.includes(heading));
  if (start < 0) throw new Error(`${ARCHITECTURE}: no heading "${heading}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('#')) break;
    if (!line.startsWith('|')) {
      if (rows.length > 0) break;
      continue;
    }
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim().replaceAll('`', '')),
    );
  }
  return rows.slice(2); // header and rule
}

const list = (cell: string): string[] => cell.split(',').map((s) => s.trim());

/**
 * One permission: `<Kind> <name> <group>/<resource> <verb>` (group `core` for ""), a rule limited
 * to some objects as `<resource>[<name>]` per name: a narrower grant is a different row.
 */
function permissions(role: Rendered): string[] {
  return (role.rules ?? []).flatMap((rule) =>
    (rule.apiGroups ?? ['(none)']).flatMap((group) =>
      (rule.resources ?? rule.nonResourceURLs ?? [])
        .flatMap((resource) =>
          (rule.resourceNames ?? []).map((name) => `${resource}[${name}]`).concat(rule.resourceNames ? [] : [resource]),
        )
        .flatMap((resource) =>
          (rule.verbs ?? []).map((verb) => `${role.kind} ${role.metadata.name} ${group || 'core'}/${resource} ${verb}`),
        ),
    ),
  );
}

let rendered: Rendered[];
let roles: Rendered[];

beforeAll(() => {
  const helm = helmBinary();
  rendered = [...helmTemplate(helm, []), ...helmTemplate(helm, ['--set', 'hooks.tls.source=cert-manager'])];
  roles = rendered.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role');
}, 1_200_000);

describe('RBAC of the chart with every option on', () => {
  it('renders the roles of the agent, the checker and the cards CLI', () => {
    expect([...new Set(roles.map((r) => `${r.kind} ${r.metadata.name}`))].sort()).toEqual([
      'ClusterRole gpustack-admission',
      'ClusterRole gpustack-agent',
      'ClusterRole gpustack-cards-cli',
      'Role gpustack-admission-leader',
      'Role gpustack-agent',
    ]);
  });

  it('grants no wildcard: no * in apiGroups, resources, verbs or nonResourceURLs', () => {
    const wild = roles.flatMap((role) =>
      (role.rules ?? []).flatMap((rule) =>
        (['apiGroups', 'resources', 'verbs', 'nonResourceURLs'] as const)
          .filter((field) => (rule[field] ?? []).some((v) => v.includes('*')))
          .map((field) => `${role.kind} ${role.metadata.name}: ${field} ${JSON.stringify(rule[field])}`),
      ),
    );
    expect(wild).toEqual([]);
  });

  it('grants nothing that hands out more rights: no Secrets, escalate, bind, impersonate, exec or token requests', () => {
    const dangerous = roles
      .flatMap(permissions)
      .filter((p) =>
        /\/(secrets|pods\/exec|pods\/attach|serviceaccounts\/token|[a-z]*roles|[a-z]*rolebindings) | (escalate|bind|impersonate)$/.test(
          p,
        ),
      );
    expect(dangerous).toEqual([]);
  });

  it(`every rule is a reviewed row of ${ARCHITECTURE} (### Roles), each row with its why, and every row is still rendered`, () => {
    const rows = tableUnder('Roles: every rule, and why');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row, row.join(' | ')).toHaveLength(5);
      expect(row[4]?.length ?? 0, `why of ${row.join(' | ')}`).toBeGreaterThan(20);
    }
    const reviewed = new Set(
      rows.flatMap(([role = '', group = '', resources = '', verbs = '']) =>
        list(resources).flatMap((resource) => list(verbs).map((verb) => `${role} ${group}/${resource} ${verb}`)),
      ),
    );
    const granted = new Set(roles.flatMap(permissions));
    expect([...granted].filter((p) => !reviewed.has(p)).sort(), 'granted but not in the table').toEqual([]);
    expect([...reviewed].filter((p) => !granted.has(p)).sort(), 'in the table but no longer granted').toEqual([]);
  });

  it('binds only our ServiceAccounts, in the release namespace, and the cards CLI subjects given', () => {
    const bindings = rendered.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding');
    const subjects = [
      ...new Set(
        bindings.flatMap((b) =>
          (b.subjects ?? []).map(
            (s) => `${b.roleRef?.name} ← ${s.kind} ${s.namespace ? `${s.namespace}/` : ''}${s.name}`,
          ),
        ),
      ),
    ].sort();
    expect(subjects).toEqual([
      `gpustack-admission ← ServiceAccount ${NAMESPACE}/gpustack-admission`,
      `gpustack-admission-leader ← ServiceAccount ${NAMESPACE}/gpustack-admission`,
      `gpustack-agent ← ServiceAccount ${NAMESPACE}/gpustack-agent`,
      'gpustack-cards-cli ← Group gpu-admins',
    ]);
  });
});

interface ScoredCheck {
  readonly check: { readonly id: string };
  readonly grade: number;
  readonly skipped: boolean;
  readonly comments: { readonly path?: string; readonly summary?: string }[] | null;
}
interface Scored {
  readonly type_meta: { readonly kind: string };
  readonly object_meta: { readonly name: string };
  readonly checks: ScoredCheck[];
}

describe(`kube-score ${KUBE_SCORE.version} over the chart with every option on`, () => {
  // A hang guard for the first run, which builds kube-score (about 40 s cold, more on a loaded machine).
  it(
    `finds nothing that is not accepted, with its reason, in ${ARCHITECTURE} (### Scanner findings), and no acceptance is stale`,
    { timeout: 900_000 },
    () => {
      const helm = helmBinary();
      const set = EVERYTHING_ON.flatMap(([key, value]) => ['--set', `${key}=${value}`]);
      const template = spawnSync(helm, ['template', 'gpustack-operator', CHART, '-n', NAMESPACE, ...set], {
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      });
      expect(template.status, template.stderr).toBe(0);
      const scan = spawnSync(kubeScoreBinary(), ['score', '--output-format', 'json', '-'], {
        input: template.stdout,
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      });
      // kube-score exits 1 when it finds something: its JSON is what counts.
      expect(scan.stdout, scan.stderr).toMatch(/^\[/);
      const scored = JSON.parse(scan.stdout) as Scored[];
      expect(scored.map((o) => `${o.type_meta.kind} ${o.object_meta.name}`)).toEqual(
        expect.arrayContaining([
          'Deployment gpustack-operator',
          'Deployment gpustack-admission',
          'DaemonSet gpustack-agent',
          'NetworkPolicy gpustack-operator',
        ]),
      );
      const findings = new Set(
        scored.flatMap((o) =>
          o.checks
            .filter((c) => !c.skipped && c.grade < 10)
            .map((c) => `${o.type_meta.kind} ${o.object_meta.name} ${c.check.id}`),
        ),
      );
      const rows = tableUnder('Scanner findings');
      for (const row of rows) expect(row[2]?.length ?? 0, `why of ${row.join(' | ')}`).toBeGreaterThan(20);
      const accepted = new Set(
        rows.flatMap(([objects = '', check = '']) => list(objects).map((object) => `${object} ${check}`)),
      );
      expect([...findings].filter((f) => !accepted.has(f)).sort(), 'found and not accepted').toEqual([]);
      expect([...accepted].filter((a) => !findings.has(a)).sort(), 'accepted but no longer found').toEqual([]);
    },
  );
});
