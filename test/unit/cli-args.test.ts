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
