/**
 * Signatures. The real API signs thinking blocks (ThinkingBlock.signature), encrypts redacted thinking
 * (RedactedThinkingBlock.data) and signs compaction summaries (BetaCompactionBlock.signature); all are
 * opaque to clients. The fake's are deterministic (same text → same signature, across runs), so scripted
 * tests are reproducible, and verifiable, so a modified block is caught exactly as the API catches it.
 */
import { createHash } from 'node:crypto';

const SIGNING_KEY = 'fake-anthropic/v1';
const mac = (kind: string, text: string) => createHash('sha256').update(`${SIGNING_KEY}\0${kind}\0${text}`).digest('base64url');

export function signThinking(thinking: string): string {
  return `fake_sig_${mac('thinking', thinking)}`;
}
export function verifyThinking(thinking: string, signature: string): boolean {
  return signature === signThinking(thinking);
}
/** Opaque `data` for a redacted_thinking block (the payload is hidden but still authenticated). */
export function sealRedactedThinking(payload: string): string {
  const body = Buffer.from(payload, 'utf8').toString('base64url');
  return `fake_redacted_${body}.${mac('redacted', body)}`;
}
export function verifyRedactedThinking(data: string): boolean {
  const m = /^fake_redacted_([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]+)$/.exec(data);
  return m !== null && m[2] === mac('redacted', m[1]!);
}
export function signCompaction(content: string): string {
  return `fake_csig_${mac('compaction', content)}`;
}
