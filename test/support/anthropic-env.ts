/**
 * Points the Anthropic client of in-process runs at a fake server through the environment, and puts the
 * environment back afterwards (other test files in the same worker must not inherit the fake's URL).
 */
export interface SavedAnthropicEnv {
  /** Sets ANTHROPIC_BASE_URL to `url` and a test API key. */
  pointAt(url: string): void;
  /** Restores both variables as they were when this was created (unset ones are deleted). */
  restore(): void;
}

export function savedAnthropicEnv(): SavedAnthropicEnv {
  const saved = { ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL: process.env.ANTHROPIC_BASE_URL };
  return {
    pointAt(url) {
      process.env.ANTHROPIC_API_KEY = 'test-key';
      process.env.ANTHROPIC_BASE_URL = url;
    },
    restore() {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    },
  };
}
