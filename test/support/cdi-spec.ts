// Checks a CDI spec against the Container Device Interface specification's rules, as read in
// cncf-tags/container-device-interface (SPEC.md, schema/schema.json + defs.json, pkg/parser name
// rules, pkg/cdi spec/device/container-edits validation, specs-go/version.go minimum versions).
// Written here from those rules; returns every violation so a test shows them all at once.

/** Spec versions the CDI library knows, oldest first. */
const KNOWN_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.4.0', '0.5.0', '0.6.0', '0.7.0', '0.8.0', '1.0.0', '1.1.0'];

const isLetter = (c: string) => /^[A-Za-z]$/.test(c);
const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);

/** Vendor and class: a letter first, letters/digits/`_-.` inside, a letter or digit last. */
function vendorOrClassProblem(what: string, name: string): string | undefined {
  if (name === '') return `${what} is empty`;
  if (!isLetter(name[0] as string)) return `${what} "${name}" must start with a letter`;
  if (name.length === 1) return undefined;
  for (const c of name.slice(1, -1)) if (!isAlnum(c) && !'_-.'.includes(c)) return `${what} "${name}" has '${c}'`;
  if (!isAlnum(name.at(-1) as string)) return `${what} "${name}" must end with a letter or digit`;
  return undefined;
}

/** Device name: a letter or digit first and last, letters/digits/`_-.:` inside. */
function deviceNameProblem(name: string): string | undefined {
  if (name === '') return 'device name is empty';
  if (!isAlnum(name[0] as string)) return `device name "${name}" must start with a letter or digit`;
  if (name.length === 1) return undefined;
  for (const c of name.slice(1, -1)) if (!isAlnum(c) && !'_-.:'.includes(c)) return `device name "${name}" has '${c}'`;
  if (!isAlnum(name.at(-1) as string)) return `device name "${name}" must end with a letter or digit`;
  return undefined;
}

interface Edits {
  env?: unknown;
  deviceNodes?: unknown;
  mounts?: unknown;
  hooks?: unknown;
  additionalGids?: unknown;
  intelRdt?: unknown;
  netDevices?: unknown;
}

const EDIT_KEYS = ['env', 'deviceNodes', 'mounts', 'hooks', 'additionalGids', 'intelRdt', 'netDevices'];
const NODE_KEYS = ['path', 'hostPath', 'permissions', 'type', 'major', 'minor', 'uid', 'gid', 'fileMode'];

function editsProblems(where: string, edits: Edits, problems: string[]): void {
  for (const key of Object.keys(edits)) if (!EDIT_KEYS.includes(key)) problems.push(`${where}: unknown field ${key}`);
  if (edits.env !== undefined) {
    if (!Array.isArray(edits.env)) problems.push(`${where}: env is not an array`);
    else
      for (const v of edits.env)
        if (typeof v !== 'string' || v.indexOf('=') <= 0)
          problems.push(`${where}: env entry ${JSON.stringify(v)} is not KEY=VALUE`);
  }
  if (edits.deviceNodes !== undefined) {
    if (!Array.isArray(edits.deviceNodes)) problems.push(`${where}: deviceNodes is not an array`);
    else
      for (const node of edits.deviceNodes as Record<string, unknown>[]) {
        for (const key of Object.keys(node))
          if (!NODE_KEYS.includes(key)) problems.push(`${where}: device node field ${key}`);
        const p = node['path'];
        if (typeof p !== 'string' || p === '') problems.push(`${where}: device node without path`);
        else if (!p.startsWith('/')) problems.push(`${where}: device node path ${p} is not absolute`);
        const type = node['type'];
        if (type !== undefined && !['', 'b', 'c', 'u', 'p'].includes(type as string))
          problems.push(`${where}: device node ${String(p)} has type ${String(type)}`);
        const perms = node['permissions'];
        if (perms !== undefined && (typeof perms !== 'string' || perms.replace(/[rwm]/g, '') !== ''))
          problems.push(`${where}: device node ${String(p)} has permissions ${String(perms)}`);
      }
  }
}

function isEmptyEdits(edits: Edits): boolean {
  return EDIT_KEYS.every((k) => {
    const v = (edits as Record<string, unknown>)[k];
    return v === undefined || (Array.isArray(v) && v.length === 0);
  });
}

