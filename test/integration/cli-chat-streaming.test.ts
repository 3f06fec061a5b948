/**
 * `fh chat` streams: the model's text is on screen while the model is still generating (the fake holds
 * the reply mid-stream at a gate), and the rest follows once it goes on; the reply is shown once. The
 * BUILT binary in a real terminal (a tmux pane on its own socket), against the integration dev server.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getSession, startSession } from '@fabric-harness/sdk/client';
import { callTools, reply, say, type FakeAnthropicServer, type FakeStep } from '@fabric-harness/sdk/testing';
import { assistant } from '../fixtures/session-agents';
import { nestingSession } from '../fixtures/ecosystem-agents';
import { startRedis } from '../support/redis';
import { startSessionFake } from '../support/session-fake';
import { startTestWorker, type TestWorker } from '../support/test-worker';
import { until } from '../support/waiting';

const ROOT = path.resolve(__dirname, '../..');
const FH = path.join(ROOT, 'dist/cli/main.js');

describe('fh chat streaming (tmux)', () => {
  let fake: FakeAnthropicServer;
  let w: TestWorker;
  const socket = path.join(os.tmpdir(), `fh-chat-stream-${process.pid}.tmux`);
  const pane = 'stream';
  const tmux = (...a: string[]) => execFileSync('tmux', ['-S', socket, ...a], { encoding: 'utf8' });
  const screen = (of = pane) => tmux('capture-pane', '-p', '-J', '-t', of, '-S', '-200');
  const shows = (what: string | RegExp, of = pane) =>
    until(`the pane to show ${what}`, async () => (typeof what === 'string' ? screen(of).includes(what) : what.test(screen(of))) || undefined).catch((err) => {
      throw new Error(`${(err as Error).message}\n--- pane ---\n${screen(of)}`);
    });

  beforeAll(async () => {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
    fake = await startSessionFake();
    w = await startTestWorker({ name: 'chat-stream', baseURL: fake.url });
  });
  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    fs.rmSync(socket, { force: true });
    await w?.stop();
    await fake?.stop();
  });

  it('prints the text as the model generates it, before the turn ends', async () => {
    const id = `chat-stream-${process.pid}-${Date.now() % 100000}`;
    await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, title: 'Streaming chat' });
    fake.enqueue(say('First half of the answer, and then the second half.', { stream: { pauseAfterDeltas: 3, gate: 'chat' } }));
    const vars = `TEMPORAL_ADDRESS='${w.t.address}' TEMPORAL_NAMESPACE='${w.t.namespace}' FH_STORE_DIR='${w.storeDir}' NO_COLOR=1`;
    tmux('new-session', '-d', '-s', pane, '-x', '120', '-y', '30', `cd '${ROOT}' && env ${vars} '${process.execPath}' '${FH}' chat ${id}; sleep 60`);
    await shows(/^you ›/m);
    tmux('send-keys', '-t', pane, '-l', 'tell me');
    tmux('send-keys', '-t', pane, 'Enter');
    await fake.paused('chat');
    // Held after 3 deltas of 8 characters: the first 24 are on screen, the turn still runs.
    await shows('First half of the answer');
    expect(screen()).not.toContain('second half');
    expect((await getSession(w.client, id).info()).processing).toBe(true);
    fake.release('chat');
    await shows(/^First half of the answer, and then the second half\.$/m);
    await until('the turn to end', async () => !(await getSession(w.client, id).info()).processing);
    expect(screen().match(/and then the second half/g)).toHaveLength(1);
    tmux('send-keys', '-t', pane, 'C-c');
    await getSession(w.client, id).end();
  }, 90_000);

  it('--live-broker: the live text comes from the broker, with Temporal asked only every --poll-ms (here 10 minutes)', async () => {
    const redis = await startRedis();
    const wb = await startTestWorker({ name: 'chat-broker', baseURL: fake.url, liveBroker: { url: redis.url } });
    const paneB = 'broker';
    try {
      const id = `chat-broker-${process.pid}-${Date.now() % 100000}`;
      await startSession(wb.client, assistant, { id, taskQueue: wb.taskQueue, title: 'Broker chat' });
      // 30 deltas of 8 characters, 100 ms apart, held before the last: a reader that asked Temporal once when
      // the call started, and next in 10 minutes, would show none of the later ones before the turn ends.
      const text = Array.from({ length: 30 }, (_, i) => `w${String(i).padStart(2, '0')}-----`).join('');
      fake.enqueue(say(text, { stream: { chunkChars: 8, delayMs: 100, pauseAfterDeltas: 29, gate: 'chat-broker' } }));
      const vars = `TEMPORAL_ADDRESS='${wb.t.address}' TEMPORAL_NAMESPACE='${wb.t.namespace}' FH_STORE_DIR='${wb.storeDir}' NO_COLOR=1`;
      tmux('new-session', '-d', '-s', paneB, '-x', '400', '-y', '30', `cd '${ROOT}' && env ${vars} '${process.execPath}' '${FH}' chat ${id} --live-broker '${redis.url}' --poll-ms 600000; sleep 60`);
      await shows(/^you ›/m, paneB);
      tmux('send-keys', '-t', paneB, '-l', 'tell me');
      tmux('send-keys', '-t', paneB, 'Enter');
      await fake.paused('chat-broker');
      await shows('w28-----', paneB); // the 29th delta, 2.8 s after the first
      expect(screen(paneB)).not.toContain('w29');
      expect((await getSession(wb.client, id).info()).processing).toBe(true);
      fake.release('chat-broker');
      await shows(new RegExp(`^${text}$`, 'm'), paneB);
      expect(screen(paneB).match(/w29-----/g)).toHaveLength(1);
      tmux('send-keys', '-t', paneB, 'C-c');
      await getSession(wb.client, id).end();
    } finally {
      await wb.stop();
      await redis.stop();
    }
  }, 90_000);

  it("shows sub-agents' messages and tool calls while they work, indented by depth and labelled, apart from the reply", async () => {
    const id = `chat-nest-${process.pid}-${Date.now() % 100000}`;
    await startSession(w.client, nestingSession, { id, taskQueue: w.taskQueue, title: 'Nesting chat' });
    fake.enqueue(
      callTools({ name: 'eco-middle', input: { task: 'find out' } }), // the session hands over
      reply({ content: ['The middle agent thinks aloud first.', { name: 'eco-helper', input: { task: 'the real work' } }], stopReason: 'tool_use' }),
      // The grandchild's reply waits at a gate: what came before it is on screen while both still run.
      { ...say('GRANDCHILD answers\nline two\nline three\nline four\nline five\nline six'), stream: { pauseAfterDeltas: 1, gate: 'chat-helper' } } as FakeStep,
      say('The helper found it.'),
      say('Done: found.'),
    );
    const vars = `TEMPORAL_ADDRESS='${w.t.address}' TEMPORAL_NAMESPACE='${w.t.namespace}' FH_STORE_DIR='${w.storeDir}' NO_COLOR=1`;
    try {
      tmux('kill-session', '-t', pane); // the previous test's pane
    } catch {
      // none
    }
    tmux('new-session', '-d', '-s', pane, '-x', '120', '-y', '40', `cd '${ROOT}' && env ${vars} '${process.execPath}' '${FH}' chat ${id}; sleep 60`);
    await shows(/^you ›/m);
    tmux('send-keys', '-t', pane, '-l', 'delegate it');
    tmux('send-keys', '-t', pane, 'Enter');
    await fake.paused('chat-helper');
    await shows(/^  \[eco-middle\] The middle agent thinks aloud first\.$/m);
    await shows(/^  \[eco-middle\] → eco-helper \{"task":"the real work"\}$/m);
    expect((await getSession(w.client, id).info()).processing).toBe(true);
    fake.release('chat-helper');
    // Two deep, and a long message cut to four lines.
    await shows(/^    \[eco-middle › eco-helper\] GRANDCHILD answers$/m);
    await shows(/^    \[eco-middle › eco-helper\] … 2 more lines$/m);
    await shows(/^Done: found\.$/m);
    expect(screen()).not.toContain('line five');
    // The sub-agents' text is never printed as the session's own (unlabelled) reply.
    expect(screen()).not.toMatch(/^The middle agent/m);
    tmux('send-keys', '-t', pane, 'C-c');
    await getSession(w.client, id).end();
  }, 90_000);

  it('/attach <file> sends the file with the next message: the model gets it as an image block', async () => {
    const id = `chat-attach-${process.pid}-${Date.now() % 100000}`;
    await startSession(w.client, assistant, { id, taskQueue: w.taskQueue, title: 'Attaching chat' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fh-attach-'));
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    fs.writeFileSync(path.join(dir, 'screen.png'), png);
    const pane2 = 'attach';
    const vars = `TEMPORAL_ADDRESS='${w.t.address}' TEMPORAL_NAMESPACE='${w.t.namespace}' FH_STORE_DIR='${w.storeDir}' NO_COLOR=1`;
    tmux('new-session', '-d', '-s', pane2, '-x', '160', '-y', '30', `cd '${dir}' && env ${vars} '${process.execPath}' '${FH}' chat ${id}; sleep 60`);
    await shows(/^you ›/m, pane2);
    tmux('send-keys', '-t', pane2, '-l', '/attach screen.png');
    tmux('send-keys', '-t', pane2, 'Enter');
    await shows('attached screen.png (image/png, 70 bytes)', pane2);
    const before = fake.requests.length;
    fake.enqueue(say('A single pixel.'));
    tmux('send-keys', '-t', pane2, '-l', 'what is on my screen?');
    tmux('send-keys', '-t', pane2, 'Enter');
    await shows('A single pixel.', pane2);
    const sent = fake.requests.slice(before).find((r) => JSON.stringify(r.body).includes('what is on my screen?'))!;
    const user = (sent.body.messages as Array<{ role: string; content: Array<{ type: string; source?: { data: string } }> }>).at(-1)!;
    expect(user.content.map((b) => b.type)).toEqual(['image', 'text']);
    expect(user.content[0]!.source!.data).toBe(png.toString('base64'));
    tmux('send-keys', '-t', pane2, 'C-c');
    await getSession(w.client, id).end();
  }, 90_000);
});
