/**
 * One policy (src/activities/tools/sandbox/sandbox-policy.ts), two renderings: bubblewrap's argv (Linux) and a Seatbelt
 * profile for sandbox-exec (macOS). No Mac runs here, so the profile is held against the same policy as
 * the bubblewrap argv: every path the policy lists (and paths below it, and paths it does not list) is
 * read-write, read-only or absent alike in both; nothing else is writable; the network is denied in
 * both unless asked for; a worktree's git entries appear in both. The profile is read with a small
 * s-expression reader (sandbox-policy-helpers.ts), so a malformed one fails here.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { renderBwrap } from '../../src/activities/tools/sandbox/sandbox-bwrap';
import { allEntries, sandboxPolicy, type SandboxPolicy } from '../../src/activities/tools/sandbox/sandbox-policy';
import { renderSeatbelt, seatbeltArgs, type SeatbeltProfile } from '../../src/activities/tools/sandbox/sandbox-seatbelt';
import { confinedSpawn, confinementArgv, defaultConfinement, probeSeatbelt, sandboxEnv, SandboxUnavailableError } from '../../src/activities/tools/sandbox/sandbox';
import { resolveToolSandbox } from '../../src/activities/tools/tool-env';
import { createWorktree } from '../../src/activities/git/worktrees';
import { bwrapAccess, readSexps, sbplAccess, sbplDecide, writeRulePaths, type Access } from './sandbox-policy-helpers';

/** What the policy itself says of `p`: the deepest entry covering it (a later one of the same path wins). */
function policyAccess(policy: SandboxPolicy, p: string): Access | 'link' {
  let best: { depth: number; access: Access | 'link' } | undefined;
  for (const e of allEntries(policy)) {
    if (p !== e.path && !(e.kind !== 'link' && p.startsWith(`${e.path}/`))) continue;
    if (best && e.path.length < best.depth) continue;
    best = { depth: e.path.length, access: e.kind === 'write' ? 'rw' : e.kind === 'read' ? 'ro' : 'link' };
  }
  return best?.access ?? 'absent';
}

const OUTSIDERS = ['/home/u/.ssh/id_rsa', '/root/.bashrc', '/etc/shadow', '/etc/hosts', '/private/etc/master.passwd', '/work/project/.env', '/opt/x', '/var/lib/x', '/', '/Users/me/.aws/credentials'];

/** `p` with the policy's links (macOS's /etc → private/etc) followed, as the file system would before a check. */
function resolveLinks(policy: SandboxPolicy, p: string): string {
  for (const e of allEntries(policy)) {
    if (e.kind === 'link' && p.startsWith(`${e.path}/`)) return path.resolve(path.dirname(e.path), e.target, p.slice(e.path.length + 1));
  }
  return p;
}

/** The paths to hold the renderings against: each entry, something below it, its parent's sibling, outsiders. */
function probes(policy: SandboxPolicy): string[] {
  const paths = allEntries(policy).flatMap((e) => [e.path, ...(e.kind === 'link' ? [] : [`${e.path}/fh-probe`]), `${path.dirname(e.path)}/fh-sibling`]);
  return [...new Set([...paths, ...OUTSIDERS])].filter((p) => !/^\/(proc|dev|tmp)(\/|$)/.test(p));
}

/** Throws (a failed expect) where the bubblewrap argv or the Seatbelt profile says other than the policy. */
function holdRenderings(policy: SandboxPolicy, bwrap: readonly string[], seatbelt: SeatbeltProfile): void {
  readSexps(seatbelt.profile); // well-formed
  const { profile, params } = seatbelt;
  for (const p of probes(policy).map((q) => resolveLinks(policy, q))) {
    const want = policyAccess(policy, p);
    expect({ path: p, bwrap: bwrapAccess(bwrap, p) }).toEqual({ path: p, bwrap: want });
    expect({ path: p, seatbelt: sbplAccess(profile, params, p) }).toEqual({ path: p, seatbelt: want === 'link' ? 'ro' : want });
  }
  // Nothing else writable: bubblewrap binds read-write the write entries only (and its private /tmp), then
  // remounts the top level read-only; every write rule of the profile names a write entry or /dev/null, /dev/ptmx.
  const writes = allEntries(policy).filter((e) => e.kind === 'write').map((e) => e.path);
  expect(bwrap.flatMap((a, k) => (a === '--bind' ? [bwrap[k + 2]] : []))).toEqual(writes);
  expect(bwrap.flatMap((a, k) => (a === '--tmpfs' ? [bwrap[k + 1]] : []))).toEqual(['/tmp']);
  expect(bwrap.slice(-2)).toEqual(['--remount-ro', '/']);
  expect(new Set(writeRulePaths(profile, params))).toEqual(new Set([...writes, '/dev/null', '/dev/ptmx']));
  // The writable directories stay in place (as bind mounts do): no removing one or putting a link there.
  for (const w of writes) expect(sbplDecide(profile, params, 'file-write-unlink', w)).toBe('deny');
  // The network: bubblewrap unshares it unless asked; Seatbelt denies it unless asked.
  expect(bwrap[0]).toBe('--unshare-all');
  expect(bwrap.includes('--share-net')).toBe(policy.network);
  for (const op of ['network-outbound', 'network-inbound', 'network-bind']) expect([op, sbplDecide(profile, params, op)]).toEqual([op, policy.network ? 'allow' : 'deny']);
}

