/**
 * The tsconfig `fh init` writes: exactly the one docs/typescript.md documents for the module system
 * (test/unit/cli-init.test.ts compares them, so the scaffold and the doc cannot drift).
 */
export type ModuleKind = 'esm' | 'cjs';

export function tsconfig(kind: ModuleKind): string {
  const config = {
    compilerOptions: {
      module: 'nodenext',
      target: 'esnext',
      types: ['node'],
      sourceMap: true,
      declaration: true,
      declarationMap: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      strict: true,
      // With it, `import` in a file that compiles to CommonJS is an error (TS1286): docs/typescript.md.
      verbatimModuleSyntax: kind === 'esm',
      isolatedModules: true,
      noUncheckedSideEffectImports: true,
      moduleDetection: 'force',
      skipLibCheck: true,
      rootDir: 'src',
      outDir: 'dist',
    },
    include: ['src'],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}
