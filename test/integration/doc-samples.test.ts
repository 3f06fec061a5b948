/**
 * Every code sample of README.md and docs/*.md compiles and runs as written (see
 * test/support/doc-samples.ts for the annotations). TypeScript samples are compiled with tsc in
 * projects of their own (CommonJS, or ES modules for `*-esm`) against the built package, with the
 * tsconfig docs/typescript.md gives for that module system, and the runnable
 * ones run with Node against a scripted fake Anthropic server and the integration run's Temporal dev
 * server. Bash blocks may only use npm scripts that exist, `node scripts/<x>.js <sub>` as the script documents it,
 * and `fh` commands and options the CLI accepts.
 *
 * A failure names the Markdown file and line, the project and file, and the compiler or runtime error.
 */
import { FH_SEARCH_ATTRIBUTES } from '../../src/wire/search-attributes';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { FakeAnthropicServer, say, callTools, type FakeStep } from '@fabric-harness/sdk/testing';
import {
  collectSamples,
  compileProject,
  docFiles,
  runFh,
  runProject,
  toMarkdownLocations,
  where,
  writeProject,
  ROOT,
} from '../support/doc-samples';

const SUMMARIZE_MARKER = '[fabric-harness:summarize]';

/**
 * What the model answers, per project, in the order its mains and workers ask (summarisation requests
 * are answered by a route). A project with runnable files and no script here fails: the script is part
 * of the sample's test.
 */
const SCRIPTS: Record<string, () => FakeStep[]> = {
  'calc-cjs': () => [
    // inline.ts
    callTools({ name: 'add', input: { a: 2, b: 3 } }),
    say('5'),
    // client.ts (on Temporal)
    callTools({ name: 'add', input: { a: 2, b: 3 } }),
    say('5'),
  ],
  'approvals-cjs': () => [
    // approvals.ts (docs/agents.md): the call that waits for onApproval, then the answer
    callTools({ name: 'deploy', input: { service: 'api' } }),
    say('Deployed.'),
  ],
  'prompts-cjs': () => [
    // client.ts (docs/agents.md): the task, then the prompt sent while the agent serves
    say('5'),
    say('Still 5.'),
  ],
  'inline-sessions-cjs': () => [
    // chat.ts: the first session's prompt, then the resumed one's
    say('7'),
    say('11'),
  ],
  'sessions-cjs': () => [
    // session.ts (on Temporal): the write that waits for approval, then the answer after it ran. The
    // session has a title from the start, so no title request reaches the fake.
    callTools({ name: 'write_file', input: { path: 'notes.txt', content: 'hello' } }),
    say('Wrote notes.txt.'),
  ],
  'flows-cjs': () => [
    // flow.ts: the plan node's prompt
    say('Tag main as v1.2 once the checks are green.'),
  ],
  'ecosystem-cjs': () => [
    // inline.ts: the lead checks the MCP server's notes, hands a task to the researcher (a sub-agent), answers
    callTools({ name: 'notes__lookup', input: { topic: 'temporal' } }),
    callTools({ name: 'researcher', input: { task: 'What does Temporal do, in one line?' } }),
    say('It runs workflows durably.'),
    say('Temporal runs workflows durably.'),
    // enhance.ts: the small model's rewrite
    say('Make the retry in fetchOrders (src/orders.ts) try longer before giving up.'),
  ],
  // The README's samples in an ES module project (docs/typescript.md): the same answers as in CommonJS.
  'calc-esm': () => SCRIPTS['calc-cjs']!(),
  'sessions-esm': () => SCRIPTS['sessions-cjs']!(),
};

/**
 * A command's words as the checks read them: leading `VAR=value` assignments and `npx` dropped
 * (`ANTHROPIC_API_KEY=… npx fh run …` is checked as `fh run …`).
 */
function commandWords(command: string): string[] {
  const words = command.split(/\s+/);
  while (words.length > 1 && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) words.shift();
  if (words[0] === 'npx') words.shift();
  return words;
}

const collected = collectSamples(docFiles());
const projects = [...collected.projects.values()];