describe('one sandbox policy, rendered for bubblewrap and Seatbelt', () => {
  let base: string;
  let repo: string;
  beforeAll(async () => {
    base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-policy-')));
    repo = path.join(base, 'repo');
    await fs.mkdir(path.join(repo, 'src'), { recursive: true });
    const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...a], { cwd: repo });
    git('init', '-q', '-b', 'main');
    await fs.writeFile(path.join(repo, 'src', 'a.txt'), 'a\n');
    git('add', '-A');
    git('commit', '-qm', 'first');
  });
  afterAll(() => fs.rm(base, { recursive: true, force: true }));

  it('a plain root, with and without the network and extra read-only paths: both renderings agree with the policy', () => {
    for (const options of [{}, { network: true }, { readOnly: [path.join(base, 'server')] }]) {
      const policy = sandboxPolicy(path.join(base, 'root'), options);
      holdRenderings(policy, renderBwrap(policy), renderSeatbelt(policy));
    }
  });

  it("a worktree's git entries (sandbox-git.ts) are in both: its admin dir and object dirs writable, refs and config read-only", async () => {
    const wt = await createWorktree(repo, 'policy-git', 'policy test');
    for (const root of [wt.path, path.join(wt.path, 'src')]) {
      const policy = sandboxPolicy(root);
      holdRenderings(policy, renderBwrap(policy), renderSeatbelt(policy));
      const common = path.join(repo, '.git');
      const { profile, params } = renderSeatbelt(policy);
      const bwrap = renderBwrap(policy);
      for (const [p, want] of [
        [path.join(common, 'objects', 'ab', 'obj'), 'rw'],
        [path.join(common, 'worktrees', path.basename(wt.path), 'index'), 'rw'],
        [path.join(common, 'refs', 'heads', 'main'), 'ro'],
        [path.join(common, 'config'), 'ro'],
        [path.join(common, 'objects', 'pack', 'x.pack'), 'ro'],
        [path.join(common, 'hooks', 'pre-commit'), 'absent'],
        [path.join(repo, 'src', 'a.txt'), 'absent'],
      ] as const) {
        expect([p, bwrapAccess(bwrap, p), sbplAccess(profile, params, p)]).toEqual([p, want, want]);
      }
    }
  });

  it('the macOS policy: system dirs read-only, the root (and its .tmp) writable, /dev/null writable, home and /tmp not', () => {
    const root = '/Users/dev/project';
    const policy = sandboxPolicy(root, {}, 'darwin');
    const { profile, params } = renderSeatbelt(policy);
    holdRenderings(policy, renderBwrap(policy), { profile, params });
    const access = (p: string) => sbplAccess(profile, params, p);
    expect(['/usr/bin/git', '/bin/bash', '/System/Library/x', '/private/etc/hosts', '/Library/Developer/CommandLineTools/usr/bin/git'].map(access)).toEqual(['ro', 'ro', 'ro', 'ro', 'ro']);
    expect([`${root}/a.txt`, `${root}/.tmp/x`].map(access)).toEqual(['rw', 'rw']);
    expect(['/Users/dev/.ssh/id_rsa', '/Users/dev/other', '/private/tmp/x', '/private/var/folders/x', '/private/etc/master.passwd'].map(access)).toEqual(['absent', 'absent', 'absent', 'absent', 'absent']);
    expect(sbplDecide(profile, params, 'file-write-data', '/dev/null')).toBe('allow');
    expect(sbplDecide(profile, params, 'file-write-data', '/dev/disk0')).toBe('deny');
    expect(sbplDecide(profile, params, 'file-read-metadata', '/Users/dev')).toBe('allow'); // the path resolves …
    expect(sbplDecide(profile, params, 'file-read-data', '/Users/dev')).toBe('deny'); // … its listing is not readable
  });

  it('paths never enter the profile text: quotes, backslashes and parentheses travel as -D parameters', () => {
    const root = path.join(base, 'we"ird\\ (dir); "x\\"');
    const policy = sandboxPolicy(root, { readOnly: [path.join(base, 'ro ")(allow default)')] });
    const { profile, params } = renderSeatbelt(policy);
    expect(profile).not.toContain(base);
    expect(() => readSexps(profile)).not.toThrow();
    holdRenderings(policy, renderBwrap(policy), { profile, params });
    const args = seatbeltArgs(policy);
    expect(args.slice(0, 2)).toEqual(['-p', profile]);
    expect(args.at(-1)).toBe('--');
    expect(args).toContain(`-D${Object.keys(params).find((k) => params[k] === root)}=${root}`);
    expect(sbplAccess(profile, params, `${root}/f`)).toBe('rw');
    expect(sbplAccess(profile, params, `${base}/ro ")(allow default)/f`)).toBe('ro');
  });

  it('the checks catch a broken rendering: a network left open, a read-only path made writable, an unbalanced profile', () => {
    const policy = sandboxPolicy(path.join(base, 'root'), { readOnly: ['/srv/data'] });
    const good = renderSeatbelt(policy);
    const bwrap = renderBwrap(policy);
    expect(() => holdRenderings(policy, bwrap, good)).not.toThrow();
    const tampered = (profile: string): SeatbeltProfile => ({ ...good, profile });
    expect(() => holdRenderings(policy, bwrap, tampered(good.profile.replace('(deny network*)', '(allow network*)')))).toThrow(/network-outbound/);
    expect(() => holdRenderings(policy, bwrap, tampered(good.profile.replace('(allow file-read* (subpath', '(allow file-read* file-write* (subpath')))).toThrow(/"seatbelt": "rw"/);
    expect(() => holdRenderings(policy, bwrap, tampered(`${good.profile})`))).toThrow(/unbalanced/);
    expect(() => holdRenderings(policy, bwrap, tampered(good.profile.replace(/\)\s*$/, '')))).toThrow(/missing '\)'/);
    expect(() => holdRenderings(policy, bwrap.filter((a) => a !== '--unshare-all'), good)).toThrow();
  });
});

