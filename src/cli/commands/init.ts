/**
 * `fh init [dir]`: a new project that runs an agent on Temporal from the first `npm run dev`, with or
 * without an API key. It never overwrites a file silently: a non-empty directory needs --force.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { flag, str, type Parsed } from '../args';
import type { Command, Io } from '../context';
import { usage } from '../errors';
import { projectFiles, type SdkManifest } from '../init/files';

/** npm's rules for a package name: lower case, URL-safe, optionally scoped, at most 214 characters. */
const PACKAGE_NAME = /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

export const initCommand: Command = {
  name: 'init',
  summary: 'create a project: an agent with a tool, a worker, a client, a test, and `npm run dev`',
  usage: ['init [dir] [--cjs] [--name <package>] [--force]'],
  description:
    'Writes package.json (depending on this version of the SDK), the tsconfig docs/typescript.md gives, src/agents.ts,\n' +
    'src/worker.ts, src/client.ts, src/agent.test.ts, scripts/dev.mjs, fake.json, README.md and .gitignore into dir\n' +
    '(default: the current directory). `npm run dev` starts a Temporal dev server (unless TEMPORAL_ADDRESS is set), the\n' +
    'worker, and `fh fake --script fake.json --loop` when ANTHROPIC_API_KEY is unset; `npm start` runs the agent.\n' +
    'A directory that is not empty is refused unless --force, which replaces the files listed.',
  connects: false,
  options: {
    cjs: { type: 'boolean', help: 'a CommonJS project (default: an ES module project, "type": "module")' },
    name: { type: 'string', value: '<package>', help: "the package name (default: the directory's name)" },
    force: { type: 'boolean', help: 'write into a directory that is not empty, replacing the files of the same names' },
  },
  examples: ['fh init my-agent', 'fh init my-agent --cjs --name @acme/my-agent', 'npx @fabric-harness/sdk init my-agent   # without installing first'],
  run: (p, io) => runInit(p, io),
};

function sdkManifest(): SdkManifest {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../../../package.json') as SdkManifest;
}

/** The directory's name as a package name: lower case, other characters as dashes. */
function nameFrom(dir: string): string {
  const name = path.basename(dir).toLowerCase().replace(/[^a-z0-9-._~]+/g, '-').replace(/^[-._]+/, '');
  return name || 'fh-agent';
}

async function entries(dir: string): Promise<string[] | undefined> {
  try {
    return await fs.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') throw usage(`${dir} is a file, not a directory; name a new or empty directory`);
    throw err;
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.lstat(file).then(() => true, () => false);
}

async function runInit(p: Parsed, io: Io): Promise<number> {
  if (p.positionals.length > 1) throw usage(`fh init takes one directory, got ${p.positionals.length}: ${p.positionals.join(' ')}`);
  const given = p.positionals[0] ?? '.';
  const dir = path.resolve(given);
  const name = str(p, 'name') ?? nameFrom(dir);
  if (name.length > 214 || !PACKAGE_NAME.test(name)) {
    throw usage(`--name '${name}' is not a valid npm package name (lower case letters, digits, - . _ ~, optionally @scope/); pass --name <package>`);
  }
  const kind = flag(p, 'cjs') ? 'cjs' : 'esm';
  const files = projectFiles(name, kind, sdkManifest());

  const present = await entries(dir);
  const replaced: string[] = [];
  for (const file of Object.keys(files)) if (present && (await exists(path.join(dir, file)))) replaced.push(file);
  if (present && present.length > 0 && !flag(p, 'force')) {
    const clash = replaced.length ? `it would overwrite ${replaced.join(', ')}` : 'none of its files would be overwritten';
    throw usage(`${given} is not empty (${clash}); pick a new directory, or pass --force to write into it${replaced.length ? ' and replace those files' : ''}`);
  }

  for (const [file, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await fs.writeFile(path.join(dir, file), text);
  }
  const rel = path.relative(process.cwd(), dir);
  const cd = rel ? `cd ${rel.includes(' ') ? JSON.stringify(rel) : rel} && ` : '';
  io.out(
    [
      `Created ${rel || '.'} (${kind === 'esm' ? 'an ES module' : 'a CommonJS'} project${name === path.basename(dir) ? '' : `, package ${name}`}): ` +
        `an agent with a tool, a worker, a client, a test.${replaced.length ? ` Replaced: ${replaced.join(', ')}.` : ''}`,
      'Next:',
      `  ${cd}npm install`,
      '  npm run dev    # Temporal dev server + worker (+ the scripted fake model while ANTHROPIC_API_KEY is unset)',
      '  npm start      # in another terminal: the agent runs as a workflow and prints its reply',
    ].join('\n'),
  );
  return 0;
}