/** The oldest spec version that allows what the spec uses (specs-go/version.go's rules, the ones our specs can hit). */
function minimumVersion(spec: {
  kind: string;
  devices: { name: string; containerEdits: Edits; annotations?: unknown }[];
  containerEdits?: Edits;
  annotations?: unknown;
}): string {
  const allEdits = [spec.containerEdits ?? {}, ...spec.devices.map((d) => d.containerEdits ?? {})];
  if (allEdits.some((e) => Array.isArray(e.netDevices) && e.netDevices.length > 0)) return '1.1.0';
  if (
    allEdits.some((e) => e.intelRdt !== undefined || (Array.isArray(e.additionalGids) && e.additionalGids.length > 0))
  )
    return '0.7.0';
  const cls = spec.kind.split('/')[1] ?? '';
  if (spec.annotations !== undefined || spec.devices.some((d) => d.annotations !== undefined) || cls.includes('.'))
    return '0.6.0';
  const nodes = allEdits.flatMap((e) =>
    Array.isArray(e.deviceNodes) ? (e.deviceNodes as { hostPath?: string }[]) : [],
  );
  if (spec.devices.some((d) => /^[0-9]/.test(d.name)) || nodes.some((n) => n.hostPath)) return '0.5.0';
  const mounts = allEdits.flatMap((e) => (Array.isArray(e.mounts) ? (e.mounts as { type?: string }[]) : []));
  if (mounts.some((m) => m.type)) return '0.4.0';
  return '0.3.0';
}

/** Every rule the spec breaks; [] when it is a valid CDI spec. */
export function cdiSpecProblems(raw: unknown): string[] {
  const problems: string[] = [];
  if (typeof raw !== 'object' || raw === null) return ['spec is not an object'];
  const spec = raw as Record<string, unknown>;
  for (const key of ['cdiVersion', 'kind', 'devices']) if (!(key in spec)) problems.push(`missing ${key}`);
  for (const key of Object.keys(spec))
    if (!['cdiVersion', 'kind', 'annotations', 'devices', 'containerEdits'].includes(key))
      problems.push(`unknown field ${key}`);
  if (problems.length > 0) return problems;
  const version = String(spec['cdiVersion']).replace(/^v/, '');
  if (!KNOWN_VERSIONS.includes(version)) problems.push(`unknown cdiVersion ${version}`);
  const kind = String(spec['kind']);
  const slash = kind.indexOf('/');
  if (slash <= 0 || slash === kind.length - 1) problems.push(`kind "${kind}" is not vendor/class`);
  else {
    const vendor = vendorOrClassProblem('vendor', kind.slice(0, slash));
    const cls = vendorOrClassProblem('class', kind.slice(slash + 1));
    if (vendor) problems.push(vendor);
    if (cls) problems.push(cls);
  }
  if (spec['containerEdits'] !== undefined) editsProblems('spec', spec['containerEdits'] as Edits, problems);
  const devices = spec['devices'];
  if (!Array.isArray(devices) || devices.length === 0) {
    problems.push('no devices');
    return problems;
  }
  const names = new Set<string>();
  for (const device of devices as Record<string, unknown>[]) {
    const name = device['name'];
    if (typeof name !== 'string') {
      problems.push('device without name');
      continue;
    }
    const nameProblem = deviceNameProblem(name);
    if (nameProblem) problems.push(nameProblem);
    if (names.has(name)) problems.push(`device ${name} twice`);
    names.add(name);
    const edits = device['containerEdits'] as Edits | undefined;
    if (edits === undefined) problems.push(`device ${name} has no containerEdits`);
    else {
      if (isEmptyEdits(edits)) problems.push(`device ${name} has empty containerEdits`);
      editsProblems(`device ${name}`, edits, problems);
    }
  }
  const needed = minimumVersion(spec as never);
  if (KNOWN_VERSIONS.includes(version) && KNOWN_VERSIONS.indexOf(version) < KNOWN_VERSIONS.indexOf(needed))
    problems.push(`cdiVersion ${version} is older than the ${needed} the spec's content needs`);
  return problems;
}

/** A fully qualified CDI device id `vendor/class=name`: its kind and name. */
export function parseCdiDeviceId(id: string): { kind: string; name: string } | undefined {
  const eq = id.indexOf('=');
  if (eq <= 0) return undefined;
  const kind = id.slice(0, eq);
  const name = id.slice(eq + 1);
  const [vendor, cls, extra] = kind.split('/');
  if (!vendor || !cls || extra !== undefined) return undefined;
  if (vendorOrClassProblem('vendor', vendor) || vendorOrClassProblem('class', cls) || deviceNameProblem(name))
    return undefined;
  return { kind, name };
}