describe('choosing the confinement by platform', () => {
  it('Seatbelt on macOS, bubblewrap elsewhere; the environment is the same minimal one, with the private tmp under the root on macOS', () => {
    expect(defaultConfinement('darwin')).toBe('seatbelt');
    expect(defaultConfinement('linux')).toBe('bwrap');
    process.env.FH_POLICY_SECRET = 'worker-secret';
    try {
      const mac = sandboxEnv('/Users/dev/p', {}, 'darwin');
      expect(mac).toEqual({ ...sandboxEnv('/Users/dev/p', {}, 'linux'), TMPDIR: '/Users/dev/p/.tmp' });
      expect(JSON.stringify(mac)).not.toContain('worker-secret');
    } finally {
      delete process.env.FH_POLICY_SECRET;
    }
  });

  it('without sandbox-exec (this Linux machine) seatbelt is SANDBOX_UNAVAILABLE, saying what to do', () => {
    expect(probeSeatbelt()).toEqual({ ok: false, reason: 'sandbox-exec (macOS Seatbelt) is not available at /usr/bin/sandbox-exec' });
    expect(() => confinementArgv('seatbelt', '/tmp')).toThrow(SandboxUnavailableError);
    expect(() => confinementArgv('seatbelt', '/tmp')).toThrow(/macOS has sandbox-exec built in.*wrapper: 'none'/s);
    // Asked for by name, it fails at worker start (as 'bwrap' does), not at the first bash call.
    expect(() => resolveToolSandbox({ wrapper: 'seatbelt' })).toThrow(SandboxUnavailableError);
    expect(resolveToolSandbox({}).confinement).toBe(defaultConfinement());
  });

  it("'seatbelt' runs the command as sandbox-exec -p <profile> -D… -- bash -c … (a recording stand-in for sandbox-exec)", async () => {
    const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'fh-fake-sbx-')));
    const fake = path.join(dir, 'sandbox-exec');
    const log = path.join(dir, 'argv.json');
    // Records its arguments, then runs what follows `--`: it checks the wiring, it confines nothing.
    await fs.writeFile(fake, `#!/usr/bin/env node\nrequire('fs').appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + '\\n');\nconst a = process.argv.slice(2); const r = require('child_process').spawnSync(a[a.indexOf('--') + 1], a.slice(a.indexOf('--') + 2), { stdio: 'inherit' }); process.exit(r.status ?? 1);\n`, { mode: 0o755 });
    const root = path.join(dir, 'root');
    await fs.mkdir(root);
    process.env.FH_SANDBOX_EXEC_PATH = fake;
    try {
      const child: ChildProcess = confinedSpawn('bash', ['-c', 'echo "tmp=$TMPDIR"'], { root, confinement: 'seatbelt', env: sandboxEnv(root, {}, 'darwin'), stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      expect(await new Promise((r) => child.on('close', r))).toBe(0);
      expect(out).toBe(`tmp=${root}/.tmp\n`);
      const argv = JSON.parse((await fs.readFile(log, 'utf8')).trim().split('\n').at(-1)!) as string[];
      const policy = sandboxPolicy(root, {}, 'darwin');
      expect(argv).toEqual([...seatbeltArgs(policy), 'bash', '-c', 'echo "tmp=$TMPDIR"']);
      expect(await fs.readFile(path.join(root, '.tmp', '.gitignore'), 'utf8')).toBe('*\n'); // a worktree's finishing git add -A skips it
    } finally {
      delete process.env.FH_SANDBOX_EXEC_PATH;
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
