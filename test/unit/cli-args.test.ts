/**
 * `fh`'s option parsing: a misspelt option is a usage error (exit 2) that names the option it most likely
 * meant, as the SDK's own options do (`fh run --inptu` said only "unknown option").
 */
import { parse, CONNECTION_OPTIONS } from '../../src/cli/args';

const RUN_OPTIONS = { input: { type: 'string' as const, help: 'the input' }, 'workflow-id': { type: 'string' as const, help: 'id' }, ...CONNECTION_OPTIONS };

function usageMessage(argv: string[]): string {
  try {
    parse(argv, RUN_OPTIONS, 'run');
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('fh option parsing', () => {
  it('a misspelt option names the one it most likely meant', () => {
    expect(usageMessage(['calculator', '--inptu', '{}'])).toBe(
      "unknown option '--inptu' (fh run); did you mean --input? run `fh run --help` for its options",
    );
    expect(usageMessage(['--workflow-di', 'x'])).toContain('did you mean --workflow-id?');
    expect(usageMessage(['--namespce', 'x'])).toContain('did you mean --namespace?');
  });

  it('an option with no near name gets no guess', () => {
    const msg = usageMessage(['--bogus']);
    expect(msg).toContain("unknown option '--bogus'");
    expect(msg).not.toContain('did you mean');
  });

  it('a well-spelt option parses', () => {
    expect(parse(['calculator', '--input', '{}'], RUN_OPTIONS, 'run').values.input).toBe('{}');
  });
});

describe('options that take several words (fh worker --agents a.js b.js)', () => {
  const WORKER_OPTIONS = {
    agents: { type: 'string' as const, variadic: true, help: 'modules' },
    tools: { type: 'string' as const, variadic: true, help: 'modules' },
    'task-queue': { type: 'string' as const, help: 'queue' },
    json: { type: 'boolean' as const, help: 'json' },
  };

  it('takes each word up to the next option, as the help line <module>… reads', () => {
    const p = parse(['--agents', 'a.js', 'b.js', '--tools', 't.js', 'u.js', '--task-queue', 'q', '--json'], WORKER_OPTIONS, 'worker');
    expect(p.values).toEqual({ agents: ['a.js', 'b.js'], tools: ['t.js', 'u.js'], 'task-queue': 'q', json: true });
    expect(p.positionals).toEqual([]);
  });

  it('still takes the option repeated, and leaves words after a plain option positional', () => {
    const p = parse(['--agents', 'a.js', '--agents', 'b.js', '--task-queue', 'q', 'extra'], WORKER_OPTIONS, 'worker');
    expect(p.values.agents).toEqual(['a.js', 'b.js']);
    expect(p.positionals).toEqual(['extra']);
  });

  it('an option that is not variadic keeps one word', () => {
    const p = parse(['--input', '{}', 'more'], RUN_OPTIONS, 'run');
    expect(p.values.input).toBe('{}');
    expect(p.positionals).toEqual(['more']);
  });
});

describe('--live-broker', () => {
  const { liveBrokerUrl, LIVE_BROKER_OPTION } = require('../../src/cli/context') as typeof import('../../src/cli/context');
  const url = (argv: string[]) => liveBrokerUrl(parse(argv, LIVE_BROKER_OPTION, 'worker'));

  it('takes a redis:// or rediss:// URL, else FH_LIVE_BROKER, else none', () => {
    const before = process.env.FH_LIVE_BROKER;
    try {
      delete process.env.FH_LIVE_BROKER;
      expect(url([])).toBeUndefined();
      expect(url(['--live-broker', 'rediss://cache:6380'])).toBe('rediss://cache:6380');
      process.env.FH_LIVE_BROKER = 'redis://127.0.0.1:6379';
      expect(url([])).toBe('redis://127.0.0.1:6379');
    } finally {
      if (before === undefined) delete process.env.FH_LIVE_BROKER;
      else process.env.FH_LIVE_BROKER = before;
    }
  });

  it('refuses anything else at once, naming the flag', () => {
    expect(() => url(['--live-broker', 'localhost:6379'])).toThrow("--live-broker must be a redis:// or rediss:// URL, got 'localhost:6379'");
  });

  it('without the redis package, refuses the flag at once (a usage error naming it and what to install), rather than falling back to Temporal for good', () => {
    jest.isolateModules(() => {
      jest.doMock('redis', () => {
        throw Object.assign(new Error("Cannot find module 'redis'"), { code: 'MODULE_NOT_FOUND' });
      });
      const isolated = require('../../src/cli/context') as typeof import('../../src/cli/context');
      const { CliError, EXIT } = require('../../src/cli/errors') as typeof import('../../src/cli/errors');
      const err = (() => {
        try {
          isolated.liveBrokerUrl(parse(['--live-broker', 'redis://127.0.0.1:6379'], LIVE_BROKER_OPTION, 'chat'));
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(CliError);
      expect(err).toMatchObject({ exitCode: EXIT.USAGE, message: expect.stringMatching(/^--live-broker needs the redis package.*npm install redis/) });
      // Without the flag nothing loads the package, so every other command runs without it.
      expect(isolated.liveBrokerUrl(parse([], LIVE_BROKER_OPTION, 'chat'))).toBeUndefined();
    });
  });
});

describe('--session-cache-memory (fh worker)', () => {
  const { sessionCacheMemoryFrom, workerCommand } = require('../../src/cli/commands/worker') as typeof import('../../src/cli/commands/worker');
  const value = (argv: string[]) => sessionCacheMemoryFrom(parse(argv, workerCommand.options, 'worker'));

  it('takes a size with a unit (bytes), a bare byte count, or a share up to 1; else FH_SESSION_CACHE_MEMORY; else none (createWorker\'s default)', () => {
    const before = process.env.FH_SESSION_CACHE_MEMORY;
    try {
      delete process.env.FH_SESSION_CACHE_MEMORY;
      expect(value([])).toBeUndefined();
      expect(value(['--session-cache-memory', '4GB'])).toBe(4e9);
      expect(value(['--session-cache-memory', '2GiB'])).toBe(2 ** 31);
      expect(value(['--session-cache-memory', '1.5gb'])).toBe(1.5e9);
      expect(value(['--session-cache-memory', '0.5GB'])).toBe(5e8);
      expect(value(['--session-cache-memory', '512 MiB'])).toBe(512 * 2 ** 20);
      expect(value(['--session-cache-memory', '3000000000'])).toBe(3e9);
      expect(value(['--session-cache-memory', '0.5'])).toBe(0.5);
      expect(value(['--session-cache-memory', '1'])).toBe(1);
      process.env.FH_SESSION_CACHE_MEMORY = '270MB';
      expect(value([])).toBe(270e6);
      expect(value(['--session-cache-memory', '0.3'])).toBe(0.3); // the flag wins
    } finally {
      if (before === undefined) delete process.env.FH_SESSION_CACHE_MEMORY;
      else process.env.FH_SESSION_CACHE_MEMORY = before;
    }
  });

  it.each(['lots', '4 GBs', '-1', '0', '1.5', '0.4B', ''])("refuses '%s' at once, naming the flag and what it takes", (bad) => {
    const before = process.env.FH_SESSION_CACHE_MEMORY;
    try {
      delete process.env.FH_SESSION_CACHE_MEMORY;
      expect(() => value([`--session-cache-memory=${bad}`])).toThrow(
        `--session-cache-memory must be a size (4GB, 2GiB, 3000000000 bytes) or a share of the worker's memory limit (a number in (0, 1], e.g. 0.5); got '${bad}'`,
      );
    } finally {
      if (before !== undefined) process.env.FH_SESSION_CACHE_MEMORY = before;
    }
  });
});
