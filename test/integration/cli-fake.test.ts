/**
 * `fh fake` as a user runs it (the built binary): `--loop` starts the script over when its steps run out,
 * and SIGHUP reads the script file again and plays it from the first step. The replies are read through the
 * real Anthropic SDK client; with `--provider openai` / `openai-chat` the fake speaks OpenAI's Responses /
 * Chat Completions API, read through the real openai SDK.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { GoogleGenAI } from '@google/genai';
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureBuilt, FH, runFh } from '../support/fh-cli';

interface Running {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

async function startFake(args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [FH, 'fake', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fh fake printed no URL in 20 s: ${stdout} ${stderr}`)), 20_000);
    child.stdout!.on('data', (d) => {
      stdout += d;
      const m = /(?:ANTHROPIC|OPENAI|GOOGLE_GEMINI)_BASE_URL=(\S+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  return { child, url, stderr: () => stderr };
}

async function stop(r: Running): Promise<void> {
  if (r.child.exitCode !== null) return;
  const exited = new Promise((resolve) => r.child.once('exit', resolve));
  r.child.kill('SIGINT');
  await exited;
}

async function reply(client: Anthropic): Promise<string> {
  const msg = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'next' }] });
  return msg.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/** Polls the child's stderr for a line, up to 10 s (the reset is read from the file asynchronously). */
async function waitForStderr(r: Running, text: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!r.stderr().includes(text)) {
    if (Date.now() > deadline) throw new Error(`fh fake never printed '${text}': ${r.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('fh fake: looping and resetting its script', () => {
  let dir: string;
  beforeAll(async () => {
    ensureBuilt();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-fake-'));
  });

  it('--loop plays the script again when it runs out; without it the fake says the script is used up', async () => {
    const looping = await startFake(['--say', 'one', '--say', 'two', '--loop']);
    const plain = await startFake(['--say', 'one', '--say', 'two']);
    try {
      const a = new Anthropic({ apiKey: 'fake', baseURL: looping.url });
      expect([await reply(a), await reply(a), await reply(a), await reply(a), await reply(a)]).toEqual(['one', 'two', 'one', 'two', 'one']);
      const b = new Anthropic({ apiKey: 'fake', baseURL: plain.url });
      expect([await reply(b), await reply(b)]).toEqual(['one', 'two']);
      expect(await reply(b)).toMatch(/the script has no reply left/);
    } finally {
      await stop(looping);
      await stop(plain);
    }
  });

  it('SIGHUP reads the script file again and plays it from its first step', async () => {
    const file = path.join(dir, 'steps.json');
    await fs.writeFile(file, JSON.stringify(['first', 'second']));
    const fake = await startFake(['--script', file]);
    try {
      const client = new Anthropic({ apiKey: 'fake', baseURL: fake.url });
      expect(await reply(client)).toBe('first');
      await fs.writeFile(file, JSON.stringify(['edited first', 'edited second']));
      fake.child.kill('SIGHUP');
      await waitForStderr(fake, 'script reset: 2 steps from the start');
      expect(await reply(client)).toBe('edited first');
      expect(await reply(client)).toBe('edited second');
      // A script made invalid in between is refused, and the one in play goes on.
      await fs.writeFile(file, 'not json');
      fake.child.kill('SIGHUP');
      await waitForStderr(fake, 'script not reset');
      expect(fake.child.exitCode).toBeNull();
    } finally {
      await stop(fake);
    }
  });

  it('--provider openai serves the Responses API and --provider openai-chat Chat Completions, streamed to the openai SDK', async () => {
    const responses = await startFake(['--provider', 'openai', '--say', 'from responses', '--say', 'second']);
    const chat = await startFake(['--provider', 'openai-chat', '--say', 'from chat']);
    try {
      expect(responses.url).toMatch(/\/v1$/);
      const a = new OpenAI({ apiKey: 'fake', baseURL: responses.url, maxRetries: 0 });
      const stream = a.responses.stream({ model: 'gpt-5.1', input: 'next' });
      expect((await stream.finalResponse()).output_text).toBe('from responses');
      expect((await a.responses.create({ model: 'gpt-5.1', input: 'next' })).output_text).toBe('second');
      const b = new OpenAI({ apiKey: 'fake', baseURL: chat.url, maxRetries: 0 });
      const completion = await b.chat.completions.stream({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'next' }] }).finalChatCompletion();
      expect(completion.choices[0]!.message.content).toBe('from chat');
      const bad = await runFh(['fake', '--provider', 'gemini-pro'], process.env);
      expect([bad.code, bad.stderr.trim()]).toEqual([2, "fh: --provider must be one of anthropic, openai, openai-chat, google, not 'gemini-pro'"]);
    } finally {
      await stop(responses);
      await stop(chat);
    }
  }, 60_000);

  it('--provider google serves the Gemini API: the @google/genai client streams the scripted reply', async () => {
    const fake = await startFake(['--provider', 'google', '--say', 'Hello from the fake Gemini.']);
    try {
      // Jest's sandbox hides Node's fetch dispatcher from the SDK: plain fetch (the fake is a separate process).
      const ai = new GoogleGenAI({ apiKey: 'fake', httpOptions: { baseUrl: fake.url, fetch: (i, init) => fetch(i, init) } });
      let text = '';
      for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi' })) text += chunk.text ?? '';
      expect(text).toBe('Hello from the fake Gemini.');
      const after = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'again' });
      expect(after.text).toContain('script'); // the steps ran out: the fake says so, as for Anthropic
    } finally {
      await stop(fake);
    }
  });
});
