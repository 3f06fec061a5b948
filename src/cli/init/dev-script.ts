/**
 * scripts/dev.mjs of a new project: `npm run dev` starts what a first run needs, in one terminal. An
 * .mjs file so it runs the same in an ES module and a CommonJS project.
 */
export const DEV_SCRIPT = `// npm run dev: a Temporal dev server (unless TEMPORAL_ADDRESS names one), the scripted fake Anthropic
// server (unless ANTHROPIC_API_KEY is set) and the worker. Ctrl-C stops them all.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import * as path from 'node:path';

const require = createRequire(import.meta.url);
const fh = path.join(path.dirname(require.resolve('@fabric-harness/sdk/package.json')), 'dist/cli/main.js');
const tsx = require.resolve('tsx/cli');
const children = [];
const env = { ...process.env };

/** Starts a process, prefixes its output, resolves with the first match of \`ready\` in its output. */
function start(name, args, ready) {
  // Each in its own process group: Ctrl-C reaches them once, from stop(), not also from the terminal (a
  // second SIGINT makes \`fh server\` exit without waiting for the Temporal server to stop).
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.push(child);
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk) => {
      for (const line of String(chunk).split('\\n').filter(Boolean)) console.log(\`[\${name}] \${line}\`);
      seen += chunk;
      const m = ready && ready.exec(seen);
      if (m) { ready = undefined; resolve(m); }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      reject(new Error(\`\${name} exited (\${code}) before it was ready\`));
      if (!stopping) stop(code ?? 1);
    });
    if (!ready) resolve(undefined);
  });
}

let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children.reverse()) if (child.exitCode === null) child.kill('SIGINT');
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined))).then(() => process.exit(code));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

try {
  if (env.TEMPORAL_ADDRESS) {
    console.log(\`dev: using the Temporal server at \${env.TEMPORAL_ADDRESS}\`);
  } else {
    const [, address, ui] = await start('server', [fh, 'server'], /address:\\s+(\\S+)[\\s\\S]*web UI:\\s+(\\S+)/);
    env.TEMPORAL_ADDRESS = address;
    console.log(\`dev: started a Temporal dev server at \${address} (Web UI: \${ui}; state in .fh/temporal.db)\`);
  }
  if (env.ANTHROPIC_API_KEY) {
    console.log('dev: the model is Claude (ANTHROPIC_API_KEY is set)');
  } else {
    const [, url] = await start('fake', [fh, 'fake', '--script', 'fake.json', '--loop', '--port', '0'], /ANTHROPIC_BASE_URL=(\\S+)/);
    Object.assign(env, { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'fake' });
    console.log(\`dev: ANTHROPIC_API_KEY is not set: started the SCRIPTED fake Anthropic server (fake.json, not a model) at \${url}\`);
  }
  await start('worker', [tsx, 'src/worker.ts'], /worker ready/);
  console.log('dev: worker started. In another terminal: npm start. Ctrl-C stops everything.');
} catch (err) {
  console.error(\`dev: \${err.message}\`);
  stop(1);
}
`;
