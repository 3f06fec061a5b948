/**
 * The AI SDK's own client code (`ai`, ESM only) for tests that run under jest's CommonJS loader:
 * bundled once per process with esbuild into a CommonJS file and required. Nothing of it is changed.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { build } from 'esbuild';

export interface AiSdk {
  DefaultChatTransport: new (options: { api: string; fetch: (url: string | URL | Request, init?: RequestInit) => Promise<Response> }) => {
    sendMessages(options: { chatId: string; messages: unknown[]; trigger: 'submit-message'; messageId: undefined; abortSignal: undefined }): Promise<ReadableStream<{ type: string }>>;
    reconnectToStream(options: { chatId: string }): Promise<ReadableStream<{ type: string }> | null>;
  };
  readUIMessageStream(options: { stream: ReadableStream<unknown>; onError?: (e: unknown) => void }): AsyncIterable<UIMessage>;
}

export interface UIMessage {
  id: string;
  role: string;
  parts: Array<{ type: string; text?: string; state?: string; toolCallId?: string; toolName?: string; input?: unknown; output?: unknown; errorText?: string; approval?: { id: string; approved?: boolean; reason?: string } }>;
}

let loaded: Promise<AiSdk> | undefined;

export function loadAiSdk(): Promise<AiSdk> {
  return (loaded ??= (async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fh-ai-sdk-'));
    const out = path.join(dir, 'ai.cjs');
    await build({
      stdin: { contents: "export { DefaultChatTransport, readUIMessageStream } from 'ai';", resolveDir: path.resolve(__dirname, '../..'), loader: 'js' },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile: out,
      logLevel: 'silent',
    });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sdk = require(out) as AiSdk;
    await fs.rm(dir, { recursive: true, force: true }); // loaded: the file is not needed again
    return sdk;
  })());
}
