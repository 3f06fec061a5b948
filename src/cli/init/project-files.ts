/** package.json, fake.json, README.md and .gitignore of a new project. */
import type { ModuleKind } from './tsconfig';

export interface PackageJsonInput {
  name: string;
  kind: ModuleKind;
  /** This SDK's version: the project depends on the SDK that made it. */
  sdkVersion: string;
  /** The Temporal peer dependencies of this SDK, with the ranges it names. */
  temporal: Record<string, string>;
  /** typescript and @types/node: the ranges this SDK builds with (@types/node 24 or less: docs/typescript.md says why). */
  typescript: string;
  typesNode: string;
}

export function packageJson(p: PackageJsonInput): string {
  const pkg = {
    name: p.name,
    version: '0.1.0',
    private: true,
    ...(p.kind === 'esm' ? { type: 'module' } : {}),
    scripts: {
      dev: 'node scripts/dev.mjs',
      start: 'tsx src/client.ts',
      test: 'tsx --test src/agent.test.ts',
      build: 'tsc',
      typecheck: 'tsc --noEmit',
    },
    dependencies: { '@fabric-harness/sdk': `^${p.sdkVersion}`, ...p.temporal },
    devDependencies: { '@types/node': p.typesNode, tsx: '^4.20.0', typescript: p.typescript },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** The script `fh fake` plays in `npm run dev` without an API key: one tool call, then the answer. */
export const FAKE_SCRIPT = `${JSON.stringify([{ tool: 'add', input: { a: 2, b: 3 } }, '2 + 3 = 5 (a scripted reply from fh fake, not a model)'])}\n`;

export const readme = (name: string): string => `# ${name}

An agent with a tool (src/agents.ts) that runs as a durable Temporal workflow ([@fabric-harness/sdk](https://www.npmjs.com/package/@fabric-harness/sdk)).
\`npm run dev\` starts a Temporal dev server, the worker, and the scripted fake model (\`fake.json\`) when ANTHROPIC_API_KEY is unset.
\`npm start\` (another terminal) runs the agent and prints its reply; \`npm test\` runs it inline against the fake.
`;

export const GITIGNORE = 'node_modules/\ndist/\n.fh/\n';
