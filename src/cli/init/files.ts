/** Every file of a new project, by path: what `fh init` writes. */
import { DEV_SCRIPT } from './dev-script';
import { FAKE_SCRIPT, GITIGNORE, packageJson, readme } from './project-files';
import { AGENTS, CLIENT, TEST, worker } from './sources';
import { tsconfig, type ModuleKind } from './tsconfig';

export type { ModuleKind };

/** What the project takes from this SDK's package.json: its version and the ranges it names. */
export interface SdkManifest {
  version: string;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

export function projectFiles(name: string, kind: ModuleKind, sdk: SdkManifest): Record<string, string> {
  const temporal = Object.fromEntries(Object.entries(sdk.peerDependencies ?? {}).filter(([n]) => n.startsWith('@temporalio/')));
  const dev = sdk.devDependencies ?? {};
  return {
    'package.json': packageJson({
      name,
      kind,
      sdkVersion: sdk.version,
      temporal,
      typescript: dev.typescript ?? 'latest',
      typesNode: dev['@types/node'] ?? '^20.19.0',
    }),
    'tsconfig.json': tsconfig(kind),
    'src/agents.ts': AGENTS,
    'src/worker.ts': worker(kind),
    'src/client.ts': CLIENT,
    'src/agent.test.ts': TEST,
    'scripts/dev.mjs': DEV_SCRIPT,
    'fake.json': FAKE_SCRIPT,
    'README.md': readme(name),
    '.gitignore': GITIGNORE,
  };
}