describe('README and docs samples', () => {
  it('every ts/js block is a sample of a project, a declared fragment (with a reason) or a product-doc seed', () => {
    expect(collected.problems).toEqual([]);
    expect(projects.length).toBeGreaterThan(0);
  });

  it('seed blocks name files that exist in test/seeds/ (their text is checked by seeds.test.ts)', () => {
    const missing = collected.seeds.map((b) => ({ at: where(b), file: b.annotation!.attrs.value })).filter((s) => !existsSync(path.join(ROOT, s.file)));
    expect(missing).toEqual([]);
  });

  it('bash blocks use npm scripts that exist and fh commands and options the CLI accepts', async () => {
    const pkg = JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8'));
    const problems: string[] = [];
    const commands = collected.bash.flatMap((block) =>
      block.code.split('\n').flatMap((text, i) =>
        text
          .replace(/\s#.*$/, '')
          .split('&&')
          .map((c) => c.trim())
          .filter(Boolean)
          .map((command) => ({ at: `${block.file}:${block.line + 1 + i}`, command, words: commandWords(command) })),
      ),
    );
    // Each `fh <sub> --help` once, four at a time: each is a Node start-up, and twenty at once on a loaded
    // 2-core machine ran past runFh's timeout (every one "failed" with nothing on stderr).
    const subs = [...new Set(commands.filter((c) => c.words[0] === 'fh').map((c) => c.words[1]))];
    const helps = new Map<string, Awaited<ReturnType<typeof runFh>>>();
    for (let i = 0; i < subs.length; i += 4) {
      for (const [sub, res] of await Promise.all(subs.slice(i, i + 4).map(async (sub) => [sub, await runFh([sub!, '--help'])] as const))) helps.set(sub!, res);
    }
    for (const { at, command, words } of commands) {
      if (words[0] === 'npm') {
        const script = words[1] === 'run' ? words[2] : words[1];
        if (!['ci', 'install', 'pack'].includes(script) && !pkg.scripts?.[script]) problems.push(`${at}: \`${command}\`: package.json has no script "${script}"`);
      } else if (words[0] === 'fh') {
        const help = helps.get(words[1])!;
        if (help.code !== 0) problems.push(`${at}: \`${command}\`: \`fh ${words[1]} --help\` fails (exit ${help.code}): ${help.stderr.trim()}`);
        for (const flag of words.filter((w) => w.startsWith('--'))) {
          if (!help.stdout.includes(flag.split('=')[0])) problems.push(`${at}: \`${command}\`: \`fh ${words[1]}\` has no option ${flag}`);
        }
      } else if (words[0] === 'tsx') {
        // `npx tsx inline.ts`: a file some sample project has.
        if (!projects.some((p) => p.files.some((f) => f.name === words[1]))) problems.push(`${at}: \`${command}\`: no sample is named ${words[1]}`);
      } else if (words[0] === 'node' && /^scripts\/[\w-]+\.js$/.test(words[1] ?? '')) {
        // A project script: it exists, its usage comment shows this subcommand, and it knows each option.
        const file = path.join(ROOT, words[1]!);
        const text = existsSync(file) ? await fs.readFile(file, 'utf8') : undefined;
        if (!text) problems.push(`${at}: \`${command}\`: ${words[1]} does not exist`);
        else if (words[2] && !text.includes(`node ${words[1]} ${words[2]}`)) problems.push(`${at}: \`${command}\`: ${words[1]} documents no subcommand '${words[2]}'`);
        else for (const flag of words.filter((w) => w.startsWith('--'))) if (!text.includes(flag.split('=')[0]!)) problems.push(`${at}: \`${command}\`: ${words[1]} has no option ${flag}`);
      } else if (words.slice(0, 4).join(' ') === 'temporal operator search-attribute create') {
        // The attributes a namespace needs: each line must create one of ours, with its type.
        const name = words[words.indexOf('--name') + 1];
        const type = words[words.indexOf('--type') + 1];
        if (!name || FH_SEARCH_ATTRIBUTES[name] !== type) problems.push(`${at}: \`${command}\`: not one of FH_SEARCH_ATTRIBUTES with its type`);
      } else {
        problems.push(`${at}: \`${command}\`: unknown command; teach test/integration/doc-samples.test.ts to check it or declare the block a fragment`);
      }
    }
    expect(problems).toEqual([]);
  });

  describe.each(projects.map((p) => [p.name, p] as const))('project %s', (name, project) => {
    const runnable = project.files.some((f) => f.role === 'main' || f.role === 'worker');
    let compiled = false;

    it(`compiles (${project.esm ? 'ES module' : 'CommonJS'}: ${project.files.map((f) => f.name).join(', ')})`, async () => {
      expect(existsSync(path.join(ROOT, 'dist/index.js'))).toBe(true); // `npm test` builds first (pretest)
      await writeProject(project);
      const r = await compileProject(project);
      const errors = toMarkdownLocations(project, `${r.stdout}${r.stderr}`).trim();
      expect(errors).toBe('');
      expect(r.code).toBe(0);
      // And with skipLibCheck: false (TypeScript's own default), with the two changes docs/typescript.md
      // names for Temporal's declarations there (@types/ms installed; exactOptionalPropertyTypes off).
      const checked = await compileProject(project, ['--skipLibCheck', 'false', '--exactOptionalPropertyTypes', 'false', '--noEmit']);
      expect(toMarkdownLocations(project, `${checked.stdout}${checked.stderr}`).trim()).toBe('');
      compiled = true;
    });

    if (runnable) it('runs: its workers serve, its mains exit 0 with the output they promise', async () => {
      expect(compiled).toBe(true);
      const script = SCRIPTS[name];
      expect({ project: name, hasScript: Boolean(script) }).toEqual({ project: name, hasScript: true });
      const fake = await FakeAnthropicServer.start({
        script: script(),
        route: (req) => (String(req.body?.system ?? '').startsWith(SUMMARIZE_MARKER) ? say('## Goal\nAdd numbers.\n## Progress\nAdded 2 and 3.') : undefined),
      });
      try {
        const report = await runProject(project, {
          anthropicBaseURL: fake.url,
          temporalAddress: process.env.FH_TEST_TEMPORAL_ADDRESS,
          temporalNamespace: process.env.FH_TEST_TEMPORAL_NAMESPACE,
        });
        expect(report.failures.join('\n')).toBe('');
        expect({ unusedScriptSteps: fake.remaining() }).toEqual({ unusedScriptSteps: 0 });
      } finally {
        await fake.stop();
      }
    });
  });
});
